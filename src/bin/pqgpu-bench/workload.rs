//! Inputs for each measured operation, and the checks that its outputs are right.
//!
//! Every operation runs through the same `Backend` batch calls a library user gets, with host
//! buffers in and host buffers out: the figures are end-to-end.

use pqgpu::backend::{Backend, DecapsItem, EncapsItem, SignItem, VerifyItem};
use pqgpu::mldsa::{self, Message};
use pqgpu::{ctru, Error, Status};
use std::time::{Duration, Instant};

/// The benchmark's messages: 32 random bytes, as in the bar (a certificate's TBS hash).
pub const MSG_LEN: usize = 32;

fn random_bytes(n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    pqgpu::rng::fill(&mut v).expect("OS randomness");
    v
}

fn fresh_statuses(n: usize) -> Vec<Status> {
    vec![Err(Error::Panic); n]
}

/// Fails loudly when any item did not succeed: a benchmark of wrong results is worthless.
fn expect_all_ok(what: &str, statuses: &[Status]) -> Result<(), String> {
    let bad = statuses.iter().filter(|s| s.is_err()).count();
    match statuses.iter().find_map(|s| s.err()) {
        None => Ok(()),
        Some(e) => Err(format!(
            "{what}: {bad} of {} items failed (first: {e})",
            statuses.len()
        )),
    }
}

/// Buffers registered with a backend for direct transfers, unregistered on drop.
pub struct Registered<'a> {
    be: &'a dyn Backend,
    ptrs: Vec<*const u8>,
}

impl<'a> Registered<'a> {
    /// Registers each buffer; the buffers must not move or be freed while the guard lives.
    pub fn new(be: &'a dyn Backend, bufs: &[&[u8]]) -> Result<Self, String> {
        let mut r = Registered {
            be,
            ptrs: Vec::new(),
        };
        for b in bufs {
            be.register_host_memory(b)
                .map_err(|e| format!("registering {} bytes: {e}", b.len()))?;
            r.ptrs.push(b.as_ptr());
        }
        Ok(r)
    }
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        for &p in &self.ptrs {
            if let Err(e) = self.be.unregister_host_memory(p) {
                eprintln!("pqgpu-bench: unregistering a buffer: {e}");
            }
        }
    }
}

/// Keys, messages and signatures for one ML-DSA parameter set and batch size.
pub struct MlDsaBatch {
    pub p: mldsa::ParamSet,
    pub n: usize,
    seeds: Vec<u8>,
    pks: Vec<u8>,
    sks: Vec<u8>,
    msgs: Vec<u8>,
    sigs: Vec<u8>,
}

impl MlDsaBatch {
    pub fn new(p: mldsa::ParamSet, n: usize) -> Self {
        MlDsaBatch {
            p,
            n,
            seeds: random_bytes(32 * n),
            pks: vec![0; n * p.public_key_len()],
            sks: vec![0; n * p.secret_key_len()],
            msgs: random_bytes(MSG_LEN * n),
            sigs: vec![0; n * p.signature_len()],
        }
    }

    /// The buffers a server would register: keys, signatures, messages.
    pub fn host_buffers(&self) -> [&[u8]; 5] {
        [&self.seeds, &self.pks, &self.sks, &self.msgs, &self.sigs]
    }

    /// KeyGen from the batch's seeds; returns the time of the batch call.
    pub fn keygen(&mut self, be: &dyn Backend) -> Result<Duration, String> {
        let mut st = fresh_statuses(self.n);
        let t = Instant::now();
        be.mldsa_keygen(
            self.p,
            Some(&self.seeds),
            &mut self.pks,
            &mut self.sks,
            &mut st,
        );
        let dt = t.elapsed();
        expect_all_ok("keygen", &st)?;
        Ok(dt)
    }

    /// Hedged signing of every message with its own key.
    pub fn sign(&mut self, be: &dyn Backend) -> Result<Duration, String> {
        let (p, n) = (self.p, self.n);
        let items: Vec<SignItem> = (0..n)
            .map(|i| SignItem {
                sk: &self.sks[i * p.secret_key_len()..][..p.secret_key_len()],
                msg: Message::Pure {
                    ctx: &[],
                    msg: &self.msgs[i * MSG_LEN..][..MSG_LEN],
                },
                rnd: None,
            })
            .collect();
        let mut outs: Vec<&mut [u8]> = self.sigs.chunks_exact_mut(p.signature_len()).collect();
        let mut st = fresh_statuses(n);
        let t = Instant::now();
        be.mldsa_sign(p, &items, &mut outs, &mut st);
        let dt = t.elapsed();
        expect_all_ok("sign", &st)?;
        Ok(dt)
    }

    /// Verifies every signature; all must be valid.
    pub fn verify(&self, be: &dyn Backend) -> Result<Duration, String> {
        let items = self.verify_items();
        let mut st = fresh_statuses(self.n);
        let t = Instant::now();
        be.mldsa_verify(self.p, &items, &mut st);
        let dt = t.elapsed();
        expect_all_ok("verify", &st)?;
        Ok(dt)
    }

