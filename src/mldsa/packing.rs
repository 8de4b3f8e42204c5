//! Byte encodings (FIPS 204 Alg. 16-28): SimpleBitPack/BitPack and their inverses, the hint
//! encoding, and pkEncode/skEncode/sigEncode with their decoders.

use super::params::{ParamSet, D, N};
use super::poly::Poly;
use super::polyvec::PolyVec;
use zeroize::Zeroize;
#[cfg(fuzzing)]
use zeroize::ZeroizeOnDrop;

/// Packs 256 values of `bits` bits each, little-endian bit order, into 32 * bits bytes.
/// `value` maps a coefficient to its unsigned field (branch-free for every caller).
/// Every width FIPS 204 uses gets its own straight-line copy (`bits` is public).
#[inline(always)]
fn pack_with(a: &[i32; N], bits: usize, out: &mut [u8], value: impl Fn(i32) -> u32) {
    debug_assert_eq!(out.len(), 32 * bits);
    match bits {
        3 => pack_fixed::<3>(a, out, value),
        4 => pack_fixed::<4>(a, out, value),
        6 => pack_fixed::<6>(a, out, value),
        10 => pack_fixed::<10>(a, out, value),
        13 => pack_fixed::<13>(a, out, value),
        18 => pack_fixed::<18>(a, out, value),
        20 => pack_fixed::<20>(a, out, value),
        _ => pack_any(a, bits, out, value),
    }
}

/// Coefficients per group of whole bytes that fits a u128 (4 B or 8 B bits).
const fn group(bits: usize) -> usize {
    if bits <= 16 {
        8
    } else {
        4
    }
}

/// `pack_with` for one width B <= 32: groups of `group(B)` fields assembled in a u128.
#[inline(always)]
fn pack_fixed<const B: usize>(a: &[i32; N], out: &mut [u8], value: impl Fn(i32) -> u32) {
    let g = group(B);
    let bytes = g * B / 8;
    // Wiped once at the end (they may hold secret fields).
    let mut acc: u128 = 0;
    let mut le = [0u8; 16];
    for (c, o) in a.chunks_exact(g).zip(out.chunks_exact_mut(bytes)) {
        acc = 0;
        for (k, &x) in c.iter().enumerate() {
            acc |= (value(x) as u128) << (k * B);
        }
        le = acc.to_le_bytes();
        o.copy_from_slice(&le[..bytes]);
    }
    le.zeroize();
    acc.zeroize();
}

/// `pack_with` for any width (the bit-serial form).
fn pack_any(a: &[i32; N], bits: usize, out: &mut [u8], value: impl Fn(i32) -> u32) {
    let mut acc: u64 = 0;
    let mut n = 0;
    let mut o = 0;
    for &c in a.iter() {
        acc |= (value(c) as u64) << n;
        n += bits;
        while n >= 8 {
            out[o] = acc as u8;
            o += 1;
            acc >>= 8;
            n -= 8;
        }
    }
    acc.zeroize();
}

/// Unpacks 256 fields of `bits` bits each from 32 * bits bytes, mapping each through `value`.
#[inline(always)]
fn unpack_with(buf: &[u8], bits: usize, out: &mut [i32; N], value: impl Fn(u32) -> i32) {
    debug_assert_eq!(buf.len(), 32 * bits);
    match bits {
        3 => unpack_fixed::<3>(buf, out, value),
        4 => unpack_fixed::<4>(buf, out, value),
        6 => unpack_fixed::<6>(buf, out, value),
        10 => unpack_fixed::<10>(buf, out, value),
        13 => unpack_fixed::<13>(buf, out, value),
        18 => unpack_fixed::<18>(buf, out, value),
        20 => unpack_fixed::<20>(buf, out, value),
        _ => unpack_any(buf, bits, out, value),
    }
}

