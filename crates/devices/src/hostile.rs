//! Test-only: the stream of hostile guest accesses the device tests throw
//! at a model — any width (0 to 4096 bytes, mostly 1/2/4/8), offsets inside
//! the device, anywhere, and at the top of the address space, random data.

/// One access: where, and the bytes (a write's data; a read's buffer).
pub(crate) struct Access<'a> {
    /// Offset within the device's range (or far outside it).
    pub offset: u64,
    /// Width = `data.len()`.
    pub data: &'a mut [u8],
    /// A random word for whatever else a test wants to vary (which device,
    /// a clock value).
    pub extra: u64,
}

/// A deterministic xorshift64 generator.
pub(crate) struct Xorshift(u64);

impl Xorshift {
    pub(crate) fn new(seed: u64) -> Self {
        Self(seed.max(1))
    }

    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Call `f` with `count` hostile accesses against a device of `len` bytes.
pub(crate) fn each_access(seed: u64, len: u64, count: usize, mut f: impl FnMut(Access<'_>)) {
    let mut rng = Xorshift::new(seed);
    let mut buf = vec![0u8; 4096];
    for _ in 0..count {
        let r = rng.next();
        let width = match r % 4 {
            0 => (r >> 8) as usize % 4097,
            _ => [0, 1, 2, 4, 8][(r >> 8) as usize % 5],
        };
        let offset = match (r >> 20) % 3 {
            0 => (r >> 24) % len.max(1),
            1 => r >> 24,
            _ => u64::MAX - (r >> 60),
        };
        for b in buf[..width].iter_mut() {
            *b = rng.next() as u8;
        }
        let extra = rng.next();
        f(Access {
            offset,
            data: &mut buf[..width],
            extra,
        });
    }
}
