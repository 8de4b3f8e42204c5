//! ExpandA, ExpandS, ExpandMask and SampleInBall (FIPS 204 Alg. 29-34), built on SHAKE.

use super::params::{ParamSet, N, Q};
use super::poly::Poly;
use super::polyvec::{Matrix, PolyVec};
use sha3::digest::{ExtendableOutput, Update, XofReader};
use sha3::{Shake128, Shake256};
use zeroize::Zeroize;

const SHAKE128_RATE: usize = 168;
const SHAKE256_RATE: usize = 136;

/// RejNTTPoly (Alg. 30): a uniform polynomial in the NTT domain from SHAKE128(rho || s || r).
/// Works on public data, so rejection may branch.
fn rej_ntt_poly(rho: &[u8; 32], s: u8, r: u8) -> Poly {
    let mut xof = Shake128::default();
    xof.update(rho);
    xof.update(&[s, r]);
    let mut reader = xof.finalize_xof();
    let mut a = Poly::default();
    let mut buf = [0u8; SHAKE128_RATE];
    let mut j = 0;
    while j < N {
        reader.read(&mut buf);
        for b in buf.chunks_exact(3) {
            // CoeffFromThreeBytes (Alg. 14): 23 bits, accepted when below q.
            let t = (b[0] as i32) | (b[1] as i32) << 8 | ((b[2] & 0x7f) as i32) << 16;
            if t < Q && j < N {
                a.0[j] = t;
                j += 1;
            }
        }
    }
    a
}

/// ExpandA (Alg. 32): A-hat[r][s] = RejNTTPoly(rho || s || r). On the heap (up to 56 KiB), so
/// that signing stays within small thread stacks (e.g. of C callers).
pub fn expand_a<const K: usize, const L: usize>(rho: &[u8; 32]) -> Box<Matrix<K, L>> {
    let mut m: Box<Matrix<K, L>> = vec![PolyVec::<L>::default(); K]
        .into_boxed_slice()
        .try_into()
        .unwrap_or_else(|_| unreachable!("K rows"));
    for (r, row) in m.iter_mut().enumerate() {
        for (s, e) in row.0.iter_mut().enumerate() {
            *e = rej_ntt_poly(rho, s as u8, r as u8);
        }
    }
    m
}

/// RejBoundedPoly (Alg. 31): coefficients in [-eta, eta] from SHAKE256(rho' || IntegerToBytes(r, 2)).
/// The rejection reveals only how many SHAKE bytes were consumed, as FIPS 204 allows.
fn rej_bounded_poly(rho_prime: &[u8; 64], nonce: u16, eta: i32, a: &mut Poly) {
    let mut xof = Shake256::default();
    xof.update(rho_prime);
    xof.update(&nonce.to_le_bytes());
    let mut reader = xof.finalize_xof();
    let mut buf = [0u8; SHAKE256_RATE];
    let mut j = 0;
    while j < N {
        reader.read(&mut buf);
        for &b in buf.iter() {
            // CoeffFromHalfByte (Alg. 15) on both nibbles.
            for t in [(b & 0x0f) as i32, (b >> 4) as i32] {
                if j >= N {
                    break;
                }
                if eta == 2 && t < 15 {
                    // t mod 5 without a division: (205 * t) >> 10 = floor(t / 5) for t < 15.
                    a.0[j] = 2 - (t - ((205 * t) >> 10) * 5);
                    j += 1;
                } else if eta == 4 && t < 9 {
                    a.0[j] = 4 - t;
                    j += 1;
                }
            }
        }
    }
    buf.zeroize();
}

/// ExpandS (Alg. 33): s1 from nonces 0..l, s2 from nonces l..l+k.
/// Writes into the caller's (zeroize-on-drop) storage so that no secret copies are left behind.
pub fn expand_s<const K: usize, const L: usize>(
    p: ParamSet,
    rho_prime: &[u8; 64],
    s1: &mut PolyVec<L>,
    s2: &mut PolyVec<K>,
) {
    for (i, e) in s1.0.iter_mut().enumerate() {
        rej_bounded_poly(rho_prime, i as u16, p.eta(), e);
    }
    for (i, e) in s2.0.iter_mut().enumerate() {
        rej_bounded_poly(rho_prime, (L + i) as u16, p.eta(), e);
    }
}

/// ExpandMask (Alg. 34): y_r = BitUnpack(SHAKE256(rho'' || IntegerToBytes(kappa + r, 2)), gamma1 - 1, gamma1).
/// Writes into the caller's storage (y is secret).
pub fn expand_mask<const L: usize>(p: ParamSet, rho_pp: &[u8; 64], kappa: u16, y: &mut PolyVec<L>) {
    let bits = p.gamma1_bits() as usize + 1;
    let mut buf = [0u8; 32 * 20];
    let buf = &mut buf[..32 * bits];
    for (r, e) in y.0.iter_mut().enumerate() {
        let mut xof = Shake256::default();
        xof.update(rho_pp);
        xof.update(&kappa.wrapping_add(r as u16).to_le_bytes());
        xof.finalize_xof().read(buf);
        super::packing::unpack_centered(buf, bits, p.gamma1(), &mut e.0);
    }
    buf.zeroize();
}

/// SampleInBall (Alg. 29): c with tau coefficients in {-1, 1}, from SHAKE256(c~).
/// Its running time depends only on c~, which is part of the signature.
pub fn sample_in_ball(p: ParamSet, c_tilde: &[u8]) -> Poly {
    let mut xof = Shake256::default();
    xof.update(c_tilde);
    let mut reader = xof.finalize_xof();
    let mut buf = [0u8; SHAKE256_RATE];
    reader.read(&mut buf);
    let mut signs = u64::from_le_bytes(buf[..8].try_into().expect("8 bytes"));
    let mut pos = 8;
    let mut c = Poly::default();
    for i in N - p.tau()..N {
        let j = loop {
            if pos == SHAKE256_RATE {
                reader.read(&mut buf);
                pos = 0;
            }
            let b = buf[pos] as usize;
            pos += 1;
            if b <= i {
                break b;
            }
        };
        c.0[i] = c.0[j];
        c.0[j] = 1 - 2 * (signs & 1) as i32;
        signs >>= 1;
    }
    c
}
