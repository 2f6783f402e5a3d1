//! Test-only (the crate's tests, and the fuzz targets through the
//! `test-utils` feature): a small, independent reader of flattened device
//! trees (the Devicetree Specification v0.4, chapter 5), so the tests check
//! the blob itself rather than trusting the writer. It panics on anything
//! malformed.

const FDT_MAGIC: u32 = 0xd00d_feed;
const FDT_BEGIN_NODE: u32 = 1;
const FDT_END_NODE: u32 = 2;
const FDT_PROP: u32 = 3;
const FDT_NOP: u32 = 4;
const FDT_END: u32 = 9;

/// The header fields the tests look at.
#[derive(Debug)]
pub struct Header {
    pub totalsize: u32,
    pub version: u32,
    pub last_comp_version: u32,
    pub boot_cpuid_phys: u32,
}

/// One node: its name, properties in blob order, children.
#[derive(Debug, Default)]
pub struct Node {
    pub name: String,
    pub props: Vec<(String, Vec<u8>)>,
    pub children: Vec<Node>,
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn cstr(b: &[u8], at: usize) -> String {
    let end = b[at..].iter().position(|&c| c == 0).expect("NUL") + at;
    String::from_utf8(b[at..end].to_vec()).expect("UTF-8 name")
}

/// Parses `blob`; panics (failing the test) on anything malformed.
pub fn parse(blob: &[u8]) -> (Header, Node) {
    assert!(blob.len() >= 40, "shorter than a header");
    assert_eq!(be32(blob, 0), FDT_MAGIC);
    let header = Header {
        totalsize: be32(blob, 4),
        version: be32(blob, 20),
        last_comp_version: be32(blob, 24),
        boot_cpuid_phys: be32(blob, 28),
    };
    let off_struct = be32(blob, 8) as usize;
    let off_strings = be32(blob, 12) as usize;
    let off_rsvmap = be32(blob, 16) as usize;
    let size_strings = be32(blob, 32) as usize;
    let size_struct = be32(blob, 36) as usize;
    assert_eq!(header.totalsize as usize, blob.len());
    assert!(off_struct + size_struct <= blob.len());
    assert!(off_strings + size_strings <= blob.len());
    // The reservation map ends with a (0, 0) entry.
    assert_eq!(&blob[off_rsvmap..off_rsvmap + 16], &[0u8; 16]);

    let strings = &blob[off_strings..off_strings + size_strings];
    let mut pos = off_struct;
    let end = off_struct + size_struct;
    let mut stack: Vec<Node> = Vec::new();
    let mut root = None;
    while pos < end {
        let token = be32(blob, pos);
        pos += 4;
        match token {
            FDT_BEGIN_NODE => {
                let name = cstr(blob, pos);
                pos += (name.len() + 1).next_multiple_of(4);
                stack.push(Node {
                    name,
                    ..Node::default()
                });
            }
            FDT_END_NODE => {
                let node = stack.pop().expect("END_NODE without BEGIN_NODE");
                match stack.last_mut() {
                    Some(parent) => parent.children.push(node),
                    None => root = Some(node),
                }
            }
            FDT_PROP => {
                let len = be32(blob, pos) as usize;
                let nameoff = be32(blob, pos + 4) as usize;
                pos += 8;
                let value = blob[pos..pos + len].to_vec();
                pos += len.next_multiple_of(4);
                let node = stack.last_mut().expect("property outside a node");
                node.props.push((cstr(strings, nameoff), value));
            }
            FDT_NOP => {}
            FDT_END => break,
            t => panic!("unknown token {t:#x} at {pos:#x}"),
        }
    }
    assert!(stack.is_empty(), "unclosed nodes");
    (header, root.expect("no root node"))
}

impl Node {
    /// The node at `path` ("/a/b"), if any.
    pub fn at(&self, path: &str) -> Option<&Node> {
        let mut node = self;
        for part in path.split('/').filter(|p| !p.is_empty()) {
            node = node.children.iter().find(|c| c.name == part)?;
        }
        Some(node)
    }

    /// A property's raw value.
    pub fn prop(&self, name: &str) -> Option<&[u8]> {
        let mut found = self.props.iter().filter(|(n, _)| n == name);
        let value = found.next().map(|(_, v)| v.as_slice());
        assert!(found.next().is_none(), "{}: duplicate {name}", self.name);
        value
    }

    pub fn has(&self, name: &str) -> bool {
        self.prop(name).is_some()
    }

    /// A property as big-endian u32 cells.
    pub fn u32s(&self, name: &str) -> Vec<u32> {
        let v = self
            .prop(name)
            .unwrap_or_else(|| panic!("{}: no {name}", self.name));
        assert_eq!(v.len() % 4, 0, "{}: {name} is not cells", self.name);
        v.chunks(4)
            .map(|c| u32::from_be_bytes(c.try_into().unwrap()))
            .collect()
    }

    pub fn u32(&self, name: &str) -> u32 {
        let cells = self.u32s(name);
        assert_eq!(cells.len(), 1, "{}: {name} is not one cell", self.name);
        cells[0]
    }

    /// A property as pairs of cells read as u64s.
    pub fn u64s(&self, name: &str) -> Vec<u64> {
        self.u32s(name)
            .chunks(2)
            .map(|c| (u64::from(c[0]) << 32) | u64::from(c[1]))
            .collect()
    }

    /// A property as a NUL-separated string list.
    pub fn strs(&self, name: &str) -> Vec<String> {
        let v = self
            .prop(name)
            .unwrap_or_else(|| panic!("{}: no {name}", self.name));
        assert_eq!(
            v.last(),
            Some(&0),
            "{}: {name} not NUL-terminated",
            self.name
        );
        v[..v.len() - 1]
            .split(|&b| b == 0)
            .map(|s| String::from_utf8(s.to_vec()).unwrap())
            .collect()
    }

    pub fn str(&self, name: &str) -> String {
        let s = self.strs(name);
        assert_eq!(s.len(), 1, "{}: {name} is a list", self.name);
        s[0].clone()
    }
}
