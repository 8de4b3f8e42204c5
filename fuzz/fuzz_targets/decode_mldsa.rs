//! ML-DSA-44/65/87 and Dilithium2/3/5 pkDecode, skDecode and sigDecode (FIPS 204 Alg. 23, 25,
//! 27 with HintBitUnpack, Alg. 21) called directly (`pqgpu::fuzzing`, `--cfg fuzzing`): tens of
//! thousands of executions per second, against a few thousand through verification and signing
//! (`mldsa_pk`, `mldsa_sk`, `mldsa_sig`). Properties, besides no panic:
//! * lengths: exactly the sizes of FIPS 204 Table 2 (round 3: 32-byte tr and c~) are decoded;
//!   any other is `BadLength` (pk, sk) or `VerifyFailed` (sig), as the public calls answer;
//! * verdict: a pk is always accepted; an sk is rejected (`BadKey`) iff an s1/s2 field exceeds
//!   2 eta; a signature is rejected (`VerifyFailed`) iff its hint encoding breaks Alg. 21's
//!   rules. Both verdicts are recomputed here from the bytes, not by the decoder;
//! * values: every decoded coefficient equals the field read here (t1, s = eta - field,
//!   t0 = 2^12 - field, z = gamma1 - field, h = the listed positions);
//! * canonical: every accepted input re-encodes (pkEncode, skEncode, sigEncode) to itself.
#![no_main]
#[path = "common.rs"]
mod common;
#[path = "decode.rs"]
mod decode;
use common::MldsaFixture;
use decode::{field, shape};
use libfuzzer_sys::fuzz_target;
use pqgpu::{fuzzing as fz, mldsa::ParamSet, Error};
use std::sync::OnceLock;

/// ML-DSA-44/65/87, then Dilithium2/3/5.
const SETS: [ParamSet; 6] = ParamSet::EVERY;

/// Spec-side numbers per set: (k, l, eta, gamma1, omega, c~ bytes, tr bytes) from FIPS 204
/// Table 1 (c~ = lambda/4) and round-3 Dilithium (32-byte c~ and tr), and the sizes
/// (pk, sk, sig) of FIPS 204 Table 2 and the round-3 specification.
struct Spec {
    k: usize,
    l: usize,
    eta: u32,
    gamma1: i32,
    omega: usize,
    c_tilde: usize,
    tr: usize,
    pk_len: usize,
    sk_len: usize,
    sig_len: usize,
}

const fn spec(i: usize) -> Spec {
    let (k, l, eta, gamma1, omega) = match i % 3 {
        0 => (4, 4, 2, 1 << 17, 80),
        1 => (6, 5, 4, 1 << 19, 55),
        _ => (8, 7, 2, 1 << 19, 75),
    };
    let pk_len = [1312, 1952, 2592][i % 3];
    let (c_tilde, tr, sk_len, sig_len) = if i < 3 {
        (
            [32, 48, 64][i],
            64,
            [2560, 4032, 4896][i],
            [2420, 3309, 4627][i],
        )
    } else {
        (32, 32, [2528, 4000, 4864][i - 3], [2420, 3293, 4595][i - 3])
    };
    Spec {
        k,
        l,
        eta,
        gamma1,
        omega,
        c_tilde,
        tr,
        pk_len,
        sk_len,
        sig_len,
    }
}

static FIX: OnceLock<Vec<MldsaFixture>> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let fix = FIX.get_or_init(|| SETS.iter().map(|&p| common::mldsa_fixture(p)).collect());
    let Some((choice, bytes, raw)) = shape(data, |c| {
        let f = &fix[c % 6];
        match (c / 6) % 3 {
            0 => f.pk.clone(),
            1 => f.sk.clone(),
            _ => f.sig.clone(),
        }
    }) else {
        return;
    };
    let set = choice % 6;
    let (p, s) = (SETS[set], spec(set));
    match (choice / 6) % 3 {
        0 => pk(p, &s, &bytes, raw),
        1 => sk(p, &s, &bytes, raw),
        _ => sig(p, &s, &bytes, raw),
    }
});

fn pk(p: ParamSet, s: &Spec, b: &[u8], raw: bool) {
    let r = fz::mldsa_pk_decode(p, b);
    if b.len() != s.pk_len {
        assert!(
            matches!(r, Err(Error::BadLength)),
            "{p:?} pk of {} bytes",
            b.len()
        );
        return;
    }
    let Ok(d) = r else {
        panic!("{p:?}: a right-length public key was rejected (raw {raw})");
    };
    assert_eq!(d.rho[..], b[..32]);
    assert_eq!(d.t1.len(), s.k);
    for (i, t) in d.t1.iter().enumerate() {
        for (j, &c) in t.iter().enumerate() {
            assert_eq!(c as u32, field(&b[32 + 320 * i..], j, 10), "t1[{i}][{j}]");
        }
    }
    assert!(
        fz::mldsa_pk_encode(p, &d) == b,
        "{p:?}: pk does not re-encode"
    );
}

