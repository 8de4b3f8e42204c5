//! Inputs for each measured operation, driven through the C ABI, and the checks that the
//! outputs are right.
//!
//! Every timed batch is what a C server does: `pqg_*_submit` on the caller's own arrays
//! (registered with `pqg_host_register` or plain heap memory), then `pqg_job_wait` and
//! `pqg_job_free`, with NULL seeds / coins / rnd (fresh randomness) and 32-byte messages.
//! The request arrays are filled before the clock starts, as a server fills them while
//! requests arrive.

use pqgpu::ffi::*;
use pqgpu::{mldsa, Alg};
use std::ptr::{null, null_mut};
use std::time::{Duration, Instant};

/// The benchmark's messages: 32 random bytes (the size of a certificate's TBS hash).
pub const MSG_LEN: usize = 32;

/// The measured library's version (`pqg_version`), not this benchmark's.
pub fn library_version() -> String {
    // SAFETY: pqg_version returns a static NUL-terminated string.
    unsafe { std::ffi::CStr::from_ptr(pqg_version()) }
        .to_string_lossy()
        .into_owned()
}

pub(crate) fn random_bytes(n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    pqgpu::rng::fill_bulk(&mut v).expect("OS randomness");
    v
}

pub(crate) fn check(what: &str, r: pqg_status) -> Result<(), String> {
    match r {
        PQG_OK => Ok(()),
        e => Err(format!("{what}: {}", status_name(e))),
    }
}

fn status_name(s: pqg_status) -> String {
    // SAFETY: pqg_status_str returns a static NUL-terminated string for every value.
    unsafe { std::ffi::CStr::from_ptr(pqg_status_str(s)) }
        .to_string_lossy()
        .into_owned()
}

/// Fails loudly when any item did not succeed: a benchmark of wrong results is worthless.
pub(crate) fn expect_all_ok(what: &str, statuses: &[pqg_status]) -> Result<(), String> {
    let bad = statuses.iter().filter(|&&s| s != PQG_OK).count();
    match statuses.iter().find(|&&s| s != PQG_OK) {
        None => Ok(()),
        Some(&e) => Err(format!(
            "{what}: {bad} of {} items failed (first: {})",
            statuses.len(),
            status_name(e)
        )),
    }
}

/// A `pqg_context`, freed on drop.
pub struct Context(*mut pqg_context);

// SAFETY: a pqg_context may be used from any thread (the C contract).
unsafe impl Send for Context {}
unsafe impl Sync for Context {}

impl Context {
    pub fn new(backend: pqg_backend) -> Result<Context, String> {
        let mut ctx = null_mut();
        // SAFETY: ctx is a valid out-pointer.
        check("pqg_context_new", unsafe {
            pqg_context_new(backend, &mut ctx)
        })?;
        Ok(Context(ctx))
    }

    pub fn raw(&self) -> *mut pqg_context {
        self.0
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        // SAFETY: created by pqg_context_new, freed once.
        unsafe { pqg_context_free(self.0) }
    }
}

/// Runs one submit call and waits for its job; returns the time from submit to completion.
pub(crate) fn submit_and_wait(
    what: &str,
    submit: impl FnOnce(*mut *mut pqg_job) -> pqg_status,
) -> Result<Duration, String> {
    let mut job = null_mut();
    let t = Instant::now();
    check(what, submit(&mut job))?;
    // SAFETY: job came from a successful submit; waited on and freed once.
    let r = unsafe { pqg_job_wait(job, -1) };
    let dt = t.elapsed();
    // SAFETY: as above.
    unsafe { pqg_job_free(job) };
    check(what, r)?;
    Ok(dt)
}

/// Buffers registered with `pqg_host_register`, unregistered on drop.
pub struct Registered<'a> {
    ctx: &'a Context,
    ptrs: Vec<*const u8>,
}

impl<'a> Registered<'a> {
    /// Registers each buffer; the buffers must not move or be freed while the guard lives.
    pub fn new(ctx: &'a Context, bufs: &[&[u8]]) -> Result<Self, String> {
        let mut r = Registered {
            ctx,
            ptrs: Vec::new(),
        };
        for b in bufs.iter().filter(|b| !b.is_empty()) {
            // SAFETY: b is a live buffer that the caller keeps in place while the guard lives.
            let st = unsafe { pqg_host_register(ctx.raw(), b.as_ptr(), b.len()) };
            check(&format!("registering {} bytes", b.len()), st)?;
            r.ptrs.push(b.as_ptr());
        }
        Ok(r)
    }
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        for &p in &self.ptrs {
            // SAFETY: p was registered on this live context.
            let st = unsafe { pqg_host_unregister(self.ctx.raw(), p) };
            if st != PQG_OK {
                eprintln!("pqgpu-bench: unregistering a buffer: {}", status_name(st));
            }
        }
    }
}