/// `unpack_with` for one width B <= 32, a u128 per group as in `pack_fixed`.
#[inline(always)]
fn unpack_fixed<const B: usize>(buf: &[u8], out: &mut [i32; N], value: impl Fn(u32) -> i32) {
    let g = group(B);
    let bytes = g * B / 8;
    let mask = ((1u64 << B) - 1) as u128;
    // Wiped once at the end (they may hold secret fields).
    let mut acc: u128 = 0;
    let mut le = [0u8; 16];
    for (c, i) in out.chunks_exact_mut(g).zip(buf.chunks_exact(bytes)) {
        le[..bytes].copy_from_slice(i);
        acc = u128::from_le_bytes(le);
        for (k, x) in c.iter_mut().enumerate() {
            *x = value(((acc >> (k * B)) & mask) as u32);
        }
    }
    le.zeroize();
    acc.zeroize();
}

/// `unpack_with` for any width (the bit-serial form).
fn unpack_any(buf: &[u8], bits: usize, out: &mut [i32; N], value: impl Fn(u32) -> i32) {
    let mask = (1u64 << bits) - 1;
    let mut acc: u64 = 0;
    let mut n = 0;
    let mut bytes = buf.iter();
    for c in out.iter_mut() {
        while n < bits {
            acc |= (*bytes.next().expect("32 * bits bytes") as u64) << n;
            n += 8;
        }
        *c = value((acc & mask) as u32);
        acc >>= bits;
        n -= bits;
    }
    acc.zeroize();
}

/// SimpleBitPack (Alg. 16) for coefficients in [0, 2^bits).
pub fn simple_bit_pack(a: &[i32; N], bits: usize, out: &mut [u8]) {
    #[cfg(target_arch = "x86_64")]
    if bits == 10 {
        if let Some(t) = crate::simd::level().avx2() {
            return super::packing_avx2::pack_key(t, a, bits, None, out);
        }
    }
    pack_with(a, bits, out, |c| c as u32);
}

/// SimpleBitUnpack (Alg. 18).
pub fn simple_bit_unpack(buf: &[u8], bits: usize, out: &mut [i32; N]) {
    #[cfg(target_arch = "x86_64")]
    if bits == 10 {
        if let Some(t) = crate::simd::level().avx2() {
            return super::packing_avx2::unpack_key(t, buf, bits, None, out);
        }
    }
    unpack_with(buf, bits, out, |v| v as i32);
}

/// BitPack (Alg. 17) for coefficients in [-(2^bits - 1 - b), b]: stores b - c.
pub fn bit_pack(a: &[i32; N], bits: usize, b: i32, out: &mut [u8]) {
    #[cfg(target_arch = "x86_64")]
    if let Some(t) = crate::simd::level().avx2() {
        match bits {
            3 | 4 | 13 => return super::packing_avx2::pack_key(t, a, bits, Some(b), out),
            18 | 20 => return super::packing_avx2::pack_z(t, a, bits, b, out),
            _ => {}
        }
    }
    pack_with(a, bits, out, |c| (b - c) as u32);
}

/// BitUnpack (Alg. 19): c = b - field.
pub fn unpack_centered(buf: &[u8], bits: usize, b: i32, out: &mut [i32; N]) {
    #[cfg(target_arch = "x86_64")]
    if let Some(t) = crate::simd::level().avx2() {
        match bits {
            3 | 4 | 13 => return super::packing_avx2::unpack_key(t, buf, bits, Some(b), out),
            18 | 20 => return super::packing_avx2::unpack_centered(t, buf, bits, b, out),
            _ => {}
        }
    }
    unpack_with(buf, bits, out, |v| b - v as i32);
}

/// pkEncode (Alg. 22): rho || SimpleBitPack(t1_i, 10).
#[cfg(any(test, fuzzing))]
pub fn pk_encode<const K: usize>(rho: &[u8; 32], t1: &PolyVec<K>, pk: &mut [u8]) {
    pk[..32].copy_from_slice(rho);
    for (i, t) in t1.0.iter().enumerate() {
        pk_encode_t1(i, t, pk);
    }
}

/// pkEncode's part for t1[i] alone (KeyGen packs each row of t1 as it is made).
pub fn pk_encode_t1(i: usize, t1: &Poly, pk: &mut [u8]) {
    simple_bit_pack(&t1.0, 10, &mut pk[32 + 320 * i..32 + 320 * (i + 1)]);
}

