//! The ML-DSA kernels of one parameter set (`kernels/mldsa.cu`): their sizes, passed to NVRTC
//! as `-D` definitions (the one place they are written), the compiled module with every kernel
//! resolved at load, and one typed launcher per kernel (parameters in the kernel's order).
// A launcher takes the kernel's parameters one by one, in order: as many as the kernel has.
#![allow(clippy::too_many_arguments)]

use crate::gpu::config::GpuConfig;
use crate::gpu::hostio::HostIo;
use crate::gpu::launch::{blocks, kernel_table, n32, Dev};
use crate::gpu::nvrtc::{self, Module};
use crate::gpu::worker::Worker;
use crate::mldsa::{ParamSet, Variant};
use cudarc::driver::{CudaContext, DriverError};
use std::sync::Arc;

/// Threads per block of the stream kernels (one Keccak state per thread): `ST`.
const ST: u32 = 128;
/// Threads per block of the polynomial kernels (one task per block, one coefficient per
/// thread): `NT`.
const NT: u32 = 256;
/// u64 words of one SampleInBall mask pair (nonzero and negative positions): `CM_WORDS`.
pub const CM_WORDS: usize = 8;

/// Sizes shared with the kernels (FIPS 204 Table 2); `sig_stride` pads signatures to 8 bytes.
/// `variant` (FIPS 204 or round 3) decides how the host checks and stages messages.
#[derive(Clone, Copy)]
pub struct Geometry {
    pub variant: Variant,
    pub k: usize,
    pub l: usize,
    pub pk_len: usize,
    pub sk_len: usize,
    pub sig_len: usize,
    pub sig_stride: usize,
    pub hbuf_len: usize,
}

impl Geometry {
    pub fn of(p: ParamSet) -> Geometry {
        Geometry {
            variant: p.variant(),
            k: p.k(),
            l: p.l(),
            pk_len: p.public_key_len(),
            sk_len: p.secret_key_len(),
            sig_len: p.signature_len(),
            sig_stride: p.signature_len().div_ceil(8) * 8,
            // mu || w1Encode(w1): the input of H for c~.
            hbuf_len: 64 + p.k() * 32 * p.w1_bits(),
        }
    }
}

/// The -D definitions of `p`: the parameters (FIPS 204 Table 1, and round 3's differences:
/// the "scheme" section of kernels/mldsa.cu) and the sizes the host shares with the kernels.
pub fn defines(p: ParamSet) -> Vec<String> {
    let g = Geometry::of(p);
    nvrtc::defines(&[
        ("PARAM_K", p.k()),
        ("PARAM_L", p.l()),
        ("PARAM_ETA", p.eta() as usize),
        ("PARAM_TAU", p.tau()),
        ("PARAM_GAMMA1_BITS", p.gamma1_bits() as usize),
        ("PARAM_GAMMA2", p.gamma2() as usize),
        ("PARAM_OMEGA", p.omega()),
        ("PARAM_LAMBDA", p.lambda()),
        ("PARAM_ROUND3", (p.variant() == Variant::Round3) as usize),
        ("SIG_STRIDE", g.sig_stride),
        ("HBUF_LEN", g.hbuf_len),
        ("NT", NT as usize),
        ("ST", ST as usize),
        ("CM_WORDS", CM_WORDS),
    ])
}

/// Threads per block of `sign_w` and `sign_z`: `SIGN_W_NT`, `SIGN_Z_NT` (NT unless a tuning
/// build's `PQGPU_SIGN_THREADS` says otherwise).
fn sign_threads(cfg: &GpuConfig) -> [u32; 2] {
    cfg.tuning.sign_threads.unwrap_or([NT, NT])
}

