//! The bodies shared by the ML-DSA and CTRU-Prime key generators: `one` behind
//! `pqg_mldsa_keygen` / `pqg_kem_keygen`, `submit` behind the two `_submit` forms (n seeds or
//! none, n key pairs into contiguous caller arrays).

use super::batch::KeyPairs;
use super::context::{context, pqg_context};
use super::guard::{array_len, boundary, optional, required, zero_secret, Out};
use super::job::{self, clear_out, hand_out, pqg_job};
use super::{pqg_status, PQG_OK};
use crate::backend::Backend;
use crate::Error;

/// Byte sizes of one item: seed, public key, secret key.
pub(crate) struct Shape {
    pub seed_len: usize,
    pub pk_len: usize,
    pub sk_len: usize,
}

/// A family's key generator: (backend, seeds or none, n) -> n key pairs.
pub(crate) trait Keygen:
    Fn(&dyn Backend, Option<&[u8]>, usize) -> KeyPairs + Send + 'static
{
}
impl<K: Fn(&dyn Backend, Option<&[u8]>, usize) -> KeyPairs + Send + 'static> Keygen for K {}

/// One key pair, blocking: checks (context, algorithm through `resolve`, then pk/sk pointers
/// and lengths), generates, writes both keys on success and zeroes `sk` on any failure.
///
/// # Safety
/// `ctx` is NULL or live; `seed` is NULL or `SEED` readable bytes; `pk`/`sk` are NULL or
/// `pk_len`/`sk_len` writable bytes.
pub(crate) unsafe fn one<const SEED: usize, K: Keygen>(
    ctx: *mut pqg_context,
    seed: *const u8,
    pk: *mut u8,
    pk_len: usize,
    sk: *mut u8,
    sk_len: usize,
    resolve: impl FnOnce() -> Result<(Shape, K), Error>,
) -> pqg_status {
    let status = boundary(|| {
        // SAFETY: ctx is NULL or live; seed is NULL or SEED readable bytes (caller's promise).
        let (ctx, seed) = unsafe { (context(ctx)?, optional::<SEED>(seed)) };
        let (shape, keygen) = resolve()?;
        let pk = Out::new(pk, pk_len)?;
        let sk = Out::new(sk, sk_len)?;
        let pk = pk.expect_len(shape.pk_len)?;
        let sk = sk.expect_len(shape.sk_len)?;
        let keys = keygen(&*ctx.backend, seed.map(|s| &s[..]), 1);
        keys.statuses[0]?;
        // SAFETY: pk and sk are writable buffers of the checked lengths (caller's promise).
        unsafe {
            pk.write(&keys.pks);
            sk.write(&keys.sks);
        }
        Ok(())
    });
    if status != PQG_OK {
        // SAFETY: sk is NULL or sk_len writable bytes (caller's promise).
        unsafe { zero_secret(sk, sk_len) };
    }
    status
}

/// Checks the call shape (context, then algorithm through `resolve`, then buffers), then
/// starts a job that runs the resolved keygen on the backend and copies each successful item's
/// keys out (a failed item's secret key is zeroed).
///
/// # Safety
/// `ctx` is NULL or live; `seeds` is NULL or `n * seed_len` readable bytes; `pks`/`sks` are
/// NULL or `n * pk_len` / `n * sk_len` writable bytes; `statuses` is NULL or `n` writable
/// entries; `job` is NULL or writable. All stay valid until the job has completed.
/// `sk_len_hint` is the secret-key length (0 if unknown), for zeroing `sks` on rejection.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn submit<K: Keygen>(
    ctx: *mut pqg_context,
    n: usize,
    seeds: *const u8,
    pks: *mut u8,
    sks: *mut u8,
    statuses: *mut pqg_status,
    job: *mut *mut pqg_job,
    sk_len_hint: usize,
    resolve: impl FnOnce() -> Result<(Shape, K), Error>,
) -> pqg_status {
    let status = boundary(|| {
        // SAFETY: job is NULL or writable; ctx is NULL or live (caller's promise).
        let ctx = unsafe {
            clear_out(job)?;
            context(ctx)?
        };
        let (
            Shape {
                seed_len,
                pk_len,
                sk_len,
            },
            keygen,
        ) = resolve()?;
        let pk_out = Out::array(pks, n, pk_len)?;
        let sk_out = Out::array(sks, n, sk_len)?;
        if n > 0 && statuses.is_null() {
            return Err(Error::NullPointer);
        }
        let seeds: Option<&'static [u8]> = match seeds.is_null() {
            true => None,
            // SAFETY: n * seed_len readable bytes that the caller keeps valid until the job
            // has completed; the job never uses them after that, so 'static is never observed.
            false => Some(unsafe { required(seeds, array_len(n, seed_len)?) }?),
        };
        let backend = ctx.backend.clone();
        let work: job::Work = Box::new(move || {
            let keys = keygen(&*backend, seeds, n);
            for (i, st) in keys.statuses.iter().enumerate() {
                let (pk, sk) = (pk_out.chunk(i, pk_len), sk_out.chunk(i, sk_len));
                // SAFETY: the caller keeps pks/sks valid until completion (contract).
                unsafe {
                    match st {
                        Ok(()) => {
                            pk.write(&keys.pks[i * pk_len..][..pk_len]);
                            sk.write(&keys.sks[i * sk_len..][..sk_len]);
                        }
                        Err(_) => sk.zero(),
                    }
                }
            }
            keys.statuses
        });
        // SAFETY: job was checked non-NULL above.
        unsafe { hand_out(job::start(n, statuses, work), job) };
        Ok(())
    });
    if status != PQG_OK {
        if let Ok(total) = array_len(n, sk_len_hint) {
            // SAFETY: sks is NULL or n * sk_len writable bytes (caller's promise).
            unsafe { zero_secret(sks, total) };
        }
    }
    status
}