/// pkDecode (Alg. 23). Every bit string of the right length is a valid public key.
pub fn pk_decode<const K: usize>(pk: &[u8]) -> ([u8; 32], PolyVec<K>) {
    let rho: [u8; 32] = pk[..32].try_into().expect("32 bytes");
    let mut t1 = PolyVec::<K>::default();
    for (t, chunk) in t1.0.iter_mut().zip(pk[32..].chunks_exact(320)) {
        simple_bit_unpack(chunk, 10, &mut t.0);
    }
    (rho, t1)
}

/// The decoded secret key of Alg. 25; zeroized on drop. KeyGen packs its parts as it makes
/// them, and signing decodes into its own storage, so only the fuzz targets use it.
#[cfg(fuzzing)]
#[derive(Zeroize, ZeroizeOnDrop)]
pub struct SecretKey<const K: usize, const L: usize> {
    pub rho: [u8; 32],
    pub key: [u8; 32],
    /// tr: 64 bytes, of which round 3 uses the first 32 (`ParamSet::tr_len`).
    pub tr: [u8; 64],
    pub s1: PolyVec<L>,
    pub s2: PolyVec<K>,
    pub t0: PolyVec<K>,
}

/// skEncode (Alg. 24): rho || K || tr || BitPack(s1, eta) || BitPack(s2, eta) || BitPack(t0, 2^(d-1)).
#[cfg(fuzzing)]
pub fn sk_encode<const K: usize, const L: usize>(
    p: ParamSet,
    sk: &SecretKey<K, L>,
    out: &mut [u8],
) {
    out[..32].copy_from_slice(&sk.rho);
    out[32..64].copy_from_slice(&sk.key);
    out[64..64 + p.tr_len()].copy_from_slice(&sk.tr[..p.tr_len()]);
    sk_encode_s(p, &sk.s1, &sk.s2, out);
    for (i, t) in sk.t0.0.iter().enumerate() {
        sk_encode_t0::<K, L>(p, i, t, out);
    }
}

/// skEncode's BitPack(s1, eta) || BitPack(s2, eta) alone (KeyGen packs them once sampled).
pub fn sk_encode_s<const K: usize, const L: usize>(
    p: ParamSet,
    s1: &PolyVec<L>,
    s2: &PolyVec<K>,
    out: &mut [u8],
) {
    let eb = p.eta_bits();
    let s_at = 64 + p.tr_len();
    let chunks = out[s_at..s_at + 32 * eb * (K + L)].chunks_exact_mut(32 * eb);
    for (s, chunk) in s1.0.iter().chain(s2.0.iter()).zip(chunks) {
        bit_pack(&s.0, eb, p.eta(), chunk);
    }
}

/// skEncode's part for t0[i] alone (KeyGen packs each row of t0 as it is made).
pub fn sk_encode_t0<const K: usize, const L: usize>(
    p: ParamSet,
    i: usize,
    t0: &Poly,
    out: &mut [u8],
) {
    let at = 64 + p.tr_len() + 32 * p.eta_bits() * (K + L) + 32 * D as usize * i;
    bit_pack(
        &t0.0,
        D as usize,
        1 << (D - 1),
        &mut out[at..at + 32 * D as usize],
    );
}

/// skDecode (Alg. 25). Returns `None` when an s1/s2 field exceeds 2 * eta, i.e. a coefficient lies
/// outside [-eta, eta]. Signing decodes with [`sk_decode_into`] instead; this whole-key form
/// serves the fuzz targets.
#[cfg(fuzzing)]
pub fn sk_decode<const K: usize, const L: usize>(
    p: ParamSet,
    sk: &[u8],
) -> Option<SecretKey<K, L>> {
    let mut out = SecretKey {
        rho: sk[..32].try_into().expect("32 bytes"),
        key: sk[32..64].try_into().expect("32 bytes"),
        tr: [0; 64],
        s1: PolyVec::default(),
        s2: PolyVec::default(),
        t0: PolyVec::default(),
    };
    sk_decode_into(p, sk, &mut out.tr, &mut out.s1, &mut out.s2, &mut out.t0).then_some(out)
}

