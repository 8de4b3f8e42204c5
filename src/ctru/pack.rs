//! PackF for the PKE secret key and PackCT for ciphertexts (spec sections 6.2 and 6.3).

use super::ParamSet;
use zeroize::Zeroizing;

/// PackF: nibble BOUND - f_i, coefficient 2j in the low nibble of byte j; for odd n the final
/// high nibble is 0.
pub(crate) fn pack_f(p: ParamSet, f: &[i32], out: &mut [u8]) {
    let bound = p.bound();
    out.fill(0);
    for (i, &fi) in f.iter().enumerate() {
        out[i / 2] |= ((bound - fi) as u8) << (4 * (i % 2));
    }
}

/// UnpackF. `None` unless every coefficient has the KeyGen form f = 2f' + 1 with f' in
/// [-eta, eta] and the padding nibble is 0. Runs in constant time: the validity check is
/// accumulated in a mask, and only its final value is branched on.
pub(crate) fn unpack_f(p: ParamSet, bytes: &[u8]) -> Option<Zeroizing<Vec<i32>>> {
    let n = p.n();
    let bound = p.bound();
    let two_eta = 2 * p.eta() as i32;
    let mut f = Zeroizing::new(vec![0i32; n]);
    let mut bad = 0i32;
    for (i, fi) in f.iter_mut().enumerate() {
        let nibble = ((bytes[i / 2] >> (4 * (i % 2))) & 0xF) as i32;
        *fi = bound - nibble;
        // f' * 2 = f_i - [i == 0] must be even and in [-2 eta, 2 eta].
        let twice = *fi - (i == 0) as i32;
        bad |= twice & 1;
        bad |= (two_eta - twice) >> 31; // twice > 2 eta
        bad |= (twice + two_eta) >> 31; // twice < -2 eta
    }
    if n % 2 == 1 {
        bad |= (bytes[n / 2] >> 4) as i32;
    }
    (bad == 0).then_some(f)
}

/// PackCT: each c_i in [0, 2^d2) as d2 bits, least significant bit first, one bitstream.
pub(crate) fn pack_ct(c: &[i32], d2: u32, out: &mut [u8]) {
    let mut acc: u64 = 0;
    let mut nbits = 0u32;
    let mut pos = 0;
    for &ci in c {
        acc |= (ci as u64) << nbits;
        nbits += d2;
        while nbits >= 8 {
            out[pos] = acc as u8;
            pos += 1;
            acc >>= 8;
            nbits -= 8;
        }
    }
    if nbits > 0 {
        out[pos] = acc as u8;
    }
}

/// UnpackCT: the inverse of PackCT; every bit pattern is accepted (padding bits are ignored).
pub(crate) fn unpack_ct(bytes: &[u8], n: usize, d2: u32) -> Vec<i32> {
    let mask = (1u64 << d2) - 1;
    let mut acc: u64 = 0;
    let mut nbits = 0u32;
    let mut bytes = bytes.iter();
    (0..n)
        .map(|_| {
            while nbits < d2 {
                acc |= (*bytes.next().unwrap_or(&0) as u64) << nbits;
                nbits += 8;
            }
            let v = (acc & mask) as i32;
            acc >>= d2;
            nbits -= d2;
            v
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ct_and_f_round_trip() {
        for p in ParamSet::ALL {
            let d2 = p.q2_bits();
            let c: Vec<i32> = (0..p.n())
                .map(|i| ((i * 7919) % (1 << d2)) as i32)
                .collect();
            let mut ct = vec![0u8; p.ciphertext_len()];
            pack_ct(&c, d2, &mut ct);
            assert_eq!(unpack_ct(&ct, p.n(), d2), c);

            let eta = p.eta() as i32;
            let f: Vec<i32> = (0..p.n())
                .map(|i| 2 * ((i as i32 % (2 * eta + 1)) - eta) + (i == 0) as i32)
                .collect();
            let mut sk = vec![0u8; p.sk_pke_len()];
            pack_f(p, &f, &mut sk);
            assert_eq!(&unpack_f(p, &sk).unwrap()[..], &f[..]);
            // An even f_0, an odd f_1, an out-of-range value and a nonzero pad are all rejected.
            for (byte, xor) in [(0, 0x01), (0, 0x10), (1, 0xF0), (p.n() / 2, 0x10)] {
                let mut bad = sk.clone();
                bad[byte] ^= xor;
                if byte == 1 {
                    bad[1] = (bad[1] & 0x0F) | 0xF0; // nibble 15: f = bound - 15 < -2 eta
                }
                assert!(
                    unpack_f(p, &bad).is_none(),
                    "{p:?} byte {byte} xor {xor:#x}"
                );
            }
        }
    }
}
