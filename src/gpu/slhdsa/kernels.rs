//! The SLH-DSA kernels of one parameter set (`kernels/slhdsa.cu`): the set's numbers, passed to
//! NVRTC as `-D` definitions (the one place they are written), the rows the kernels share with
//! the host, the compiled module with every kernel resolved at load, and one typed launcher per
//! kernel (parameters in the kernel's order).
// A launcher takes the kernel's parameters one by one, in order: as many as the kernel has.
#![allow(clippy::too_many_arguments)]

use crate::gpu::config::GpuConfig;
use crate::gpu::hostio::HostIo;
use crate::gpu::launch::{blocks, kernel_table, n32, Dev};
use crate::gpu::nvrtc::{self, Module};
use crate::gpu::worker::Worker;
use crate::slhdsa::params::Params;
use crate::slhdsa::ParamSet;
use cudarc::driver::{CudaContext, DriverError};
use std::sync::Arc;

/// Threads per block (every kernel is one independent thread per unit of work).
const BLOCK: u32 = 128;

/// log2 of the FORS leaves one thread of `slh_fors_leaves` builds (a subtree of 16 leaves:
/// 47 hash calls, so a chunk has k * 2^(a-4) such threads per item).
const FORS_GROUP: usize = 4;

/// A job row (`kernels/slhdsa.cu`): md, idx_tree, idx_leaf, key index, R.
pub const JOB_BYTES: usize = 96;
const JOB_MD: usize = 44;
const JOB_TREE: usize = 48;
const JOB_LEAF: usize = 56;
const JOB_KEY: usize = 60;
const JOB_R: usize = 64;
/// A key context row: midstates, PK.seed, SK.seed.
pub const CTX_BYTES: usize = 160;

/// FIPS 205 Table 2's row of one set and the sizes the host needs.
#[derive(Clone, Copy)]
pub struct Sizes {
    pub q: Params,
    pub n: usize,
    pub sig: usize,
    /// WOTS+ leaves (XMSS leaves) per hypertree layer: 2^h'.
    pub leaves: usize,
    /// FORS leaf groups per tree.
    pub groups: usize,
}

impl Sizes {
    pub fn of(p: ParamSet) -> Sizes {
        let q = p.params();
        assert!(FORS_GROUP < q.a, "a FORS tree has more than one group");
        Sizes {
            q,
            n: q.n,
            sig: p.signature_len(),
            leaves: 1 << q.hp,
            groups: 1 << (q.a - FORS_GROUP),
        }
    }
}

/// The -D definitions that fix one parameter set in the kernels.
pub fn defines(p: ParamSet) -> Vec<String> {
    let q = p.params();
    nvrtc::defines(&[
        ("SLH_N", q.n),
        ("SLH_H", q.h),
        ("SLH_D", q.d),
        ("SLH_HP", q.hp),
        ("SLH_A", q.a),
        ("SLH_K", q.k),
        ("SLH_SHA2", usize::from(q.sha2)),
        ("SLH_FG", FORS_GROUP),
    ])
}

/// PTX of `p`'s kernels for compute capability `arch`.
pub fn compile(arch: (i32, i32), p: ParamSet, cfg: &GpuConfig) -> Result<String, String> {
    let mut defs = defines(p);
    defs.extend(cfg.tuning.nvrtc_defines.iter().cloned());
    nvrtc::compile(
        &nvrtc::SLHDSA,
        arch,
        p.name(),
        defs,
        cfg.cache_dir.as_deref(),
    )
}

/// The digest's parts (FIPS 205 Alg. 19 lines 7-13) as a job row with the key index and R.
pub fn job_row(q: &Params, digest: &[u8], key: u32, r: &[u8], row: &mut [u8]) {
    let (md, rest) = digest.split_at(q.md_len());
    let (t, l) = rest.split_at(q.tree_idx_len());
    let to_int = |b: &[u8]| b.iter().fold(0u64, |acc, &x| (acc << 8) | x as u64);
    let tree_bits = q.h - q.hp;
    let idx_tree = if tree_bits >= 64 {
        to_int(t)
    } else {
        to_int(t) & ((1u64 << tree_bits) - 1)
    };
    let idx_leaf = (to_int(&l[..q.leaf_idx_len()]) & ((1u64 << q.hp) - 1)) as u32;
    row[..JOB_MD].fill(0);
    row[..md.len()].copy_from_slice(md);
    row[JOB_MD..JOB_TREE].fill(0);
    row[JOB_TREE..JOB_LEAF].copy_from_slice(&idx_tree.to_le_bytes());
    row[JOB_LEAF..JOB_KEY].copy_from_slice(&idx_leaf.to_le_bytes());
    row[JOB_KEY..JOB_R].copy_from_slice(&key.to_le_bytes());
    row[JOB_R..].fill(0);
    row[JOB_R..JOB_R + r.len()].copy_from_slice(r);
}