/// skDecode (Alg. 25) of tr, s1, s2 and t0 straight into the caller's buffers (rho and K are
/// `sk[..32]` and `sk[32..64]`), so a signing key is filled without an intermediate copy.
/// Returns false when an s1/s2 field exceeds 2 * eta, i.e. a coefficient lies outside
/// [-eta, eta]. The check accumulates a flag over all coefficients; only the verdict branches.
pub fn sk_decode_into<const K: usize, const L: usize>(
    p: ParamSet,
    sk: &[u8],
    tr: &mut [u8; 64],
    s1: &mut PolyVec<L>,
    s2: &mut PolyVec<K>,
    t0: &mut PolyVec<K>,
) -> bool {
    let eb = p.eta_bits();
    let eta = p.eta();
    let s_at = 64 + p.tr_len();
    tr[..p.tr_len()].copy_from_slice(&sk[64..s_at]);
    let (s_part, t0_part) = sk[s_at..].split_at(32 * eb * (K + L));
    let mut chunks = s_part.chunks_exact(32 * eb);
    for s in s1.0.iter_mut().chain(s2.0.iter_mut()) {
        unpack_centered(chunks.next().expect("sized by K + L"), eb, eta, &mut s.0);
    }
    // A field v is valid iff v <= 2 eta, i.e. iff the coefficient eta - v >= -eta.
    let mut bad = 0i32;
    for s in s1.0.iter().chain(s2.0.iter()) {
        bad = s.0.iter().fold(bad, |acc, &c| acc | (c + eta));
    }
    for (t, chunk) in t0.0.iter_mut().zip(t0_part.chunks_exact(32 * D as usize)) {
        unpack_centered(chunk, D as usize, 1 << (D - 1), &mut t.0);
    }
    bad >= 0
}

/// HintBitPack (Alg. 20): omega indices of the 1s, then k cumulative counts.
/// The caller guarantees at most omega ones.
fn hint_bit_pack<const K: usize>(omega: usize, h: &PolyVec<K>, out: &mut [u8]) {
    out.fill(0);
    let mut index = 0;
    for (i, hi) in h.0.iter().enumerate() {
        // 32 coefficients to a bit mask (branch-free, vectorised by the compiler), then one step
        // per 1 (a hint is sparse: at most omega ones in all, against k * 256 coefficients).
        for (c, chunk) in hi.0.chunks_exact(32).enumerate() {
            let mut ones = chunk
                .iter()
                .enumerate()
                .fold(0u32, |m, (k, &bit)| m | ((bit != 0) as u32) << k);
            while ones != 0 {
                out[index] = (32 * c) as u8 + ones.trailing_zeros() as u8;
                index += 1;
                ones &= ones - 1;
            }
        }
        out[omega + i] = index as u8;
    }
}

/// HintBitUnpack (Alg. 21). `None` for a malformed encoding: cumulative counts decreasing or
/// above omega, indices not strictly increasing within a polynomial, or nonzero padding.
fn hint_bit_unpack<const K: usize>(omega: usize, y: &[u8]) -> Option<PolyVec<K>> {
    let mut h = PolyVec::<K>::default();
    let mut index = 0;
    for (i, hi) in h.0.iter_mut().enumerate() {
        let end = y[omega + i] as usize;
        if end < index || end > omega {
            return None;
        }
        let first = index;
        while index < end {
            if index > first && y[index - 1] >= y[index] {
                return None;
            }
            hi.0[y[index] as usize] = 1;
            index += 1;
        }
    }
    if y[index..omega].iter().any(|&b| b != 0) {
        return None;
    }
    Some(h)
}

/// sigEncode (Alg. 26): c~ || BitPack(z_i, gamma1 - 1, gamma1) || HintBitPack(h).
pub fn sig_encode<const K: usize, const L: usize>(
    p: ParamSet,
    c_tilde: &[u8],
    z: &PolyVec<L>,
    h: &PolyVec<K>,
    sig: &mut [u8],
) {
    let (ct, rest) = sig.split_at_mut(p.c_tilde_len());
    ct.copy_from_slice(c_tilde);
    let zbits = p.gamma1_bits() as usize + 1;
    let (zpart, hpart) = rest.split_at_mut(L * 32 * zbits);
    for (zi, chunk) in z.0.iter().zip(zpart.chunks_exact_mut(32 * zbits)) {
        bit_pack(&zi.0, zbits, p.gamma1(), chunk);
    }
    hint_bit_pack(p.omega(), h, hpart);
}

