//! The bodies shared by the ML-DSA and CTRU-Prime key generators: `one` behind
//! `pqg_mldsa_keygen` / `pqg_kem_keygen`, `submit` behind the two `_submit` forms (n seeds or
//! none, n key pairs straight into the caller's contiguous arrays).

use super::batch::disjoint;
use super::context::{context, pqg_context};
use super::guard::{array_len, boundary, required, span_of, zero_secret, Out};
use super::job::{self, clear_out, hand_out, pqg_job};
use super::{pqg_status, PQG_OK};
use crate::backend::Backend;
use crate::{api, Alg, Error, Status};

/// Byte sizes of one item: seed, public key, secret key.
#[derive(Clone, Copy)]
struct Shape {
    seed_len: usize,
    pk_len: usize,
    sk_len: usize,
}

impl Shape {
    fn of(alg: Alg) -> Shape {
        match alg {
            Alg::MlDsa(p) => Shape {
                seed_len: 32,
                pk_len: p.public_key_len(),
                sk_len: p.secret_key_len(),
            },
            Alg::Ctru(_) | Alg::MlKem(_) => Shape {
                seed_len: alg.seed_len(),
                pk_len: alg.public_key_len(),
                sk_len: alg.secret_key_len(),
            },
            Alg::SlhDsa(p) => Shape {
                seed_len: p.seed_len(),
                pk_len: p.public_key_len(),
                sk_len: p.secret_key_len(),
            },
        }
    }
}

/// The family's batch key generator in the `api` layer.
fn generate(
    alg: Alg,
    b: &dyn Backend,
    seeds: Option<&[u8]>,
    pks: &mut [u8],
    sks: &mut [u8],
    st: &mut [Status],
) -> Result<(), Error> {
    match alg {
        Alg::MlDsa(p) => api::mldsa_keygen(b, p, seeds, pks, sks, st),
        Alg::Ctru(p) => api::kem_keygen(b, p, seeds, pks, sks, st),
        Alg::SlhDsa(p) => api::slhdsa_keygen(b, p, seeds, pks, sks, st),
        Alg::MlKem(p) => api::kem_keygen(b, p, seeds, pks, sks, st),
    }
}

/// One key pair, blocking: checks (context, algorithm (`alg`: the family's parameter set, or why there is none), then pk/sk pointers
/// and lengths), generates straight into `pk` and `sk`, and zeroes `sk` on any failure unless
/// its own length was the problem (then nothing is written to it).
///
/// # Safety
/// `ctx` is NULL or live; `seed` is NULL or `shape.seed_len` readable bytes; `pk`/`sk` are NULL
/// or `pk_len`/`sk_len` writable bytes.
pub(crate) unsafe fn one(
    ctx: *mut pqg_context,
    seed: *const u8,
    pk: *mut u8,
    pk_len: usize,
    sk: *mut u8,
    sk_len: usize,
    alg: Result<Alg, Error>,
) -> pqg_status {
    let want_sk = alg.ok().map(|a| Shape::of(a).sk_len);
    let status = boundary(|| {
        // SAFETY: ctx is NULL or live (caller's promise).
        let ctx = unsafe { context(ctx) }?;
        let alg = alg?;
        let shape = Shape::of(alg);
        let pk = Out::new(pk, pk_len)?;
        let sk = Out::new(sk, sk_len)?;
        let pk = pk.expect_len(shape.pk_len)?;
        let sk = sk.expect_len(shape.sk_len)?;
        disjoint(vec![vec![
            pk.span(),
            sk.span(),
            span_of(seed, shape.seed_len),
        ]])?;
        let seed = match seed.is_null() {
            true => None,
            // SAFETY: non-NULL: seed_len readable bytes (caller's promise).
            false => Some(unsafe { required(seed, shape.seed_len) }?),
        };
        // SAFETY: pk and sk are writable for their checked lengths during this call and
        // overlap neither each other nor the seed (checked above).
        let (pk, sk) = unsafe { (pk.slice(), sk.slice()) };
        // Concurrent single calls on a GPU context are coalesced into batches (`serve`).
        ctx.serve.keygen(alg, seed, pk, sk)
    });
    if status != PQG_OK && want_sk == Some(sk_len) {
        // SAFETY: sk is NULL or sk_len writable bytes (caller's promise).
        unsafe { zero_secret(sk, sk_len) };
    }
    status
}

/// Checks the call shape (context, then algorithm (`alg`: the family's parameter set, or why there is none), then buffers), then
/// starts a job that runs the key generator straight into the caller's arrays (a failed
/// item's secret key is zeroed by the `api` layer). A rejected call zeroes `sks` when the
/// algorithm, and so its size, is known.
///
/// # Safety
/// `ctx` is NULL or live; `seeds` is NULL or `n * seed_len` readable bytes; `pks`/`sks` are
/// NULL or `n * pk_len` / `n * sk_len` writable bytes; `statuses` is NULL or `n` writable
/// entries; `job` is NULL or writable. All stay valid until the job has completed.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn submit(
    ctx: *mut pqg_context,
    n: usize,
    seeds: *const u8,
    pks: *mut u8,
    sks: *mut u8,
    statuses: *mut pqg_status,
    job: *mut *mut pqg_job,
    alg: Result<Alg, Error>,
) -> pqg_status {
    let want_sk = alg.ok().map(|a| Shape::of(a).sk_len);
    let status = boundary(|| {
        // SAFETY: job is NULL or writable; ctx is NULL or live (caller's promise).
        let ctx = unsafe {
            clear_out(job)?;
            context(ctx)?
        };
        let alg = alg?;
        let shape = Shape::of(alg);
        let pk_out = Out::array(pks, n, shape.pk_len)?;
        let sk_out = Out::array(sks, n, shape.sk_len)?;
        if n > 0 && statuses.is_null() {
            return Err(Error::NullPointer);
        }
        let seed_bytes = array_len(n, shape.seed_len)?;
        disjoint(vec![vec![
            pk_out.span(),
            sk_out.span(),
            span_of(seeds, seed_bytes),
        ]])?;
        let seeds: Option<&'static [u8]> = match seeds.is_null() || n == 0 {
            true => None,
            // SAFETY: n * seed_len readable bytes that the caller keeps valid until the job
            // has completed; the job never uses them after that, so 'static is never observed.
            false => Some(unsafe { required(seeds, seed_bytes) }?),
        };
        let backend = ctx.backend.clone();
        let work: job::Work = Box::new(move || {
            // SAFETY: the arrays are writable for their checked sizes until the job completes
            // (contract) and overlap neither each other nor the seeds (checked at submit).
            let (pks, sks) = unsafe { (pk_out.slice(), sk_out.slice()) };
            let mut st = super::batch::pending(n);
            // A whole-call error is already in every status.
            let _ = generate(alg, &*backend, seeds, pks, sks, &mut st);
            st
        });
        // SAFETY: job was checked non-NULL above.
        unsafe { hand_out(job::start(n, statuses, work, None), job) };
        Ok(())
    });
    if status != PQG_OK {
        if let Some(total) = want_sk.and_then(|len| array_len(n, len).ok()) {
            // SAFETY: sks is NULL or n * sk_len writable bytes (caller's promise).
            unsafe { zero_secret(sks, total) };
        }
    }
    status
}
