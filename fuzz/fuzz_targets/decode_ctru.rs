//! CTRU-Prime-653/761/1277 public-key, secret-key and ciphertext decoding (spec sections
//! 6.1-6.3) called directly (`pqgpu::fuzzing`, `--cfg fuzzing`), not through encapsulation or
//! decapsulation (`ctru_pk`, `ctru_sk`, `ctru_ct`). Properties, besides no panic:
//! * lengths: exactly the sizes of the spec's table (section 3) are decoded; any other is
//!   `BadLength`, as the public calls answer;
//! * public key: decoded here by the spec's Decode (section 6.1, which reduces and accepts
//!   anything); the library accepts iff re-encoding that decoding gives the input back (its
//!   canonical-encodings-only rule), and then returns the same values, all in [0, q);
//! * secret key: accepted iff every PackF nibble gives f = 2f' + 1 with f' in [-eta, eta]
//!   (section 5.2: f_0 odd in [1 - 2 eta, 2 eta + 1], the others even in [-2 eta, 2 eta]),
//!   the padding nibble (n is odd) is 0, and the embedded pk is accepted; f, h and z as read
//!   here; `BadKey` otherwise;
//! * ciphertext: always accepted (section 6.3), c_i = the d2-bit field read here;
//! * re-encoding: an accepted pk or sk re-encodes to itself; a ciphertext to itself with the
//!   padding bits of its last byte cleared: PackCT is not canonical, those bits are ignored on
//!   unpacking (decapsulation then rejects implicitly, as its re-encryption differs).
#![no_main]
#[path = "common.rs"]
mod common;
#[path = "decode.rs"]
mod decode;
use common::{CtruFixture, CTRU};
use decode::{field, shape};
use libfuzzer_sys::fuzz_target;
use pqgpu::{ctru::ParamSet, fuzzing as fz, Error};
use std::sync::OnceLock;

/// Spec section 3: (n, q, d2, eta, pk, sk, ct bytes).
const SPEC: [(usize, u32, usize, i32, usize, usize, usize); 3] = [
    (653, 4621, 11, 3, 994, 1353, 898),
    (761, 4591, 10, 2, 1158, 1571, 952),
    (1277, 7879, 10, 2, 2067, 2738, 1597),
];

static FIX: OnceLock<Vec<CtruFixture>> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let fix = FIX.get_or_init(|| CTRU.iter().map(|&p| common::ctru_fixture(p)).collect());
    let Some((choice, bytes, _raw)) = shape(data, |c| {
        let f = &fix[c % 3];
        match (c / 3) % 3 {
            0 => f.pk.clone(),
            1 => f.sk.clone(),
            _ => f.ct.clone(),
        }
    }) else {
        return;
    };
    let set = choice % 3;
    let p = CTRU[set];
    match (choice / 3) % 3 {
        0 => pk(p, SPEC[set], &bytes),
        1 => sk(p, SPEC[set], &bytes),
        _ => ct(p, SPEC[set], &bytes),
    }
});

type Spec = (usize, u32, usize, i32, usize, usize, usize);

/// The spec's Decode (section 6.1, NTRU Prime's Decode with every M_i = q): reads the level's
/// bytes, recurses on the rest, combines; values reduced mod M_i, no canonicity check.
fn spec_decode(s: &mut &[u8], m: &[u32]) -> Vec<u32> {
    fn take<'a>(s: &mut &'a [u8], n: usize) -> &'a [u8] {
        let (a, b) = s.split_at(n.min(s.len()));
        *s = b;
        a
    }
    let byte = |b: &[u8], i: usize| b.get(i).copied().unwrap_or(0) as u64;
    if m.len() == 1 {
        let v = match m[0] {
            1 => 0,
            2..=256 => byte(take(s, 1), 0),
            _ => {
                let b = take(s, 2);
                byte(b, 0) + 256 * byte(b, 1)
            }
        };
        return vec![(v % m[0] as u64) as u32];
    }
    let mut bottom = Vec::new(); // (value, scale)
    let mut m2 = Vec::new();
    for pair in m.chunks(2) {
        if pair.len() == 1 {
            m2.push(pair[0]);
            break;
        }
        let mm = pair[0] as u64 * pair[1] as u64;
        if mm > 256 * 16383 {
            let b = take(s, 2);
            bottom.push((byte(b, 0) + 256 * byte(b, 1), 65536));
            m2.push((mm.div_ceil(256).div_ceil(256)) as u32);
        } else if mm >= 16384 {
            bottom.push((byte(take(s, 1), 0), 256));
            m2.push(mm.div_ceil(256) as u32);
        } else {
            bottom.push((0, 1));
            m2.push(mm as u32);
        }
    }
    let r2 = spec_decode(s, &m2);
    let mut out = Vec::with_capacity(m.len());
    for (i, &(b, t)) in bottom.iter().enumerate() {
        let r = b + t * r2[i] as u64;
        let (m0, m1) = (m[2 * i] as u64, m[2 * i + 1] as u64);
        out.push((r % m0) as u32);
        out.push(((r / m0) % m1) as u32);
    }
    if m.len() % 2 == 1 {
        out.push(r2[m.len() / 2]);
    }
    out
}