    fn verify_items(&self) -> Vec<VerifyItem<'_>> {
        let p = self.p;
        (0..self.n)
            .map(|i| VerifyItem {
                pk: &self.pks[i * p.public_key_len()..][..p.public_key_len()],
                msg: Message::Pure {
                    ctx: &[],
                    msg: &self.msgs[i * MSG_LEN..][..MSG_LEN],
                },
                sig: &self.sigs[i * p.signature_len()..][..p.signature_len()],
            })
            .collect()
    }

    /// Cross-checks up to `sample` items with another backend (the CPU ground truth): the same
    /// seeds give the same keys and the signatures verify there.
    pub fn cross_check(&self, reference: &dyn Backend, sample: usize) -> Result<(), String> {
        let (p, m) = (self.p, sample.min(self.n));
        let mut pks = vec![0; m * p.public_key_len()];
        let mut sks = vec![0; m * p.secret_key_len()];
        let mut st = fresh_statuses(m);
        reference.mldsa_keygen(p, Some(&self.seeds[..32 * m]), &mut pks, &mut sks, &mut st);
        expect_all_ok("reference keygen", &st)?;
        if pks[..] != self.pks[..pks.len()] || sks[..] != self.sks[..sks.len()] {
            return Err(format!(
                "{}: keys differ from the reference backend",
                p.name()
            ));
        }
        let items = &self.verify_items()[..m];
        let mut st = fresh_statuses(m);
        reference.mldsa_verify(p, items, &mut st);
        expect_all_ok("reference verify", &st)
    }
}

/// Keys, ciphertexts and shared secrets for one CTRU-Prime parameter set. Encapsulation and
/// decapsulation cycle through the first `keys` key pairs (1: the server case).
pub struct KemBatch {
    pub p: ctru::ParamSet,
    pub n: usize,
    keys: usize,
    seeds: Vec<u8>,
    pks: Vec<u8>,
    sks: Vec<u8>,
    cts: Vec<u8>,
    ss_enc: Vec<u8>,
    ss_dec: Vec<u8>,
}

impl KemBatch {
    pub fn new(p: ctru::ParamSet, n: usize, keys: usize) -> Self {
        KemBatch {
            p,
            n,
            keys: keys.clamp(1, n),
            seeds: random_bytes(64 * n),
            pks: vec![0; n * p.public_key_len()],
            sks: vec![0; n * p.secret_key_len()],
            cts: vec![0; n * p.ciphertext_len()],
            ss_enc: vec![0; n * p.shared_secret_len()],
            ss_dec: vec![0xff; n * p.shared_secret_len()],
        }
    }

    /// The buffers a server would register: keys, ciphertexts, shared secrets.
    pub fn host_buffers(&self) -> [&[u8]; 6] {
        [
            &self.seeds,
            &self.pks,
            &self.sks,
            &self.cts,
            &self.ss_enc,
            &self.ss_dec,
        ]
    }

    pub fn keygen(&mut self, be: &dyn Backend) -> Result<Duration, String> {
        let mut st = fresh_statuses(self.n);
        let t = Instant::now();
        be.kem_keygen(
            self.p,
            Some(&self.seeds),
            &mut self.pks,
            &mut self.sks,
            &mut st,
        );
        let dt = t.elapsed();
        expect_all_ok("kem keygen", &st)?;
        Ok(dt)
    }

    /// Encapsulation under the first `keys` public keys in turn, fresh coins per item.
    pub fn encaps(&mut self, be: &dyn Backend) -> Result<Duration, String> {
        let p = self.p;
        let items: Vec<EncapsItem> = (0..self.n)
            .map(|i| EncapsItem {
                pk: &self.pks[(i % self.keys) * p.public_key_len()..][..p.public_key_len()],
                coins: None,
            })
            .collect();
        let mut cts: Vec<&mut [u8]> = self.cts.chunks_exact_mut(p.ciphertext_len()).collect();
        let mut sss: Vec<&mut [u8]> = self
            .ss_enc
            .chunks_exact_mut(p.shared_secret_len())
            .collect();
        let mut st = fresh_statuses(self.n);
        let t = Instant::now();
        be.kem_encaps(p, &items, &mut cts, &mut sss, &mut st);
        let dt = t.elapsed();
        expect_all_ok("encaps", &st)?;
        Ok(dt)
    }

    /// Decapsulation with the matching secret keys; every shared secret must equal the
    /// encapsulated one.
    pub fn decaps(&mut self, be: &dyn Backend) -> Result<Duration, String> {
        let p = self.p;
        let items: Vec<DecapsItem> = self
            .cts
            .chunks_exact(p.ciphertext_len())
            .enumerate()
            .map(|(i, ct)| DecapsItem {
                sk: &self.sks[(i % self.keys) * p.secret_key_len()..][..p.secret_key_len()],
                ct,
            })
            .collect();
        let mut sss: Vec<&mut [u8]> = self
            .ss_dec
            .chunks_exact_mut(p.shared_secret_len())
            .collect();
        let mut st = fresh_statuses(self.n);
        let t = Instant::now();
        be.kem_decaps(p, &items, &mut sss, &mut st);
        let dt = t.elapsed();
        expect_all_ok("decaps", &st)?;
        if self.ss_dec != self.ss_enc {
            return Err(format!(
                "{}: decapsulated secrets differ from encapsulated ones",
                p.name()
            ));
        }
        Ok(dt)
    }
}
