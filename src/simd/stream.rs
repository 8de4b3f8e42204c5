//! Copies into large destinations with non-temporal (streaming) stores: a batch's keys land in a
//! caller's array of hundreds of megabytes that no cache holds, and an ordinary store first
//! reads each destination line from memory (a third more memory traffic on a copy that bounds
//! pageable key generation).

/// `dst` <- `src` (equal lengths), the 16-byte-aligned middle of `dst` by streaming stores,
/// ordered before anything the thread does next (a store fence).
pub(crate) fn copy(dst: &mut [u8], src: &[u8]) {
    assert_eq!(dst.len(), src.len(), "stream::copy of unequal lengths");
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_sfence, _mm_stream_si128};
        let head = dst.as_ptr().align_offset(16).min(dst.len());
        let (d_head, d_rest) = dst.split_at_mut(head);
        let (s_head, s_rest) = src.split_at(head);
        d_head.copy_from_slice(s_head);
        let body = d_rest.len() / 16 * 16;
        let (d_body, d_tail) = d_rest.split_at_mut(body);
        let (s_body, s_tail) = s_rest.split_at(body);
        for (d, s) in d_body.chunks_exact_mut(16).zip(s_body.chunks_exact(16)) {
            // SAFETY: SSE2 is part of x86_64; the load reads the 16 bytes of `s` (no alignment
            // needed) and the store writes the 16 bytes of `d`, 16-byte aligned (`head` above).
            unsafe {
                let v = _mm_loadu_si128(s.as_ptr().cast::<__m128i>());
                _mm_stream_si128(d.as_mut_ptr().cast::<__m128i>(), v);
            }
        }
        // SAFETY: SSE2 is part of x86_64. Streaming stores are weakly ordered: fence them
        // before the caller reports the copy done.
        unsafe { _mm_sfence() };
        d_tail.copy_from_slice(s_tail);
    }
    #[cfg(not(target_arch = "x86_64"))]
    dst.copy_from_slice(src);
}

#[cfg(test)]
mod tests {
    #[test]
    fn copies_every_byte_at_every_alignment_and_length() {
        let src: Vec<u8> = (0..300u32).map(|i| (i * 37 + 11) as u8).collect();
        for at in 0..17 {
            for len in [0, 1, 15, 16, 17, 31, 32, 33, 100, 255] {
                let mut dst = vec![0xAAu8; 300];
                super::copy(&mut dst[at..at + len], &src[3..3 + len]);
                assert_eq!(dst[at..at + len], src[3..3 + len], "at {at} len {len}");
                assert!(dst[..at].iter().chain(&dst[at + len..]).all(|&b| b == 0xAA));
            }
        }
    }
}