/// Keys, messages and signatures for one ML-DSA parameter set and batch size.
pub struct MlDsaBatch {
    pub p: mldsa::ParamSet,
    pub n: usize,
    alg: pqg_alg,
    pks: Vec<u8>,
    sks: Vec<u8>,
    msgs: Vec<u8>,
    sigs: Vec<u8>,
    statuses: Vec<pqg_status>,
}

impl MlDsaBatch {
    pub fn new(p: mldsa::ParamSet, n: usize) -> Self {
        MlDsaBatch {
            p,
            n,
            alg: Alg::MlDsa(p).code(),
            pks: vec![0; n * p.public_key_len()],
            sks: vec![0; n * p.secret_key_len()],
            msgs: random_bytes(MSG_LEN * n),
            sigs: vec![0; n * p.signature_len()],
            statuses: vec![PQG_PENDING; n],
        }
    }

    /// The buffers a server would register: keys, messages, signatures.
    pub fn host_buffers(&self) -> [&[u8]; 4] {
        [&self.pks, &self.sks, &self.msgs, &self.sigs]
    }

    /// `pqg_mldsa_keygen_submit` with fresh randomness into the batch's key arrays.
    pub fn keygen(&mut self, ctx: &Context) -> Result<Duration, String> {
        self.statuses.fill(PQG_PENDING);
        let (pks, sks, st) = (
            self.pks.as_mut_ptr(),
            self.sks.as_mut_ptr(),
            self.statuses.as_mut_ptr(),
        );
        // SAFETY: the arrays hold n rows each and live until the job is freed.
        let dt = submit_and_wait("keygen submit", |job| unsafe {
            pqg_mldsa_keygen_submit(ctx.raw(), self.alg, self.n, null(), pks, sks, st, job)
        })?;
        expect_all_ok("keygen", &self.statuses)?;
        Ok(dt)
    }

    /// Hedged signing of every message with its own key.
    pub fn sign(&mut self, ctx: &Context) -> Result<Duration, String> {
        let p = self.p;
        let (skl, sgl) = (p.secret_key_len(), p.signature_len());
        let sks = self.sks.as_ptr();
        let msgs = self.msgs.as_ptr();
        let sigs = self.sigs.as_mut_ptr();
        let reqs: Vec<pqg_sign_request> = (0..self.n)
            .map(|i| pqg_sign_request {
                sk: sks.wrapping_add(i * skl),
                msg: msgs.wrapping_add(i * MSG_LEN),
                msg_len: MSG_LEN,
                context: null(),
                context_len: 0,
                rnd: null(),
                sig: sigs.wrapping_add(i * sgl),
            })
            .collect();
        self.statuses.fill(PQG_PENDING);
        let st = self.statuses.as_mut_ptr();
        // SAFETY: every request points into the batch's live arrays.
        let dt = submit_and_wait("sign submit", |job| unsafe {
            pqg_mldsa_sign_submit(ctx.raw(), self.alg, reqs.as_ptr(), self.n, st, job)
        })?;
        expect_all_ok("sign", &self.statuses)?;
        Ok(dt)
    }

    fn verify_requests(&self, range: std::ops::Range<usize>) -> Vec<pqg_verify_request> {
        let p = self.p;
        let (pkl, sgl) = (p.public_key_len(), p.signature_len());
        range
            .map(|i| pqg_verify_request {
                pk: self.pks[i * pkl..].as_ptr(),
                msg: self.msgs[i * MSG_LEN..].as_ptr(),
                msg_len: MSG_LEN,
                context: null(),
                context_len: 0,
                sig: self.sigs[i * sgl..].as_ptr(),
                sig_len: sgl,
            })
            .collect()
    }

    /// Verifies every signature; all must be valid.
    pub fn verify(&mut self, ctx: &Context) -> Result<Duration, String> {
        let reqs = self.verify_requests(0..self.n);
        self.statuses.fill(PQG_PENDING);
        let st = self.statuses.as_mut_ptr();
        // SAFETY: every request points into the batch's live arrays.
        let dt = submit_and_wait("verify submit", |job| unsafe {
            pqg_mldsa_verify_submit(ctx.raw(), self.alg, reqs.as_ptr(), self.n, st, job)
        })?;
        expect_all_ok("verify", &self.statuses)?;
        Ok(dt)
    }

