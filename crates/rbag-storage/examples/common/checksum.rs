//! The checksum every rbag benchmark example uses: a wrapping sum of little-endian u64 words,
//! tail bytes added one by one. It touches every byte and costs about as much as a memcpy.

#[inline(never)]
pub fn checksum(data: &[u8]) -> u64 {
    let words = data.chunks_exact(8);
    let tail = words.remainder();
    let mut sum = words.fold(0u64, |s, w| s.wrapping_add(u64::from_le_bytes(w.try_into().unwrap())));
    for &b in tail {
        sum = sum.wrapping_add(b as u64);
    }
    sum
}