/// PTX of `p`'s kernels for compute capability `arch`.
pub fn compile(arch: (i32, i32), p: ParamSet, cfg: &GpuConfig) -> Result<String, String> {
    let [w_nt, z_nt] = sign_threads(cfg);
    let mut defs = defines(p);
    defs.extend(nvrtc::defines(&[
        ("SIGN_W_NT", w_nt as usize),
        ("SIGN_Z_NT", z_nt as usize),
    ]));
    // Extra -D flags for trying kernel variants without rebuilding (`tuning` builds only;
    // part of the cache key).
    defs.extend(cfg.tuning.nvrtc_defines.iter().cloned());
    nvrtc::compile(
        &nvrtc::MLDSA,
        arch,
        p.name(),
        defs,
        cfg.cache_dir.as_deref(),
    )
}

kernel_table! {
    struct Fns {
        keygen_seed,
        expand_a,
        expand_s,
        keygen_main,
        keygen_tr,
        sign_mu,
        sign_rhopp,
        sign_decode,
        sign_init,
        sign_schedule,
        expand_mask,
        sign_w,
        sign_challenge,
        sign_z,
        sign_commit,
        verify_tr,
        verify_prep,
        verify_w,
        verify_final,
    }
}

/// The loaded kernels of one parameter set.
pub struct Kernels {
    pub g: Geometry,
    pub io: HostIo,
    f: Fns,
    /// Threads per block of `sign_w` and `sign_z` (as compiled).
    sign_nt: [u32; 2],
}

/// Every kernel the module must export (for the compile test).
#[cfg(test)]
pub fn names() -> Vec<&'static str> {
    [HostIo::NAMES, Fns::NAMES].concat()
}

impl Kernels {
    /// Compiles (or reads from the cache) and loads `p`'s kernels for compute capability `arch`.
    /// The error names the kernel file and carries NVRTC's log.
    pub fn load(
        ctx: &Arc<CudaContext>,
        arch: (i32, i32),
        p: ParamSet,
        cfg: &GpuConfig,
    ) -> Result<Kernels, String> {
        let module = Module::load(ctx, compile(arch, p, cfg)?, p.name())?;
        Ok(Kernels {
            g: Geometry::of(p),
            io: HostIo::resolve(&module, cfg.tuning.hostio_kernel)?,
            f: Fns::resolve(&module)?,
            sign_nt: sign_threads(cfg),
        })
    }

    /// `keygen_seed(xi, seeds, n)`: (rho, rho', K) = H(xi || k || l) per item (128 bytes each).
    pub fn keygen_seed(
        &self,
        w: &mut Worker,
        xi: Dev<u8>,
        seeds: Dev<u8>,
        n: usize,
    ) -> Result<(), DriverError> {
        let args = [xi.into(), seeds.into(), n32(n).into()];
        w.launch(&self.f.keygen_seed, blocks(n, ST), ST, &args)
    }

    /// `expand_a(rho_base, rho_stride, a_out, n)`: A-hat of n items, one thread per polynomial;
    /// rho is the first 32 bytes of each `rho_stride`-byte row.
    pub fn expand_a(
        &self,
        w: &mut Worker,
        rho_base: Dev<u8>,
        rho_stride: usize,
        a_out: Dev<u32>,
        n: usize,
    ) -> Result<(), DriverError> {
        let args = [
            rho_base.into(),
            n32(rho_stride).into(),
            a_out.into(),
            n32(n).into(),
        ];
        let grid = blocks(n * self.g.k * self.g.l, ST);
        w.launch(&self.f.expand_a, grid, ST, &args)
    }

    /// `expand_s(seeds, s_out, n)`: s1 and s2 of n items, one thread per polynomial.
    pub fn expand_s(
        &self,
        w: &mut Worker,
        seeds: Dev<u8>,
        s_out: Dev<i32>,
        n: usize,
    ) -> Result<(), DriverError> {
        let args = [seeds.into(), s_out.into(), n32(n).into()];
        let grid = blocks(n * (self.g.k + self.g.l), ST);
        w.launch(&self.f.expand_s, grid, ST, &args)
    }

