//! A newc ("070701") cpio writer for initramfs images, uncompressed:
//! Linux unpacks it with no decompressor, which matters where the guest's
//! kernel code runs under an instruction emulator (an in-guest gunzip of a
//! few MiB costs tens of seconds there).

/// One archive member.
pub enum Entry<'a> {
    /// A directory with this mode (permission bits).
    Dir(&'a str, u32),
    /// A regular file with this mode and contents.
    File(&'a str, u32, &'a [u8]),
}

fn header(out: &mut Vec<u8>, ino: u32, mode: u32, size: usize, name: &str) {
    let fields = [
        ino,
        mode,
        0, // uid
        0, // gid
        1, // nlink
        0, // mtime
        size as u32,
        0, // devmajor
        0, // devminor
        0, // rdevmajor
        0, // rdevminor
        name.len() as u32 + 1,
        0, // check
    ];
    out.extend_from_slice(b"070701");
    for f in fields {
        out.extend_from_slice(format!("{f:08X}").as_bytes());
    }
    out.extend_from_slice(name.as_bytes());
    out.push(0);
    pad4(out);
}

fn pad4(out: &mut Vec<u8>) {
    while !out.len().is_multiple_of(4) {
        out.push(0);
    }
}

/// The archive of `entries`, with the trailer.
pub fn newc(entries: &[Entry<'_>]) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        let ino = i as u32 + 1;
        match e {
            Entry::Dir(name, mode) => header(&mut out, ino, 0o040000 | mode, 0, name),
            Entry::File(name, mode, data) => {
                header(&mut out, ino, 0o100000 | mode, data.len(), name);
                out.extend_from_slice(data);
                pad4(&mut out);
            }
        }
    }
    header(&mut out, 0, 0, 0, "TRAILER!!!");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_is_newc() {
        let a = newc(&[Entry::Dir("dev", 0o755), Entry::File("init", 0o755, b"abc")]);
        assert!(a.starts_with(b"070701"));
        // Header 110 bytes + "dev\0" = 114, padded to 116.
        assert_eq!(&a[110..114], b"dev\0");
        let file = &a[116..];
        assert!(file.starts_with(b"070701"));
        assert_eq!(&file[6 + 8..6 + 16], b"000081ED"); // regular file, 0755
        assert_eq!(&file[6 + 6 * 8..6 + 7 * 8], b"00000003"); // size
        assert_eq!(&file[116..119], b"abc");
        assert_eq!(a.len() % 4, 0);
        assert!(a.windows(10).any(|w| w == b"TRAILER!!!"));
    }
}