    /// Cross-checks up to `sample` items with the CPU backend (the ground truth): the batch's
    /// signatures verify there under the batch's keys, and the same seeds give the same keys
    /// on both contexts.
    pub fn cross_check(&self, ctx: &Context, cpu: &Context, sample: usize) -> Result<(), String> {
        let (p, m) = (self.p, sample.min(self.n));
        let reqs = self.verify_requests(0..m);
        let mut st = vec![PQG_PENDING; m];
        // SAFETY: the requests point into the batch's live arrays.
        submit_and_wait("reference verify", |job| unsafe {
            pqg_mldsa_verify_submit(cpu.raw(), self.alg, reqs.as_ptr(), m, st.as_mut_ptr(), job)
        })?;
        expect_all_ok("reference verify", &st)?;
        let seeds = random_bytes(32 * m);
        let mut keys = Vec::new();
        for c in [ctx, cpu] {
            let mut pks = vec![0u8; m * p.public_key_len()];
            let mut sks = vec![0u8; m * p.secret_key_len()];
            st.fill(PQG_PENDING);
            // SAFETY: arrays of m rows, alive until the job is freed.
            submit_and_wait("seeded keygen", |job| unsafe {
                pqg_mldsa_keygen_submit(
                    c.raw(),
                    self.alg,
                    m,
                    seeds.as_ptr(),
                    pks.as_mut_ptr(),
                    sks.as_mut_ptr(),
                    st.as_mut_ptr(),
                    job,
                )
            })?;
            expect_all_ok("seeded keygen", &st)?;
            keys.push((pks, sks));
        }
        if keys[0] != keys[1] {
            return Err(format!("{}: keys differ from the CPU backend's", p.name()));
        }
        Ok(())
    }

    /// One `pqg_mldsa_keygen` / `pqg_mldsa_sign` / `pqg_mldsa_verify` call on item 0.
    pub fn single(&mut self, ctx: &Context, op: &str) -> Result<Duration, String> {
        let p = self.p;
        let (pkl, skl, sgl) = (p.public_key_len(), p.secret_key_len(), p.signature_len());
        let c = ctx.raw();
        let t = Instant::now();
        // SAFETY: every pointer is a live buffer of the stated length.
        let r = unsafe {
            match op {
                "keygen" => pqg_mldsa_keygen(
                    c,
                    self.alg,
                    null(),
                    self.pks.as_mut_ptr(),
                    pkl,
                    self.sks.as_mut_ptr(),
                    skl,
                ),
                "sign" => pqg_mldsa_sign(
                    c,
                    self.alg,
                    self.sks.as_ptr(),
                    skl,
                    self.msgs.as_ptr(),
                    MSG_LEN,
                    null(),
                    0,
                    null(),
                    self.sigs.as_mut_ptr(),
                    sgl,
                ),
                _ => pqg_mldsa_verify(
                    c,
                    self.alg,
                    self.pks.as_ptr(),
                    pkl,
                    self.msgs.as_ptr(),
                    MSG_LEN,
                    null(),
                    0,
                    self.sigs.as_ptr(),
                    sgl,
                ),
            }
        };
        let dt = t.elapsed();
        check(op, r)?;
        Ok(dt)
    }
}

/// Keys, ciphertexts and shared secrets for one KEM parameter set (CTRU-Prime or ML-KEM). Encapsulation and
/// decapsulation cycle through the first `keys` key pairs (1: the server case).
pub struct KemBatch {
    pub p: Alg,
    pub n: usize,
    alg: pqg_alg,
    keys: usize,
    pks: Vec<u8>,
    sks: Vec<u8>,
    cts: Vec<u8>,
    ss_enc: Vec<u8>,
    ss_dec: Vec<u8>,
    statuses: Vec<pqg_status>,
}

impl KemBatch {
    pub fn new(p: Alg, n: usize, keys: usize) -> Self {
        KemBatch {
            p,
            n,
            alg: p.code(),
            keys: keys.clamp(1, n),
            pks: vec![0; n * p.public_key_len()],
            sks: vec![0; n * p.secret_key_len()],
            cts: vec![0; n * p.ciphertext_len()],
            ss_enc: vec![0; n * p.shared_secret_len()],
            ss_dec: vec![0xff; n * p.shared_secret_len()],
            statuses: vec![PQG_PENDING; n],
        }
    }

    /// The buffers a server would register: keys, ciphertexts, shared secrets.
    pub fn host_buffers(&self) -> [&[u8]; 5] {
        [&self.pks, &self.sks, &self.cts, &self.ss_enc, &self.ss_dec]
    }

    pub fn keygen(&mut self, ctx: &Context) -> Result<Duration, String> {
        self.statuses.fill(PQG_PENDING);
        let (pks, sks, st) = (
            self.pks.as_mut_ptr(),
            self.sks.as_mut_ptr(),
            self.statuses.as_mut_ptr(),
        );
        // SAFETY: the arrays hold n rows each and live until the job is freed.
        let dt = submit_and_wait("kem keygen submit", |job| unsafe {
            pqg_kem_keygen_submit(ctx.raw(), self.alg, self.n, null(), pks, sks, st, job)
        })?;
        expect_all_ok("kem keygen", &self.statuses)?;
        Ok(dt)
    }

