//! Lists written once with a per-architecture piece in the middle: the
//! pieces, one after another, as one constant array (the order is the
//! filter's: `KVM_RUN` first, and the README's tables as listed).

/// How many items `parts` hold together.
pub(crate) const fn total<T>(parts: &[&[T]]) -> usize {
    let (mut n, mut p) = (0, 0);
    while p < parts.len() {
        n += parts[p].len();
        p += 1;
    }
    n
}

/// `parts` one after another; `N` is their [`total`]. The first part must
/// not be empty (its first item fills the array before it is written).
pub(crate) const fn concat<T: Copy, const N: usize>(parts: &[&[T]]) -> [T; N] {
    let mut out = [parts[0][0]; N];
    let (mut n, mut p) = (0, 0);
    while p < parts.len() {
        let mut i = 0;
        while i < parts[p].len() {
            out[n] = parts[p][i];
            n += 1;
            i += 1;
        }
        p += 1;
    }
    assert!(n == N, "N is not the parts' total");
    out
}