/// A decoded signature.
pub struct Signature<'a, const K: usize, const L: usize> {
    pub c_tilde: &'a [u8],
    pub z: PolyVec<L>,
    pub h: PolyVec<K>,
}

/// sigDecode (Alg. 27). The caller has checked the length; `None` for a malformed hint.
/// Inlined, so that z and h are built in the caller's frame (not returned as an 8-16 KiB copy).
#[inline(always)]
pub fn sig_decode<const K: usize, const L: usize>(
    p: ParamSet,
    sig: &[u8],
) -> Option<Signature<'_, K, L>> {
    let (c_tilde, rest) = sig.split_at(p.c_tilde_len());
    let zbits = p.gamma1_bits() as usize + 1;
    let (zpart, hpart) = rest.split_at(L * 32 * zbits);
    let mut z = PolyVec::<L>::default();
    for (zi, chunk) in z.0.iter_mut().zip(zpart.chunks_exact(32 * zbits)) {
        unpack_centered(chunk, zbits, p.gamma1(), &mut zi.0);
    }
    let h = hint_bit_unpack::<K>(p.omega(), hpart)?;
    Some(Signature { c_tilde, z, h })
}

/// w1Encode (Alg. 28): SimpleBitPack(w1_i, bitlen((q-1)/(2 gamma2) - 1)).
pub fn w1_encode<const K: usize>(p: ParamSet, w1: &PolyVec<K>, out: &mut [u8]) {
    let bits = p.w1_bits();
    for (w, chunk) in w1.0.iter().zip(out.chunks_exact_mut(32 * bits)) {
        #[cfg(target_arch = "x86_64")]
        if let Some(t) = crate::simd::level().avx2() {
            super::packing_avx2::pack_w1(t, &w.0, bits, chunk);
            continue;
        }
        simple_bit_pack(&w.0, bits, chunk);
    }
}

