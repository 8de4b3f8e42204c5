//! The official NTRU-Prime-style public-key encoding (spec section 6.1): h_i in [0, q) with every
//! modulus M_i = q and no offset. The public key is public, so plain division is fine here.
//!
//! Decoding is strict: an encoding that the reference would silently reduce (a recombined value
//! at or above its modulus) is rejected, so every accepted public key is canonical.

/// Appends Encode(r, m) to `out`.
fn encode_rec(r: &[u32], m: &[u32], out: &mut Vec<u8>) {
    let len = r.len();
    if len == 1 {
        let (mut r0, mut m0) = (r[0], m[0]);
        while m0 > 1 {
            out.push(r0 as u8);
            r0 >>= 8;
            m0 = m0.div_ceil(256);
        }
        return;
    }
    let half = len.div_ceil(2);
    let mut r2 = Vec::with_capacity(half);
    let mut m2 = Vec::with_capacity(half);
    for i in (0..len - 1).step_by(2) {
        let mut rr = r[i] + r[i + 1] * m[i];
        let mut mm = m[i] * m[i + 1];
        while mm >= 16384 {
            out.push(rr as u8);
            rr >>= 8;
            mm = mm.div_ceil(256);
        }
        r2.push(rr);
        m2.push(mm);
    }
    if len % 2 == 1 {
        r2.push(r[len - 1]);
        m2.push(m[len - 1]);
    }
    encode_rec(&r2, &m2, out);
}

/// Decode(S, M) into `out`, consuming bytes from the front of `s`; `None` on a short or
/// non-canonical input.
fn decode_rec(s: &mut &[u8], m: &[u32], out: &mut [u32]) -> Option<()> {
    let len = m.len();
    let mut take = |k: usize| -> Option<u32> {
        let (head, tail) = s.split_at_checked(k)?;
        *s = tail;
        Some(
            head.iter()
                .rev()
                .fold(0u32, |acc, &b| (acc << 8) | b as u32),
        )
    };
    if len == 1 {
        let value = match m[0] {
            1 => 0,
            2..=256 => take(1)?,
            _ => take(2)?,
        };
        out[0] = value;
        return (value < m[0]).then_some(());
    }
    let half = len.div_ceil(2);
    let mut bottom = Vec::with_capacity(half);
    let mut m2 = Vec::with_capacity(half);
    for i in (0..len - 1).step_by(2) {
        let mm = m[i] * m[i + 1];
        if mm > 256 * 16383 {
            bottom.push((take(2)?, 65536));
            m2.push(mm.div_ceil(256).div_ceil(256));
        } else if mm >= 16384 {
            bottom.push((take(1)?, 256));
            m2.push(mm.div_ceil(256));
        } else {
            bottom.push((0, 1));
            m2.push(mm);
        }
    }
    if len % 2 == 1 {
        m2.push(m[len - 1]);
    }
    let mut r2 = vec![0u32; half];
    decode_rec(s, &m2, &mut r2)?;
    for (k, &(low, scale)) in bottom.iter().enumerate() {
        let r = low + scale * r2[k];
        let (r0, r1) = (r % m[2 * k], r / m[2 * k]);
        if r1 >= m[2 * k + 1] {
            return None;
        }
        out[2 * k] = r0;
        out[2 * k + 1] = r1;
    }
    if len % 2 == 1 {
        out[len - 1] = r2[half - 1];
    }
    Some(())
}

/// Encodes h (coefficients in [0, q)) into the official public-key format.
pub(crate) fn encode_pk(h: &[i32], q: i32, out: &mut [u8]) {
    let r: Vec<u32> = h.iter().map(|&x| x as u32).collect();
    let m = vec![q as u32; h.len()];
    let mut bytes = Vec::with_capacity(out.len());
    encode_rec(&r, &m, &mut bytes);
    debug_assert_eq!(bytes.len(), out.len());
    out.copy_from_slice(&bytes);
}

/// Decodes a public key into n coefficients in [0, q); `None` unless `pk` is exactly a canonical
/// encoding.
pub(crate) fn decode_pk(pk: &[u8], n: usize, q: i32) -> Option<Vec<i32>> {
    let m = vec![q as u32; n];
    let mut out = vec![0u32; n];
    let mut rest = pk;
    decode_rec(&mut rest, &m, &mut out)?;
    if !rest.is_empty() {
        return None;
    }
    Some(out.into_iter().map(|x| x as i32).collect())
}

/// Length in bytes of the encoding of n values modulo q.
#[cfg(test)]
fn encoded_len(n: usize, q: i32) -> usize {
    let mut out = Vec::new();
    encode_rec(&vec![0; n], &vec![q as u32; n], &mut out);
    out.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ctru::ParamSet;

    #[test]
    fn lengths_and_round_trip() {
        let mut x = 1u32;
        for p in ParamSet::ALL {
            assert_eq!(encoded_len(p.n(), p.q()), p.public_key_len());
            let h: Vec<i32> = (0..p.n())
                .map(|_| {
                    x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                    ((x >> 8) % p.q() as u32) as i32
                })
                .collect();
            let mut pk = vec![0u8; p.public_key_len()];
            encode_pk(&h, p.q(), &mut pk);
            assert_eq!(decode_pk(&pk, p.n(), p.q()).unwrap(), h);
            // All-0xFF bytes are far out of range somewhere.
            assert!(decode_pk(&vec![0xFF; p.public_key_len()], p.n(), p.q()).is_none());
            assert!(decode_pk(&pk[1..], p.n(), p.q()).is_none());
        }
    }
}