fn sk(p: ParamSet, s: &Spec, b: &[u8], raw: bool) {
    let r = fz::mldsa_sk_decode(p, b);
    if b.len() != s.sk_len {
        assert!(
            matches!(r, Err(Error::BadLength)),
            "{p:?} sk of {} bytes",
            b.len()
        );
        return;
    }
    // Alg. 24: rho || K || tr || s1 and s2 at bitlen(2 eta) bits || t0 at d = 13 bits.
    let eb = if s.eta == 2 { 3 } else { 4 };
    let s_at = 64 + s.tr;
    let t0_at = s_at + 32 * eb * (s.k + s.l);
    let in_range = (0..256 * (s.k + s.l)).all(|j| field(&b[s_at..t0_at], j, eb) <= 2 * s.eta);
    let d = match r {
        Err(e) => {
            assert_eq!(e, Error::BadKey, "{p:?}");
            assert!(
                !in_range,
                "{p:?}: an sk with s1/s2 in range was rejected (raw {raw})"
            );
            return;
        }
        Ok(d) => d,
    };
    assert!(
        in_range,
        "{p:?}: an sk with s1/s2 out of range was accepted"
    );
    assert!(d.rho[..] == b[..32] && d.key[..] == b[32..64] && d.tr[..] == b[64..s_at]);
    assert_eq!((d.s1.len(), d.s2.len(), d.t0.len()), (s.l, s.k, s.k));
    for (i, poly) in d.s1.iter().chain(d.s2.iter()).enumerate() {
        for (j, &c) in poly.iter().enumerate() {
            let f = field(&b[s_at..t0_at], 256 * i + j, eb) as i32;
            assert_eq!(c, s.eta as i32 - f, "s[{i}][{j}]");
        }
    }
    for (i, poly) in d.t0.iter().enumerate() {
        for (j, &c) in poly.iter().enumerate() {
            assert_eq!(
                c,
                4096 - field(&b[t0_at..], 256 * i + j, 13) as i32,
                "t0[{i}][{j}]"
            );
        }
    }
    assert!(
        fz::mldsa_sk_encode(p, &d) == b,
        "{p:?}: sk does not re-encode"
    );
}

/// The hint part y (omega + k bytes) is well formed (FIPS 204 Alg. 21): the k counts
/// y[omega + i] are non-decreasing and at most omega; the positions listed for one polynomial,
/// y[count(i-1) .. count(i)], strictly increase; every byte after the last count's position,
/// up to omega, is zero. Returns the positions per polynomial.
fn hint_positions(y: &[u8], omega: usize, k: usize) -> Option<Vec<&[u8]>> {
    let counts = &y[omega..omega + k];
    let mut out = Vec::with_capacity(k);
    let mut from = 0usize;
    for &c in counts {
        let c = c as usize;
        if c < from || c > omega {
            return None;
        }
        let listed = &y[from..c];
        if listed.windows(2).any(|w| w[0] >= w[1]) {
            return None;
        }
        out.push(listed);
        from = c;
    }
    y[from..omega].iter().all(|&x| x == 0).then_some(out)
}

fn sig(p: ParamSet, s: &Spec, b: &[u8], raw: bool) {
    let r = fz::mldsa_sig_decode(p, b);
    if b.len() != s.sig_len {
        assert!(
            matches!(r, Err(Error::VerifyFailed)),
            "{p:?} sig of {} bytes",
            b.len()
        );
        return;
    }
    // Alg. 26: c~ || z at bitlen(gamma1) + 1 bits || the hint (omega + k bytes).
    let zbits = if s.gamma1 == 1 << 17 { 18 } else { 20 };
    let h_at = s.c_tilde + 32 * zbits * s.l;
    assert_eq!(h_at + s.omega + s.k, b.len());
    let hints = hint_positions(&b[h_at..], s.omega, s.k);
    let d = match r {
        Err(e) => {
            assert_eq!(e, Error::VerifyFailed, "{p:?}");
            assert!(
                hints.is_none(),
                "{p:?}: a well-formed hint was rejected (raw {raw})"
            );
            return;
        }
        Ok(d) => d,
    };
    let Some(hints) = hints else {
        panic!("{p:?}: a malformed hint was accepted");
    };
    assert_eq!(d.c_tilde[..], b[..s.c_tilde]);
    assert_eq!((d.z.len(), d.h.len()), (s.l, s.k));
    for (i, poly) in d.z.iter().enumerate() {
        for (j, &c) in poly.iter().enumerate() {
            let f = field(&b[s.c_tilde..h_at], 256 * i + j, zbits) as i32;
            assert_eq!(c, s.gamma1 - f, "z[{i}][{j}]");
        }
    }
    let mut weight = 0;
    for (poly, listed) in d.h.iter().zip(&hints) {
        let mut set = [0i32; 256];
        listed.iter().for_each(|&j| set[j as usize] = 1);
        assert!(poly == &set, "{p:?}: h differs from the listed positions");
        weight += listed.len();
    }
    assert!(weight <= s.omega);
    assert!(
        fz::mldsa_sig_encode(p, &d) == b,
        "{p:?}: sig does not re-encode"
    );
}