kernel_table! {
    struct Fns {
        slh_prep,
        slh_keygen_leaves,
        slh_keygen_top,
        slh_fors_leaves,
        slh_fors_top,
        slh_fors_pk,
        slh_ht_leaves,
        slh_ht_top,
        slh_wots_sign,
        slh_verify,
        slh_bench_sha256,
        slh_bench_keccak,
    }
}

/// Every kernel the module must export (for the compile test).
#[cfg(test)]
pub fn names() -> Vec<&'static str> {
    [HostIo::NAMES, Fns::NAMES].concat()
}

/// The loaded kernels of one parameter set.
pub struct Kernels {
    pub s: Sizes,
    pub io: HostIo,
    f: Fns,
}

impl Kernels {
    /// Compiles (or reads from the cache) and loads `p`'s kernels.
    pub fn load(ctx: &Arc<CudaContext>, p: ParamSet, cfg: &GpuConfig) -> Result<Kernels, String> {
        let module = Module::compile_and_load(ctx, p.name(), |arch| compile(arch, p, cfg))?;
        Ok(Kernels {
            s: Sizes::of(p),
            io: HostIo::resolve(&module, cfg.tuning.hostio_kernel)?,
            f: Fns::resolve(&module)?,
        })
    }

    fn run(
        &self,
        w: &mut Worker,
        k: &crate::gpu::launch::Kernel,
        threads: usize,
        args: &[crate::gpu::launch::Arg],
    ) -> Result<(), DriverError> {
        w.launch(k, blocks(threads, BLOCK), BLOCK, args)
    }

    /// `slh_prep(rows, stride, sk_off, pk_off, ctx, nkeys)`: each key row's context.
    pub fn prep(
        &self,
        w: &mut Worker,
        rows: Dev<u8>,
        stride: usize,
        (sk_off, pk_off): (usize, usize),
        ctx: Dev<u8>,
        nkeys: usize,
    ) -> Result<(), DriverError> {
        let args = [
            rows.into(),
            n32(stride).into(),
            n32(sk_off).into(),
            n32(pk_off).into(),
            ctx.into(),
            n32(nkeys).into(),
        ];
        self.run(w, &self.f.slh_prep, nkeys, &args)
    }

    /// `slh_keygen_leaves(ctx, leaves, nkeys)`: the top tree's leaves of each key.
    pub fn keygen_leaves(
        &self,
        w: &mut Worker,
        ctx: Dev<u8>,
        leaves: Dev<u8>,
        nkeys: usize,
    ) -> Result<(), DriverError> {
        let args = [ctx.into(), leaves.into(), n32(nkeys).into()];
        self.run(w, &self.f.slh_keygen_leaves, nkeys * self.s.leaves, &args)
    }

    /// `slh_keygen_top(seeds, ctx, leaves, pks, sks, n)`: PK.root and the key rows.
    pub fn keygen_top(
        &self,
        w: &mut Worker,
        seeds: Dev<u8>,
        ctx: Dev<u8>,
        leaves: Dev<u8>,
        (pks, sks): (Dev<u8>, Dev<u8>),
        n: usize,
    ) -> Result<(), DriverError> {
        let args = [
            seeds.into(),
            ctx.into(),
            leaves.into(),
            pks.into(),
            sks.into(),
            n32(n).into(),
        ];
        self.run(w, &self.f.slh_keygen_top, n, &args)
    }

    /// `slh_fors_leaves(jobs, ctx, groots, sigs, n)`.
    pub fn fors_leaves(
        &self,
        w: &mut Worker,
        jobs: Dev<u8>,
        ctx: Dev<u8>,
        groots: Dev<u8>,
        sigs: Dev<u8>,
        n: usize,
    ) -> Result<(), DriverError> {
        let args = [
            jobs.into(),
            ctx.into(),
            groots.into(),
            sigs.into(),
            n32(n).into(),
        ];
        let threads = n * self.s.q.k * self.s.groups;
        self.run(w, &self.f.slh_fors_leaves, threads, &args)
    }