    /// `keygen_main(seeds, a, s, pk, sk, n)`: t = A s1 + s2, Power2Round and packing; one block
    /// per item.
    pub fn keygen_main(
        &self,
        w: &mut Worker,
        seeds: Dev<u8>,
        a: Dev<u32>,
        s: Dev<i32>,
        pk: Dev<u8>,
        sk: Dev<u8>,
        n: usize,
    ) -> Result<(), DriverError> {
        let args = [
            seeds.into(),
            a.into(),
            s.into(),
            pk.into(),
            sk.into(),
            n32(n).into(),
        ];
        w.launch(&self.f.keygen_main, n, NT, &args)
    }

    /// `keygen_tr(pk, sk, n)`: tr = H(pk) into sk.
    pub fn keygen_tr(
        &self,
        w: &mut Worker,
        pk: Dev<u8>,
        sk: Dev<u8>,
        n: usize,
    ) -> Result<(), DriverError> {
        let args = [pk.into(), sk.into(), n32(n).into()];
        w.launch(&self.f.keygen_tr, blocks(n, ST), ST, &args)
    }

    /// `sign_mu(sk, kidx, arena, msg_off, msg_len, kin, n)`: K and mu = H(tr || M') into each
    /// item's 128-byte kin row (K || rnd || mu), from the item's key (row `kidx[item]` of sk).
    pub fn sign_mu(
        &self,
        w: &mut Worker,
        sk: Dev<u8>,
        kidx: Dev<u32>,
        arena: Dev<u8>,
        msg_off: Dev<u64>,
        msg_len: Dev<u32>,
        kin: Dev<u8>,
        n: usize,
    ) -> Result<(), DriverError> {
        let args = [
            sk.into(),
            kidx.into(),
            arena.into(),
            msg_off.into(),
            msg_len.into(),
            kin.into(),
            n32(n).into(),
        ];
        w.launch(&self.f.sign_mu, blocks(n, ST), ST, &args)
    }

    /// `sign_rhopp(kin, rhopp, n)`: rho'' = H(K || rnd || mu).
    pub fn sign_rhopp(
        &self,
        w: &mut Worker,
        kin: Dev<u8>,
        rhopp: Dev<u8>,
        n: usize,
    ) -> Result<(), DriverError> {
        let args = [kin.into(), rhopp.into(), n32(n).into()];
        w.launch(&self.f.sign_rhopp, blocks(n, ST), ST, &args)
    }

    /// `sign_decode(sk, s1h, s2h, t0h, kbad)`: unpacks and checks each of `keys` secret keys,
    /// NTTs of s1, s2, t0; one block per key.
    pub fn sign_decode(
        &self,
        w: &mut Worker,
        sk: Dev<u8>,
        s1h: Dev<i32>,
        s2h: Dev<i32>,
        t0h: Dev<i32>,
        kbad: Dev<u32>,
        keys: usize,
    ) -> Result<(), DriverError> {
        let args = [sk.into(), s1h.into(), s2h.into(), t0h.into(), kbad.into()];
        w.launch(&self.f.sign_decode, keys, NT, &args)
    }

    /// `sign_init(kbad, kidx, status, best, next, n_bad, n)`: each task's loop state from its
    /// key's check.
    pub fn sign_init(
        &self,
        w: &mut Worker,
        kbad: Dev<u32>,
        kidx: Dev<u32>,
        status: Dev<u32>,
        best: Dev<u32>,
        next: Dev<u32>,
        n_bad: Dev<u32>,
        n: usize,
    ) -> Result<(), DriverError> {
        let args = [
            kbad.into(),
            kidx.into(),
            status.into(),
            best.into(),
            next.into(),
            n_bad.into(),
            n32(n).into(),
        ];
        w.launch(&self.f.sign_init, blocks(n, ST), ST, &args)
    }

