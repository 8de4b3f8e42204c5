//! The C entry points with arbitrary algorithm identifiers, hash identifiers, lengths, NULL
//! pointers and batch shapes, on a CPU context: every call returns a status of the contract
//! and never crashes. Buffers always really have the lengths passed (a C caller that lies
//! about a length is outside the contract), except NULL pointers, which may come with any
//! length, however absurd.
#![no_main]
use libfuzzer_sys::fuzz_target;
use pqgpu::ffi::*;
use std::ptr::{null, null_mut};
use std::sync::OnceLock;

struct Ctx(*mut pqg_context);
// SAFETY: a pqg_context is documented thread-safe.
unsafe impl Send for Ctx {}
unsafe impl Sync for Ctx {}
static CTX: OnceLock<Ctx> = OnceLock::new();

/// Reads the fuzzer's choices from the input.
struct Input<'a>(&'a [u8]);
impl Input<'_> {
    fn byte(&mut self) -> u8 {
        let (&b, rest) = self.0.split_first().unwrap_or((&0, &[]));
        self.0 = rest;
        b
    }
    /// A length: mostly near the algorithms' sizes, sometimes absurd.
    fn len(&mut self) -> usize {
        match self.byte() % 8 {
            0 => 0,
            1 => usize::MAX - self.byte() as usize,
            2 => isize::MAX as usize + self.byte() as usize,
            3 => 32 + self.byte() as usize % 40,
            _ => u16::from_le_bytes([self.byte(), self.byte()]) as usize % 6000,
        }
    }
    fn alg(&mut self) -> pqg_alg {
        match self.byte() {
            b @ 0..=7 => b as pqg_alg,
            b @ 8..=40 => b as pqg_alg - 8 + 16,
            b => -(b as pqg_alg),
        }
    }
}

/// A buffer of `len` bytes, or NULL (then `len` may be anything). Absurd lengths always get
/// NULL.
fn buf(inp: &mut Input, len: usize) -> Option<Vec<u8>> {
    if len > 1 << 16 || inp.byte() % 5 == 0 {
        return None;
    }
    Some((0..len).map(|_| inp.byte()).collect())
}

fn ptr(b: &Option<Vec<u8>>) -> *const u8 {
    b.as_ref().map_or(null(), |v| v.as_ptr())
}
fn mptr(b: &mut Option<Vec<u8>>) -> *mut u8 {
    b.as_mut().map_or(null_mut(), |v| v.as_mut_ptr())
}

const STATUSES: [pqg_status; 12] = [
    PQG_OK,
    PQG_PENDING,
    PQG_ERR_NULL_POINTER,
    PQG_ERR_INVALID_ARGUMENT,
    PQG_ERR_BAD_LENGTH,
    PQG_ERR_BAD_KEY,
    PQG_ERR_VERIFY_FAILED,
    PQG_ERR_NO_DEVICE,
    PQG_ERR_DEVICE,
    PQG_ERR_TIMEOUT,
    PQG_ERR_RNG,
    PQG_ERR_PANIC,
];

fn check(st: pqg_status) {
    assert!(STATUSES.contains(&st), "status {st} is not in the contract");
    assert_ne!(st, PQG_ERR_PANIC, "a panic was caught at the boundary");
}

fuzz_target!(|data: &[u8]| {
    let ctx = CTX.get_or_init(|| {
        let mut c = null_mut();
        let cpu = pqg_backend_values::PQG_BACKEND_CPU as pqg_backend;
        assert_eq!(unsafe { pqg_context_new(cpu, &mut c) }, PQG_OK);
        Ctx(c)
    });
    let c = ctx.0;
    let mut inp = Input(data);
    let op = inp.byte();
    let alg = inp.alg();
    let (l1, l2, l3, l4) = (inp.len(), inp.len(), inp.len(), inp.len());
    let mut a = buf(&mut inp, l1);
    let mut b = buf(&mut inp, l2);
    let d = buf(&mut inp, l3);
    let mut e = buf(&mut inp, l4);
    // rnd / coins / ML-DSA seeds are 32 bytes, CTRU-Prime seeds 64: NULL or really that long.
    let rnd = if inp.byte() & 1 == 0 { None } else { buf(&mut inp, 32) };
    let seed64 = if inp.byte() & 1 == 0 { None } else { buf(&mut inp, 64) };
    let ph = inp.byte() as pqg_hash;
    // SAFETY: every non-NULL pointer has the length passed with it (see the module comment).
    let st = unsafe {
        match op % 12 {
            0 => pqg_mldsa_keygen(c, alg, ptr(&rnd), mptr(&mut a), l1, mptr(&mut b), l2),
            1 => pqg_mldsa_sign(c, alg, ptr(&a), l1, ptr(&b), l2, ptr(&d), l3, ptr(&rnd), mptr(&mut e), l4),
            2 => pqg_mldsa_verify(c, alg, ptr(&a), l1, ptr(&b), l2, ptr(&d), l3, ptr(&e), l4),
            3 => pqg_hash_mldsa_sign(c, alg, ph, ptr(&a), l1, ptr(&b), l2, ptr(&d), l3, ptr(&rnd), mptr(&mut e), l4),
            4 => pqg_hash_mldsa_verify(c, alg, ph, ptr(&a), l1, ptr(&b), l2, ptr(&d), l3, ptr(&e), l4),
            5 => pqg_mldsa_sign_mu(c, alg, ptr(&a), l1, ptr(&b), l2, ptr(&rnd), mptr(&mut e), l4),
            6 => pqg_mldsa_verify_mu(c, alg, ptr(&a), l1, ptr(&b), l2, ptr(&e), l4),
            7 => pqg_kem_keygen(c, alg, ptr(&seed64), mptr(&mut a), l1, mptr(&mut b), l2),
            8 => pqg_kem_encaps(c, alg, ptr(&a), l1, ptr(&rnd), mptr(&mut b), l2, mptr(&mut e), l4),
            9 => pqg_kem_decaps(c, alg, ptr(&a), l1, ptr(&b), l2, mptr(&mut e), l4),
            10 => {
                // A sign batch of up to 4 requests made of the buffers above.
                let n = (l3 % 5).min(4);
                let sig_len = pqg_signature_len(alg);
                let mut sigs = vec![vec![0u8; sig_len.max(1)]; n];
                let reqs: Vec<pqg_sign_request> = sigs
                    .iter_mut()
                    .map(|s| pqg_sign_request {
                        sk: if a.as_ref().is_some_and(|v| v.len() >= pqg_secret_key_len(alg)) { ptr(&a) } else { null() },
                        msg: ptr(&b),
                        msg_len: if b.is_some() { l2 } else { 0 },
                        context: null(),
                        context_len: 0,
                        rnd: ptr(&rnd),
                        sig: s.as_mut_ptr(),
                    })
                    .collect();
                let mut statuses = vec![0; n];
                let mut job = null_mut();
                let st = pqg_mldsa_sign_submit(c, alg, reqs.as_ptr(), n, statuses.as_mut_ptr(), &mut job);
                if st == PQG_OK {
                    check(pqg_job_wait(job, -1));
                    pqg_job_free(job);
                    statuses.iter().for_each(|&s| check(s));
                } else {
                    assert!(job.is_null());
                }
                st
            }
            _ => {
                let st = pqg_host_register(c, ptr(&a), l1);
                if st == PQG_OK {
                    check(pqg_host_unregister(c, ptr(&a)));
                }
                st
            }
        }
    };
    check(st);
});