    /// `slh_fors_top(jobs, ctx, groots, roots, sigs, n)`.
    pub fn fors_top(
        &self,
        w: &mut Worker,
        jobs: Dev<u8>,
        ctx: Dev<u8>,
        (groots, roots): (Dev<u8>, Dev<u8>),
        sigs: Dev<u8>,
        n: usize,
    ) -> Result<(), DriverError> {
        let args = [
            jobs.into(),
            ctx.into(),
            groots.into(),
            roots.into(),
            sigs.into(),
            n32(n).into(),
        ];
        self.run(w, &self.f.slh_fors_top, n * self.s.q.k, &args)
    }

    /// `slh_fors_pk(jobs, ctx, roots, pkf, sigs, n)`.
    pub fn fors_pk(
        &self,
        w: &mut Worker,
        jobs: Dev<u8>,
        ctx: Dev<u8>,
        (roots, pkf): (Dev<u8>, Dev<u8>),
        sigs: Dev<u8>,
        n: usize,
    ) -> Result<(), DriverError> {
        let args = [
            jobs.into(),
            ctx.into(),
            roots.into(),
            pkf.into(),
            sigs.into(),
            n32(n).into(),
        ];
        self.run(w, &self.f.slh_fors_pk, n, &args)
    }

    /// `slh_ht_leaves(jobs, ctx, leaves, layers, n)`: the WOTS+ keys of layers 0..layers.
    pub fn ht_leaves(
        &self,
        w: &mut Worker,
        jobs: Dev<u8>,
        ctx: Dev<u8>,
        leaves: Dev<u8>,
        layers: usize,
        n: usize,
    ) -> Result<(), DriverError> {
        let args = [
            jobs.into(),
            ctx.into(),
            leaves.into(),
            n32(layers).into(),
            n32(n).into(),
        ];
        let threads = n * layers * self.s.leaves;
        self.run(w, &self.f.slh_ht_leaves, threads, &args)
    }

    /// `slh_ht_top(jobs, ctx, leaves, top_leaves, roots, sigs, n)`; `top_leaves` null: every
    /// layer's leaves from `leaves`.
    pub fn ht_top(
        &self,
        w: &mut Worker,
        jobs: Dev<u8>,
        ctx: Dev<u8>,
        (leaves, top_leaves): (Dev<u8>, Dev<u8>),
        roots: Dev<u8>,
        sigs: Dev<u8>,
        n: usize,
    ) -> Result<(), DriverError> {
        let args = [
            jobs.into(),
            ctx.into(),
            leaves.into(),
            top_leaves.into(),
            roots.into(),
            sigs.into(),
            n32(n).into(),
        ];
        self.run(w, &self.f.slh_ht_top, n * self.s.q.d, &args)
    }

    /// `slh_wots_sign(jobs, ctx, pkf, roots, sigs, n)`.
    pub fn wots_sign(
        &self,
        w: &mut Worker,
        jobs: Dev<u8>,
        ctx: Dev<u8>,
        (pkf, roots): (Dev<u8>, Dev<u8>),
        sigs: Dev<u8>,
        n: usize,
    ) -> Result<(), DriverError> {
        let args = [
            jobs.into(),
            ctx.into(),
            pkf.into(),
            roots.into(),
            sigs.into(),
            n32(n).into(),
        ];
        let threads = n * self.s.q.d * self.s.q.wots_len();
        self.run(w, &self.f.slh_wots_sign, threads, &args)
    }

    /// `slh_verify(jobs, pks, sigs, sig_stride, ok, n)`.
    pub fn verify(
        &self,
        w: &mut Worker,
        jobs: Dev<u8>,
        pks: Dev<u8>,
        (sigs, stride): (Dev<u8>, usize),
        ok: Dev<u32>,
        n: usize,
    ) -> Result<(), DriverError> {
        let args = [
            jobs.into(),
            pks.into(),
            sigs.into(),
            n32(stride).into(),
            ok.into(),
            n32(n).into(),
        ];
        self.run(w, &self.f.slh_verify, n, &args)
    }

    /// `slh_bench_sha256(out, iters)` on `threads` threads (8 words out per thread).
    pub fn bench_sha256(
        &self,
        w: &mut Worker,
        out: Dev<u32>,
        iters: u32,
        threads: usize,
    ) -> Result<(), DriverError> {
        let args = [out.into(), iters.into()];
        self.run(w, &self.f.slh_bench_sha256, threads, &args)
    }

    /// `slh_bench_keccak(out, iters)` on `threads` threads (4 lanes out per thread).
    pub fn bench_keccak(
        &self,
        w: &mut Worker,
        out: Dev<u64>,
        iters: u32,
        threads: usize,
    ) -> Result<(), DriverError> {
        let args = [out.into(), iters.into()];
        self.run(w, &self.f.slh_bench_keccak, threads, &args)
    }
}