    /// `sign_schedule(status, best, next, ent_task, ent_att, count, done, spec, n)`: the
    /// round's attempt entries, `spec` per pending task.
    pub fn sign_schedule(
        &self,
        w: &mut Worker,
        status: Dev<u32>,
        best: Dev<u32>,
        next: Dev<u32>,
        ent_task: Dev<u32>,
        ent_att: Dev<u32>,
        count: Dev<u32>,
        done: Dev<u32>,
        spec: u32,
        n: usize,
    ) -> Result<(), DriverError> {
        let args = [
            status.into(),
            best.into(),
            next.into(),
            ent_task.into(),
            ent_att.into(),
            count.into(),
            done.into(),
            spec.into(),
            n32(n).into(),
        ];
        w.launch(&self.f.sign_schedule, blocks(n, ST), ST, &args)
    }

    /// `expand_mask(rhopp, ent_task, ent_att, count, y)` over `entries` attempt entries.
    pub fn expand_mask(
        &self,
        w: &mut Worker,
        entries: usize,
        rhopp: Dev<u8>,
        ent_task: Dev<u32>,
        ent_att: Dev<u32>,
        count: Dev<u32>,
        y: Dev<i32>,
    ) -> Result<(), DriverError> {
        let args = [
            rhopp.into(),
            ent_task.into(),
            ent_att.into(),
            count.into(),
            y.into(),
        ];
        w.launch(
            &self.f.expand_mask,
            blocks(entries * self.g.l, ST),
            ST,
            &args,
        )
    }

    /// `sign_w(a, kidx, kin, y, ent_task, count, w, hbuf)`: w = A y (A of the task's key),
    /// w1 and mu || w1Encode(w1); one block per entry.
    pub fn sign_w(
        &self,
        w: &mut Worker,
        entries: usize,
        a: Dev<u32>,
        kidx: Dev<u32>,
        kin: Dev<u8>,
        y: Dev<i32>,
        ent_task: Dev<u32>,
        count: Dev<u32>,
        w_out: Dev<i32>,
        hbuf: Dev<u8>,
    ) -> Result<(), DriverError> {
        let args = [
            a.into(),
            kidx.into(),
            kin.into(),
            y.into(),
            ent_task.into(),
            count.into(),
            w_out.into(),
            hbuf.into(),
        ];
        w.launch(&self.f.sign_w, entries, self.sign_nt[0], &args)
    }

    /// `sign_challenge(hbuf, count, ctilde, c)`: c~ = H(mu || w1Encode(w1)) and SampleInBall.
    pub fn sign_challenge(
        &self,
        w: &mut Worker,
        entries: usize,
        hbuf: Dev<u8>,
        count: Dev<u32>,
        ctilde: Dev<u8>,
        c: Dev<u64>,
    ) -> Result<(), DriverError> {
        let args = [hbuf.into(), count.into(), ctilde.into(), c.into()];
        w.launch(&self.f.sign_challenge, blocks(entries, ST), ST, &args)
    }

    /// `sign_z(kidx, s1h, s2h, t0h, y, w, ctilde, c, ent_task, ent_att, count, best, done,
    /// ok, slot)`: z, the checks, the hint and the packed attempt (s1, s2, t0 of the task's
    /// key); one block per entry.
    pub fn sign_z(
        &self,
        w: &mut Worker,
        entries: usize,
        kidx: Dev<u32>,
        s1h: Dev<i32>,
        s2h: Dev<i32>,
        t0h: Dev<i32>,
        y: Dev<i32>,
        w_in: Dev<i32>,
        ctilde: Dev<u8>,
        c: Dev<u64>,
        ent_task: Dev<u32>,
        ent_att: Dev<u32>,
        count: Dev<u32>,
        best: Dev<u32>,
        done: Dev<u32>,
        ok: Dev<u8>,
        slot: Dev<u8>,
    ) -> Result<(), DriverError> {
        let args = [
            kidx.into(),
            s1h.into(),
            s2h.into(),
            t0h.into(),
            y.into(),
            w_in.into(),
            ctilde.into(),
            c.into(),
            ent_task.into(),
            ent_att.into(),
            count.into(),
            best.into(),
            done.into(),
            ok.into(),
            slot.into(),
        ];
        w.launch(&self.f.sign_z, entries, self.sign_nt[1], &args)
    }

