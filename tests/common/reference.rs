//! A batch on a backend under test next to the same batch on the CPU backend, the ground
//! truth: each helper runs both and asserts equal statuses and equal bytes, row by row, so
//! that a failure names the item.

use pqgpu::backend::{cpu_backend, Backend, DecapsItem, EncapsItem, SignItem, VerifyItem};
use pqgpu::{ctru, mldsa, Error, Status};

/// Asserts that two arrays of `row`-byte rows are equal, naming the first row that is not.
pub fn assert_rows_eq(what: &str, got: &[u8], want: &[u8], row: usize) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (g, w)) in got.chunks(row).zip(want.chunks(row)).enumerate() {
        assert!(g == w, "{what} {i} differs");
    }
}

/// Key pairs (pks, sks) equal row by row.
fn assert_keys_eq(
    set: &str,
    got: &(Vec<u8>, Vec<u8>),
    want: &(Vec<u8>, Vec<u8>),
    pk_len: usize,
    sk_len: usize,
) {
    assert_rows_eq(&format!("{set} pk"), &got.0, &want.0, pk_len);
    assert_rows_eq(&format!("{set} sk"), &got.1, &want.1, sk_len);
}

/// ML-DSA keys for `seeds` (n x 32 bytes) on `b`; every status must be `Ok`. (pks, sks).
pub fn mldsa_keygen(b: &dyn Backend, p: mldsa::ParamSet, seeds: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let n = seeds.len() / 32;
    let mut pk = vec![0u8; n * p.public_key_len()];
    let mut sk = vec![0u8; n * p.secret_key_len()];
    let mut st = vec![Err(Error::Panic); n];
    b.mldsa_keygen(p, Some(seeds), &mut pk, &mut sk, &mut st);
    assert!(st.iter().all(|s| s.is_ok()), "{} keygen statuses", p.name());
    (pk, sk)
}

/// ML-DSA keys from the same seeds on `b` and on the CPU, equal row by row; `b`'s.
pub fn mldsa_keygen_both(b: &dyn Backend, p: mldsa::ParamSet, seeds: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let got = mldsa_keygen(b, p, seeds);
    let want = mldsa_keygen(&*cpu_backend(), p, seeds);
    assert_keys_eq(
        p.name(),
        &got,
        &want,
        p.public_key_len(),
        p.secret_key_len(),
    );
    got
}

/// Signs `items` on `b` into signature buffers of `sig_lens[i]` bytes: (signatures, statuses).
pub fn sign(
    b: &dyn Backend,
    p: mldsa::ParamSet,
    items: &[SignItem<'_>],
    sig_lens: &[usize],
) -> (Vec<Vec<u8>>, Vec<Status>) {
    assert_eq!(items.len(), sig_lens.len());
    let mut sigs: Vec<Vec<u8>> = sig_lens.iter().map(|&l| vec![0u8; l]).collect();
    let mut refs: Vec<&mut [u8]> = sigs.iter_mut().map(|s| &mut s[..]).collect();
    let mut st = vec![Err(Error::Panic); items.len()];
    b.mldsa_sign(p, items, &mut refs, &mut st);
    (sigs, st)
}

/// Verifies `items` on `b`: the statuses.
pub fn verify(b: &dyn Backend, p: mldsa::ParamSet, items: &[VerifyItem<'_>]) -> Vec<Status> {
    let mut st = vec![Err(Error::Panic); items.len()];
    b.mldsa_verify(p, items, &mut st);
    st
}

/// CTRU-Prime keys for `seeds` (n x 64 bytes) on `b`; every status must be `Ok`. (pks, sks).
pub fn kem_keygen(b: &dyn Backend, p: ctru::ParamSet, seeds: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let n = seeds.len() / 64;
    let mut pk = vec![0u8; n * p.public_key_len()];
    let mut sk = vec![0u8; n * p.secret_key_len()];
    let mut st = vec![Err(Error::Panic); n];
    b.kem_keygen(p, Some(seeds), &mut pk, &mut sk, &mut st);
    assert!(st.iter().all(|s| s.is_ok()), "{} keygen statuses", p.name());
    (pk, sk)
}

/// CTRU-Prime keys from the same seeds on `b` and on the CPU, equal row by row; `b`'s.
pub fn kem_keygen_both(b: &dyn Backend, p: ctru::ParamSet, seeds: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let got = kem_keygen(b, p, seeds);
    let want = kem_keygen(&*cpu_backend(), p, seeds);
    assert_keys_eq(
        p.name(),
        &got,
        &want,
        p.public_key_len(),
        p.secret_key_len(),
    );
    got
}

/// Encapsulates `items` on `b` and on the CPU; asserts equal statuses, and equal ciphertexts
/// and keys where the CPU succeeded. `b`'s (ciphertexts, shared secrets, statuses).
pub fn kem_encaps_both(
    b: &dyn Backend,
    p: ctru::ParamSet,
    items: &[EncapsItem<'_>],
) -> (Vec<Vec<u8>>, Vec<[u8; 32]>, Vec<Status>) {
    let run = |b: &dyn Backend| {
        let mut cts = vec![vec![0u8; p.ciphertext_len()]; items.len()];
        let mut sss = vec![[0u8; 32]; items.len()];
        let mut st = vec![Err(Error::Panic); items.len()];
        let mut ct_refs: Vec<&mut [u8]> = cts.iter_mut().map(|c| &mut c[..]).collect();
        let mut ss_refs: Vec<&mut [u8]> = sss.iter_mut().map(|s| &mut s[..]).collect();
        b.kem_encaps(p, items, &mut ct_refs, &mut ss_refs, &mut st);
        (cts, sss, st)
    };
    let g = run(b);
    let c = run(&*cpu_backend());
    for i in 0..items.len() {
        assert_eq!(g.2[i], c.2[i], "{} encaps status {i}", p.name());
        if c.2[i].is_ok() {
            assert!(g.0[i] == c.0[i], "{} ct {i}", p.name());
            assert_eq!(g.1[i], c.1[i], "{} encaps ss {i}", p.name());
        }
    }
    g
}

/// Decapsulates `items` on `b` and on the CPU; asserts equal statuses, and equal keys where
/// the CPU succeeded. `b`'s shared secrets.
pub fn kem_decaps_both(
    b: &dyn Backend,
    p: ctru::ParamSet,
    items: &[DecapsItem<'_>],
) -> Vec<[u8; 32]> {
    let run = |b: &dyn Backend| {
        let mut sss = vec![[0u8; 32]; items.len()];
        let mut st = vec![Err(Error::Panic); items.len()];
        let mut ss_refs: Vec<&mut [u8]> = sss.iter_mut().map(|s| &mut s[..]).collect();
        b.kem_decaps(p, items, &mut ss_refs, &mut st);
        (sss, st)
    };
    let g = run(b);
    let c = run(&*cpu_backend());
    for i in 0..items.len() {
        assert_eq!(g.1[i], c.1[i], "{} decaps status {i}", p.name());
        if c.1[i].is_ok() {
            assert_eq!(g.0[i], c.0[i], "{} decaps ss {i}", p.name());
        }
    }
    g.0
}
