use pqgpu::backend::*;
use pqgpu::ffi::*;
use pqgpu::{ctru, mldsa, Status};
use std::ptr::{null, null_mut};
use std::sync::Arc;
use std::time::Instant;
struct Null;
impl Backend for Null {
    fn kind(&self) -> BackendKind { BackendKind::Gpu }
    fn mldsa_keygen(&self, _: mldsa::ParamSet, _: Option<&[u8]>, _: &mut [u8], _: &mut [u8], st: &mut [Status]) { st.fill(Ok(())) }
    fn mldsa_sign(&self, _: mldsa::ParamSet, _: &[SignItem<'_>], _: &mut [&mut [u8]], st: &mut [Status]) { st.fill(Ok(())) }
    fn mldsa_verify(&self, _: mldsa::ParamSet, _: &[VerifyItem<'_>], st: &mut [Status]) { st.fill(Ok(())) }
    fn kem_keygen(&self, _: ctru::ParamSet, _: Option<&[u8]>, _: &mut [u8], _: &mut [u8], st: &mut [Status]) { st.fill(Ok(())) }
    fn kem_encaps(&self, _: ctru::ParamSet, _: &[EncapsItem<'_>], _: &mut [&mut [u8]], _: &mut [&mut [u8]], st: &mut [Status]) { st.fill(Ok(())) }
    fn kem_decaps(&self, _: ctru::ParamSet, _: &[DecapsItem<'_>], _: &mut [&mut [u8]], st: &mut [Status]) { st.fill(Ok(())) }
}
fn main() {
    let ctx = context_from_backend(Arc::new(Null));
    let n = 65536;
    let (skl, sgl) = (2560, 2420);
    let sks = vec![1u8; n * skl];
    let msgs = vec![2u8; n * 32];
    let mut sigs = vec![0u8; n * sgl];
    let mut pks = vec![0u8; n * 1312];
    let mut sks2 = vec![0u8; n * skl];
    let mut st = vec![0i32; n];
    for _ in 0..3 {
        let base = sigs.as_mut_ptr();
        let reqs: Vec<pqg_sign_request> = (0..n).map(|i| pqg_sign_request { sk: sks[i * skl..].as_ptr(), msg: msgs[i * 32..].as_ptr(), msg_len: 32, context: null(), context_len: 0, rnd: null(), sig: base.wrapping_add(i * sgl) }).collect();
        let t = Instant::now();
        let mut job = null_mut();
        unsafe { pqg_mldsa_sign_submit(ctx, 1, reqs.as_ptr(), n, st.as_mut_ptr(), &mut job); }
        let t1 = t.elapsed();
        unsafe { pqg_job_wait(job, -1); pqg_job_free(job); }
        println!("sign: submit {:?} total {:?}", t1, t.elapsed());
        let vreqs: Vec<pqg_verify_request> = (0..n).map(|i| pqg_verify_request { pk: sks[i * skl..].as_ptr(), msg: msgs[i * 32..].as_ptr(), msg_len: 32, context: null(), context_len: 0, sig: sigs[i*sgl..].as_ptr(), sig_len: sgl }).collect();
        let t = Instant::now();
        unsafe { pqg_mldsa_verify_submit(ctx, 1, vreqs.as_ptr(), n, st.as_mut_ptr(), &mut job); pqg_job_wait(job, -1); pqg_job_free(job); }
        println!("verify total {:?}", t.elapsed());
        let t = Instant::now();
        unsafe { pqg_mldsa_keygen_submit(ctx, 1, n, null(), pks.as_mut_ptr(), sks2.as_mut_ptr(), st.as_mut_ptr(), &mut job); pqg_job_wait(job, -1); pqg_job_free(job); }
        println!("keygen total {:?}", t.elapsed());
    }
}
