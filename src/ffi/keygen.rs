//! The body shared by `pqg_mldsa_keygen_submit` and `pqg_kem_keygen_submit`: both take n
//! seeds (or none) and write n key pairs into contiguous caller arrays.

use super::batch::KeyPairs;
use super::context::{context, pqg_context};
use super::guard::{array_len, boundary, required, zero_secret, Out};
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
pub(crate) unsafe fn submit<K>(
    ctx: *mut pqg_context,
    n: usize,
    seeds: *const u8,
    pks: *mut u8,
    sks: *mut u8,
    statuses: *mut pqg_status,
    job: *mut *mut pqg_job,
    sk_len_hint: usize,
    resolve: impl FnOnce() -> Result<(Shape, K), Error>,
) -> pqg_status
where
    K: Fn(&dyn Backend, Option<&[u8]>, usize) -> KeyPairs + Send + 'static,
{
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
