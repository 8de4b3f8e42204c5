// Temporary probe (not committed): where the C-ABI path spends time over the engine.
use pqgpu::backend::*;
use pqgpu::ffi::*;
use pqgpu::mldsa::{Message, ParamSet};
use pqgpu::{ctru, Status, Error};
use std::ptr::{null, null_mut};
use std::time::Instant;
fn med(mut v: Vec<f64>) -> f64 { v.sort_by(|a,b| a.partial_cmp(b).unwrap()); v[v.len()/2] }
fn main() {
    let be = select(BackendKind::Gpu).expect("gpu");
    let mut ctx = null_mut();
    unsafe { pqg_context_new(2, &mut ctx) };
    let n = 65536;
    let p = ParamSet::MlDsa44;
    let (pkl, skl, sgl) = (1312, 2560, 2420);
    let mut pks = vec![0u8; n * pkl];
    let mut sks = vec![0u8; n * skl];
    let msgs = vec![7u8; n * 32];
    let mut sigs = vec![0u8; n * sgl];
    for b in [&pks[..], &sks[..], &msgs[..], &sigs[..]] { unsafe { pqg_host_register(ctx, b.as_ptr(), b.len()) }; }
    let mut st = vec![Ok(()); n];
    be.mldsa_keygen(p, None, &mut pks, &mut sks, &mut st);
    {
        let items: Vec<SignItem> = (0..n).map(|i| SignItem { sk: &sks[i*skl..][..skl], msg: Message::Pure { ctx: &[], msg: &msgs[i*32..][..32] }, rnd: None }).collect();
        let mut outs: Vec<&mut [u8]> = sigs.chunks_exact_mut(sgl).collect();
        be.mldsa_sign(p, &items, &mut outs, &mut st);
    }
    let vitems: Vec<VerifyItem> = (0..n).map(|i| VerifyItem { pk: &pks[i*pkl..][..pkl], msg: Message::Pure { ctx: &[], msg: &msgs[i*32..][..32] }, sig: &sigs[i*sgl..][..sgl] }).collect();
    let vreqs: Vec<pqg_verify_request> = (0..n).map(|i| pqg_verify_request { pk: pks[i*pkl..].as_ptr(), msg: msgs[i*32..].as_ptr(), msg_len: 32, context: null(), context_len: 0, sig: sigs[i*sgl..].as_ptr(), sig_len: sgl }).collect();
    let mut cst = vec![0i32; n];
    for round in 0..2 {
        let mut a = vec![]; let mut b = vec![]; let mut c = vec![]; let mut d = vec![]; let mut e = vec![];
        for _ in 0..7 {
            let t = Instant::now(); be.mldsa_verify(p, &vitems, &mut st); a.push(t.elapsed().as_secs_f64()*1e3);
            let t = Instant::now(); pqgpu::api::mldsa_verify(&*be, p, &vitems, &mut st).unwrap(); b.push(t.elapsed().as_secs_f64()*1e3);
            let t = Instant::now();
            let mut job = null_mut();
            unsafe { pqg_mldsa_verify_submit(ctx, 1, vreqs.as_ptr(), n, cst.as_mut_ptr(), &mut job) };
            let t1 = t.elapsed().as_secs_f64()*1e3;
            unsafe { pqg_job_wait(job, -1) };
            c.push(t.elapsed().as_secs_f64()*1e3); d.push(t1);
            unsafe { pqg_job_free(job) };
            // backend call from a fresh thread
            let t = Instant::now();
            std::thread::scope(|s| { s.spawn(|| { let mut st2 = vec![Ok(()); n]; be.mldsa_verify(p, &vitems, &mut st2); }); });
            e.push(t.elapsed().as_secs_f64()*1e3);
        }
        assert!(cst.iter().all(|&s| s == 0));
        println!("round {round} verify ms (median of 7): backend {:.2}  api {:.2}  C submit {:.2} C total {:.2}  backend-on-new-thread {:.2}", med(a), med(b), med(d), med(c), med(e));
    }
    let _ = (Error::Panic, ctru::ParamSet::Ctru761);
    let _: Vec<Status> = vec![];
}