/// Counts the ones of a hint vector (branch-free; signing counts them as MakeHint writes them).
#[cfg(test)]
pub fn hint_weight<const K: usize>(h: &PolyVec<K>) -> usize {
    h.0.iter()
        .map(|p: &super::poly::Poly| p.0.iter().map(|&b| b as usize).sum::<usize>())
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The AVX2 BitUnpack of y and z against the portable one on random bytes.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx2_unpack_matches_portable() {
        let Some(t) = crate::simd::available().last().and_then(|l| l.avx2()) else {
            println!("SKIPPED: no AVX2 on this CPU");
            return;
        };
        let mut seed = 3u64;
        for round in 0..500 {
            for (bits, b) in [(18usize, 1i32 << 17), (20, 1 << 19)] {
                let buf: Vec<u8> = (0..32 * bits)
                    .map(|i| {
                        seed = seed
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        // All-zero and all-one bytes as well as random ones.
                        match round % 3 {
                            0 => (seed >> 56) as u8,
                            1 => 0xff,
                            _ => (i % 2 * 0xff) as u8,
                        }
                    })
                    .collect();
                let (mut want, mut got) = ([0i32; N], [0i32; N]);
                unpack_with(&buf, bits, &mut want, |v| b - v as i32);
                super::super::packing_avx2::unpack_centered(t, &buf, bits, b, &mut got);
                assert_eq!(got, want, "bits {bits}");
            }
            // w1Encode's widths, on random values and on all-maximum ones.
            for bits in [4usize, 6] {
                let a: [i32; N] = core::array::from_fn(|i| {
                    seed = seed
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    let v = (seed >> 40) as i32 & ((1 << bits) - 1);
                    if round % 5 == 0 {
                        (1 << bits) - 1 - (i as i32 % 2)
                    } else {
                        v
                    }
                });
                let (mut want, mut got) = (vec![0u8; 32 * bits], vec![0u8; 32 * bits]);
                pack_with(&a, bits, &mut want, |c| c as u32);
                super::super::packing_avx2::pack_w1(t, &a, bits, &mut got);
                assert_eq!(got, want, "w1 bits {bits}");
            }
        }
    }

    /// The AVX2 packing of s1/s2 (3, 4 bits), t0 (13), t1 (10) and z (18, 20) against the portable one,
    /// over each width's whole field range.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn pk_encode_decode_round_trip() {
        // t1 has 10-bit coefficients; pkDecode must give back rho and t1 exactly.
        let rho: [u8; 32] = core::array::from_fn(|i| (i * 37 + 5) as u8);
        let mut t1 = PolyVec::<6>::default();
        for (i, p) in t1.0.iter_mut().enumerate() {
            for (j, c) in p.0.iter_mut().enumerate() {
                *c = ((i * 7919 + j * 104729) % 1024) as i32;
            }
        }
        let mut pk = vec![0u8; 32 + 6 * 320];
        pk_encode(&rho, &t1, &mut pk);
        let (rho2, t1b) = pk_decode::<6>(&pk);
        assert_eq!(rho, rho2);
        assert!(t1.0.iter().zip(t1b.0.iter()).all(|(a, b)| a.0 == b.0));
    }

    #[test]
    fn avx2_key_pack_matches_portable() {
        let Some(t) = crate::simd::available().last().and_then(|l| l.avx2()) else {
            println!("SKIPPED: no AVX2 on this CPU");
            return;
        };
        let mut seed = 17u64;
        for round in 0..400 {
            for (bits, b) in [(3usize, 2i32), (4, 4), (13, 1 << 12), (10, 0)] {
                let top = (1i32 << bits) - 1;
                let f: [i32; N] = core::array::from_fn(|i| {
                    seed = seed
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    match round % 4 {
                        0 => top,
                        1 => (i as i32 % 2) * top,
                        _ => (seed >> 33) as i32 & top,
                    }
                });
                let sub = (bits != 10).then_some(b);
                // Coefficients whose fields are f: c = b - f for BitPack, f for SimpleBitPack.
                let a: [i32; N] = core::array::from_fn(|i| sub.map_or(f[i], |b| b - f[i]));
                let (mut want, mut got) = (vec![0u8; 32 * bits], vec![0u8; 32 * bits]);
                pack_with(&a, bits, &mut want, |c| sub.map_or(c, |b| b - c) as u32);
                super::super::packing_avx2::pack_key(t, &a, bits, sub, &mut got);
                assert_eq!(got, want, "bits {bits} round {round}");
                // And back (any bytes decode: the fields are not range-checked here).
                let (mut back, mut back_avx2) = ([0i32; N], [0i32; N]);
                unpack_with(&want, bits, &mut back, |v| {
                    sub.map_or(v as i32, |b| b - v as i32)
                });
                super::super::packing_avx2::unpack_key(t, &want, bits, sub, &mut back_avx2);
                assert_eq!(back_avx2, back, "unpack bits {bits} round {round}");
                assert_eq!(back, a, "round trip bits {bits}");
            }
            // z's widths (fields gamma1 - z in [0, 2^bits)).
            for (bits, b) in [(18usize, 1i32 << 17), (20, 1 << 19)] {
                let top = (1i32 << bits) - 1;
                let a: [i32; N] = core::array::from_fn(|i| {
                    seed = seed
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    b - match round % 4 {
                        0 => top,
                        1 => (i as i32 % 2) * top,
                        2 => (i as i32 % 3 != 0) as i32 * top,
                        _ => (seed >> 33) as i32 & top,
                    }
                });
                let (mut want, mut got) = (vec![0u8; 32 * bits], vec![0u8; 32 * bits]);
                pack_with(&a, bits, &mut want, |c| (b - c) as u32);
                super::super::packing_avx2::pack_z(t, &a, bits, b, &mut got);
                assert_eq!(got, want, "z bits {bits} round {round}");
            }
        }
    }

    #[test]
    fn bit_pack_round_trip() {
        for bits in [3usize, 4, 6, 10, 13, 18, 20] {
            let mut a = [0i32; N];
            for (i, c) in a.iter_mut().enumerate() {
                *c = ((i * 2_654_435_761) % (1 << bits)) as i32;
            }
            let mut buf = vec![0u8; 32 * bits];
            simple_bit_pack(&a, bits, &mut buf);
            let mut b = [0i32; N];
            simple_bit_unpack(&buf, bits, &mut b);
            assert_eq!(a, b, "bits={bits}");
        }
    }

    #[test]
    fn fixed_widths_match_bit_serial() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for bits in [3usize, 4, 6, 10, 13, 18, 20] {
            for _ in 0..20 {
                let mut a = [0i32; N];
                let mut buf = vec![0u8; 32 * bits];
                for c in a.iter_mut() {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    *c = (state % (1 << bits)) as i32;
                }
                for (i, b) in buf.iter_mut().enumerate() {
                    *b = (state >> (i % 56)) as u8 ^ i as u8;
                }
                let (mut p1, mut p2) = (vec![0u8; 32 * bits], vec![0u8; 32 * bits]);
                pack_with(&a, bits, &mut p1, |c| c as u32);
                pack_any(&a, bits, &mut p2, |c| c as u32);
                assert_eq!(p1, p2, "pack bits={bits}");
                let (mut u1, mut u2) = ([0i32; N], [0i32; N]);
                unpack_with(&buf, bits, &mut u1, |v| 7 - v as i32);
                unpack_any(&buf, bits, &mut u2, |v| 7 - v as i32);
                assert_eq!(u1, u2, "unpack bits={bits}");
            }
        }
    }

    const OMEGA: usize = 6;
    const K: usize = 3;

    /// Builds a hint encoding from index bytes and cumulative counts.
    fn encoding(indices: &[u8], counts: [u8; K]) -> Vec<u8> {
        let mut y = vec![0u8; OMEGA + K];
        y[..indices.len()].copy_from_slice(indices);
        y[OMEGA..].copy_from_slice(&counts);
        y
    }

    #[test]
    fn hint_round_trip_and_weight() {
        let mut h = PolyVec::<K>::default();
        h.0[0].0[3] = 1;
        h.0[0].0[200] = 1;
        h.0[2].0[0] = 1;
        h.0[2].0[255] = 1;
        let mut y = vec![0u8; OMEGA + K];
        hint_bit_pack(OMEGA, &h, &mut y);
        assert_eq!(y, encoding(&[3, 200, 0, 255], [2, 2, 4]));
        let back = hint_bit_unpack::<K>(OMEGA, &y).expect("well-formed");
        assert!(back.0.iter().zip(h.0.iter()).all(|(a, b)| a.0 == b.0));
        assert_eq!(hint_weight(&back), 4);
        // Empty and full hints are fine.
        assert!(hint_bit_unpack::<K>(OMEGA, &encoding(&[], [0, 0, 0])).is_some());
        assert!(hint_bit_unpack::<K>(OMEGA, &encoding(&[1, 2, 3, 4, 5, 6], [6, 6, 6])).is_some());
    }

    #[test]
    fn hint_unpack_rejects_malformed() {
        let bad = [
            (encoding(&[5, 3], [2, 2, 2]), "indices decreasing"),
            (encoding(&[3, 3], [2, 2, 2]), "index repeated"),
            (encoding(&[1, 2], [2, 1, 2]), "counts decreasing"),
            (encoding(&[1, 2], [2, 2, 7]), "count above omega"),
            (encoding(&[1, 2, 9], [2, 2, 2]), "nonzero padding"),
            (
                encoding(&[1, 2, 0, 0, 0, 1], [2, 2, 2]),
                "nonzero last padding byte",
            ),
        ];
        for (y, what) in bad {
            assert!(hint_bit_unpack::<K>(OMEGA, &y).is_none(), "{what}");
        }
        // Decreasing indices across polynomials are allowed (each polynomial starts afresh).
        assert!(hint_bit_unpack::<K>(OMEGA, &encoding(&[9, 1], [1, 2, 2])).is_some());
    }
}