    /// `sign_commit(ent_task, ent_att, count, best, ok, slot, sig_out)`: each task's winning
    /// attempt into its signature row; one block per entry.
    pub fn sign_commit(
        &self,
        w: &mut Worker,
        entries: usize,
        ent_task: Dev<u32>,
        ent_att: Dev<u32>,
        count: Dev<u32>,
        best: Dev<u32>,
        ok: Dev<u8>,
        slot: Dev<u8>,
        sig_out: Dev<u8>,
    ) -> Result<(), DriverError> {
        let args = [
            ent_task.into(),
            ent_att.into(),
            count.into(),
            best.into(),
            ok.into(),
            slot.into(),
            sig_out.into(),
        ];
        w.launch(&self.f.sign_commit, entries, NT, &args)
    }

    /// `verify_tr(pk, tr, keys)`: tr = H(pk) of each distinct key, in 64-byte rows.
    pub fn verify_tr(
        &self,
        w: &mut Worker,
        pk: Dev<u8>,
        tr: Dev<u8>,
        keys: usize,
    ) -> Result<(), DriverError> {
        let args = [pk.into(), tr.into(), n32(keys).into()];
        w.launch(&self.f.verify_tr, blocks(keys, ST), ST, &args)
    }

    /// `verify_prep(pk, tr, kidx, sig, arena, msg_off, msg_len, hbuf, c, hint, vstat, n)`: mu
    /// from the item's key's tr (from `tr`, or hashed from pk when `tr` is null), the
    /// signature's hint checks, SampleInBall.
    pub fn verify_prep(
        &self,
        w: &mut Worker,
        pk: Dev<u8>,
        tr: Dev<u8>,
        kidx: Dev<u32>,
        sig: Dev<u8>,
        arena: Dev<u8>,
        msg_off: Dev<u64>,
        msg_len: Dev<u32>,
        hbuf: Dev<u8>,
        c: Dev<u64>,
        hint: Dev<u32>,
        vstat: Dev<u32>,
        n: usize,
    ) -> Result<(), DriverError> {
        let args = [
            pk.into(),
            tr.into(),
            kidx.into(),
            sig.into(),
            arena.into(),
            msg_off.into(),
            msg_len.into(),
            hbuf.into(),
            c.into(),
            hint.into(),
            vstat.into(),
            n32(n).into(),
        ];
        w.launch(&self.f.verify_prep, blocks(n, ST), ST, &args)
    }

    /// `verify_w(a, kidx, pk, sig, c, hint, vstat, hbuf, n)`: w'1 = UseHint(h, A z - c t1 2^d)
    /// with A and t1 of the item's key; one block per item.
    pub fn verify_w(
        &self,
        w: &mut Worker,
        a: Dev<u32>,
        kidx: Dev<u32>,
        pk: Dev<u8>,
        sig: Dev<u8>,
        c: Dev<u64>,
        hint: Dev<u32>,
        vstat: Dev<u32>,
        hbuf: Dev<u8>,
        n: usize,
    ) -> Result<(), DriverError> {
        let args = [
            a.into(),
            kidx.into(),
            pk.into(),
            sig.into(),
            c.into(),
            hint.into(),
            vstat.into(),
            hbuf.into(),
            n32(n).into(),
        ];
        w.launch(&self.f.verify_w, n, NT, &args)
    }

    /// `verify_final(hbuf, sig, vstat, result, n)`: compares c~ with H(mu || w1Encode(w'1)).
    pub fn verify_final(
        &self,
        w: &mut Worker,
        hbuf: Dev<u8>,
        sig: Dev<u8>,
        vstat: Dev<u32>,
        result: Dev<u32>,
        n: usize,
    ) -> Result<(), DriverError> {
        let args = [
            hbuf.into(),
            sig.into(),
            vstat.into(),
            result.into(),
            n32(n).into(),
        ];
        w.launch(&self.f.verify_final, blocks(n, ST), ST, &args)
    }
}