/// The library's verdict and values on a right-length pk, checked against the spec's Decode.
fn check_pk(p: ParamSet, s: Spec, b: &[u8], r: Result<Vec<i32>, Error>) -> Option<Vec<i32>> {
    let (n, q) = (s.0, s.1);
    let mut rest = b;
    let spec: Vec<i32> = spec_decode(&mut rest, &vec![q; n])
        .into_iter()
        .map(|x| x as i32)
        .collect();
    assert!(
        rest.is_empty(),
        "the spec's Decode left {} bytes",
        rest.len()
    );
    let canonical = fz::ctru_pk_encode(p, &spec) == b;
    match r {
        Ok(h) => {
            assert!(canonical, "{p:?}: a non-canonical pk was accepted");
            assert!(h == spec, "{p:?}: pk values differ from the spec's Decode");
            assert!(h.iter().all(|&x| (0..q as i32).contains(&x)));
            Some(h)
        }
        Err(e) => {
            assert_eq!(e, Error::BadKey, "{p:?}");
            assert!(!canonical, "{p:?}: a canonical pk was rejected");
            None
        }
    }
}

fn pk(p: ParamSet, s: Spec, b: &[u8]) {
    let r = fz::ctru_pk_decode(p, b);
    if b.len() != s.4 {
        assert!(
            matches!(r, Err(Error::BadLength)),
            "{p:?} pk of {} bytes",
            b.len()
        );
        return;
    }
    if let Some(h) = check_pk(p, s, b, r) {
        assert!(
            fz::ctru_pk_encode(p, &h) == b,
            "{p:?}: pk does not re-encode"
        );
    }
}

fn sk(p: ParamSet, s: Spec, b: &[u8]) {
    let r = fz::ctru_sk_decode(p, b);
    if b.len() != s.5 {
        assert!(
            matches!(r, Err(Error::BadLength)),
            "{p:?} sk of {} bytes",
            b.len()
        );
        return;
    }
    let (n, eta) = (s.0, s.3);
    // sk = PackF(f) (ceil(n/2) bytes) || pk || z (32 bytes).
    let (f_part, rest) = b.split_at(n.div_ceil(2));
    let (pk_part, z) = rest.split_at(s.4);
    assert_eq!(z.len(), 32);
    let f: Vec<i32> = (0..n)
        .map(|i| 2 * eta + 1 - field(f_part, i, 4) as i32)
        .collect();
    let f_ok = f.iter().enumerate().all(|(i, &fi)| {
        let twice = fi - (i == 0) as i32; // 2 f'_i
        twice % 2 == 0 && (-2 * eta..=2 * eta).contains(&twice)
    }) && field(f_part, n, 4) == 0;
    let pk_r = fz::ctru_pk_decode(p, pk_part);
    let h = check_pk(p, s, pk_part, pk_r);
    match r {
        Ok(d) => {
            assert!(f_ok, "{p:?}: a malformed PackF(f) was accepted");
            assert!(
                h.as_ref() == Some(&d.h),
                "{p:?}: sk accepted with a bad pk or other h"
            );
            assert!(d.f == f && d.z == z, "{p:?}: f or z differs");
            assert!(
                fz::ctru_sk_encode(p, &d) == b,
                "{p:?}: sk does not re-encode"
            );
        }
        Err(e) => {
            assert_eq!(e, Error::BadKey, "{p:?}");
            assert!(!f_ok || h.is_none(), "{p:?}: a well-formed sk was rejected");
        }
    }
}

fn ct(p: ParamSet, s: Spec, b: &[u8]) {
    let r = fz::ctru_ct_decode(p, b);
    if b.len() != s.6 {
        assert!(
            matches!(r, Err(Error::BadLength)),
            "{p:?} ct of {} bytes",
            b.len()
        );
        return;
    }
    let (n, d2) = (s.0, s.2);
    let c = r.unwrap_or_else(|e| panic!("{p:?}: a right-length ciphertext gave {e:?}"));
    assert_eq!(c.len(), n);
    for (i, &ci) in c.iter().enumerate() {
        assert_eq!(ci as u32, field(b, i, d2), "c[{i}]");
    }
    // n * d2 bits are used; the rest of the last byte is padding.
    let mut canonical = b.to_vec();
    let used = n * d2 - 8 * (b.len() - 1);
    *canonical.last_mut().unwrap() &= ((1u16 << used) - 1) as u8;
    assert!(
        fz::ctru_ct_encode(p, &c) == canonical,
        "{p:?}: ct does not re-encode"
    );
}