    /// Encapsulation under the first `keys` public keys in turn, fresh coins per item.
    pub fn encaps(&mut self, ctx: &Context) -> Result<Duration, String> {
        let p = self.p;
        let (pkl, ctl, ssl) = (
            p.public_key_len(),
            p.ciphertext_len(),
            p.shared_secret_len(),
        );
        let (pks, cts, sss) = (
            self.pks.as_ptr(),
            self.cts.as_mut_ptr(),
            self.ss_enc.as_mut_ptr(),
        );
        let reqs: Vec<pqg_encaps_request> = (0..self.n)
            .map(|i| pqg_encaps_request {
                pk: pks.wrapping_add((i % self.keys) * pkl),
                coins: null(),
                ct: cts.wrapping_add(i * ctl),
                ss: sss.wrapping_add(i * ssl),
            })
            .collect();
        self.statuses.fill(PQG_PENDING);
        let st = self.statuses.as_mut_ptr();
        // SAFETY: every request points into the batch's live arrays.
        let dt = submit_and_wait("encaps submit", |job| unsafe {
            pqg_kem_encaps_submit(ctx.raw(), self.alg, reqs.as_ptr(), self.n, st, job)
        })?;
        expect_all_ok("encaps", &self.statuses)?;
        Ok(dt)
    }

    /// Decapsulation with the matching secret keys; every shared secret must equal the
    /// encapsulated one.
    pub fn decaps(&mut self, ctx: &Context) -> Result<Duration, String> {
        let p = self.p;
        let (skl, ctl, ssl) = (
            p.secret_key_len(),
            p.ciphertext_len(),
            p.shared_secret_len(),
        );
        let (sks, cts, sss) = (
            self.sks.as_ptr(),
            self.cts.as_ptr(),
            self.ss_dec.as_mut_ptr(),
        );
        let reqs: Vec<pqg_decaps_request> = (0..self.n)
            .map(|i| pqg_decaps_request {
                sk: sks.wrapping_add((i % self.keys) * skl),
                ct: cts.wrapping_add(i * ctl),
                ss: sss.wrapping_add(i * ssl),
            })
            .collect();
        self.statuses.fill(PQG_PENDING);
        let st = self.statuses.as_mut_ptr();
        // SAFETY: every request points into the batch's live arrays.
        let dt = submit_and_wait("decaps submit", |job| unsafe {
            pqg_kem_decaps_submit(ctx.raw(), self.alg, reqs.as_ptr(), self.n, st, job)
        })?;
        expect_all_ok("decaps", &self.statuses)?;
        if self.ss_dec != self.ss_enc {
            return Err(format!(
                "{}: decapsulated secrets differ from encapsulated ones",
                p.name()
            ));
        }
        Ok(dt)
    }

    /// One `pqg_kem_keygen` / `pqg_kem_encaps` / `pqg_kem_decaps` call on item 0.
    pub fn single(&mut self, ctx: &Context, op: &str) -> Result<Duration, String> {
        let p = self.p;
        let (pkl, skl) = (p.public_key_len(), p.secret_key_len());
        let (ctl, ssl) = (p.ciphertext_len(), p.shared_secret_len());
        let c = ctx.raw();
        let t = Instant::now();
        // SAFETY: every pointer is a live buffer of the stated length.
        let r = unsafe {
            match op {
                "keygen" => pqg_kem_keygen(
                    c,
                    self.alg,
                    null(),
                    self.pks.as_mut_ptr(),
                    pkl,
                    self.sks.as_mut_ptr(),
                    skl,
                ),
                "encaps" => pqg_kem_encaps(
                    c,
                    self.alg,
                    self.pks.as_ptr(),
                    pkl,
                    null(),
                    self.cts.as_mut_ptr(),
                    ctl,
                    self.ss_enc.as_mut_ptr(),
                    ssl,
                ),
                _ => pqg_kem_decaps(
                    c,
                    self.alg,
                    self.sks.as_ptr(),
                    skl,
                    self.cts.as_ptr(),
                    ctl,
                    self.ss_dec.as_mut_ptr(),
                    ssl,
                ),
            }
        };
        let dt = t.elapsed();
        check(op, r)?;
        if op == "decaps" && self.ss_dec[..ssl] != self.ss_enc[..ssl] {
            return Err(format!("{}: single decaps disagrees", p.name()));
        }
        Ok(dt)
    }
}
