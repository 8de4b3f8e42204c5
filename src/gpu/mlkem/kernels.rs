//! The ML-KEM kernels of one parameter set (`kernels/mlkem.cu`): their sizes, passed to NVRTC as
//! `-D` definitions (the one place they are written), the compiled module with every kernel
//! resolved at load, and one typed launcher per kernel (parameters in the kernel's order).
// A launcher takes the kernel's parameters one by one, in order: as many as the kernel has.
#![allow(clippy::too_many_arguments)]

use crate::gpu::config::GpuConfig;
use crate::gpu::hostio::HostIo;
use crate::gpu::launch::{blocks, kernel_table, Dev};
use crate::gpu::nvrtc::{self, Module};
use crate::gpu::worker::Worker;
use crate::mlkem::ParamSet;
use cudarc::driver::{CudaContext, DriverError};
use std::sync::Arc;

/// Threads per block of every ML-KEM kernel (one thread per item, row or matrix entry; each
/// holds a few polynomials in local memory).
const BLOCK: u32 = 128;

/// FIPS 203's parameters (Table 2) and the byte sizes of one set. Every device row is the
/// standard encoding itself: ek, dk and ct lengths are multiples of 16, so rows stay aligned.
#[derive(Clone, Copy)]
pub struct Sizes {
    pub k: usize,
    pub eta1: usize,
    pub du: usize,
    pub dv: usize,
    pub ek: usize,
    pub dk: usize,
    pub ct: usize,
}

impl Sizes {
    pub fn of(p: ParamSet) -> Sizes {
        let (eta1, du, dv) = match p {
            ParamSet::MlKem512 => (3, 10, 4),
            ParamSet::MlKem768 => (2, 10, 4),
            ParamSet::MlKem1024 => (2, 11, 5),
        };
        let k = p.k();
        Sizes {
            k,
            eta1,
            du,
            dv,
            ek: p.encaps_key_len(),
            dk: p.decaps_key_len(),
            ct: p.ciphertext_len(),
        }
    }

    /// Offset of rho in an ek row, and of ek in a dk row (both 384 k).
    pub fn t_len(&self) -> usize {
        384 * self.k
    }
}

/// The -D definitions that fix one parameter set in the kernels.
pub fn defines(p: ParamSet) -> Vec<String> {
    let s = Sizes::of(p);
    nvrtc::defines(&[
        ("MLKEM_K", s.k),
        ("MLKEM_ETA1", s.eta1),
        ("MLKEM_DU", s.du),
        ("MLKEM_DV", s.dv),
    ])
}

/// PTX of `p`'s kernels for compute capability `arch`.
pub fn compile(arch: (i32, i32), p: ParamSet, cfg: &GpuConfig) -> Result<String, String> {
    nvrtc::compile(
        &nvrtc::MLKEM,
        arch,
        p.name(),
        defines(p),
        cfg.cache_dir.as_deref(),
    )
}

kernel_table! {
    struct Fns {
        mlkem_coins,
        mlkem_ek_prep,
        mlkem_dk_prep,
        mlkem_expand_a,
        mlkem_keygen_g,
        mlkem_keygen_noise,
        mlkem_keygen_t,
        mlkem_keygen_finish,
        mlkem_encaps,
        mlkem_decaps,
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

fn n32(n: usize) -> u32 {
    n as u32
}

impl Kernels {
    /// Compiles (or reads from the cache) and loads `p`'s kernels.
    pub fn load(ctx: &Arc<CudaContext>, p: ParamSet, cfg: &GpuConfig) -> Result<Kernels, String> {
        let arch = ctx
            .compute_capability()
            .map_err(|e| format!("compute capability: {e:?}"))?;
        let module = Module::load(ctx, compile(arch, p, cfg)?, p.name())?;
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

    /// `mlkem_coins(key, m, len)`: `n` fresh 32-byte messages m, the first `32 n` bytes of
    /// ChaCha20 stream 0 under the 32 bytes at `key` (`kernels/chacha.cuh`).
    pub fn coins(
        &self,
        w: &mut Worker,
        key: Dev<u8>,
        m: Dev<u8>,
        n: usize,
    ) -> Result<(), DriverError> {
        let args = [key.into(), m.into(), n32(n * 32).into()];
        self.run(w, &self.f.mlkem_coins, n.div_ceil(2), &args)
    }

    /// `mlkem_ek_prep(eks, nkeys, hek, ok)`: the modulus check of each ek row and H(ek).
    pub fn ek_prep(
        &self,
        w: &mut Worker,
        eks: Dev<u8>,
        nkeys: usize,
        hek: Dev<u8>,
        ok: Dev<u32>,
    ) -> Result<(), DriverError> {
        let args = [eks.into(), n32(nkeys).into(), hek.into(), ok.into()];
        self.run(w, &self.f.mlkem_ek_prep, nkeys, &args)
    }

    /// `mlkem_dk_prep(dks, nkeys, ok)`: the hash check of each dk row.
    pub fn dk_prep(
        &self,
        w: &mut Worker,
        dks: Dev<u8>,
        nkeys: usize,
        ok: Dev<u32>,
    ) -> Result<(), DriverError> {
        let args = [dks.into(), n32(nkeys).into(), ok.into()];
        self.run(w, &self.f.mlkem_dk_prep, nkeys, &args)
    }

    /// `mlkem_expand_a(rho_rows, stride, nkeys, amat)`: Â of each key (rho at
    /// `rho_rows + key * stride`), item-minor over the keys.
    pub fn expand_a(
        &self,
        w: &mut Worker,
        rho_rows: Dev<u8>,
        stride: usize,
        nkeys: usize,
        amat: Dev<u16>,
    ) -> Result<(), DriverError> {
        let args = [
            rho_rows.into(),
            n32(stride).into(),
            n32(nkeys).into(),
            amat.into(),
        ];
        let k = self.s.k;
        self.run(w, &self.f.mlkem_expand_a, nkeys * k * k, &args)
    }

    /// `mlkem_keygen_g(seeds, rs, n)`: rho || sigma = G(d || k).
    pub fn keygen_g(
        &self,
        w: &mut Worker,
        seeds: Dev<u8>,
        rs: Dev<u8>,
        n: usize,
    ) -> Result<(), DriverError> {
        let args = [seeds.into(), rs.into(), n32(n).into()];
        self.run(w, &self.f.mlkem_keygen_g, n, &args)
    }

    /// `mlkem_keygen_noise(rs, shat, ehat, dks, n)`: ŝ (into dk and `shat`) and ê.
    pub fn keygen_noise(
        &self,
        w: &mut Worker,
        rs: Dev<u8>,
        shat: Dev<u16>,
        ehat: Dev<u16>,
        dks: Dev<u8>,
        n: usize,
    ) -> Result<(), DriverError> {
        let args = [
            rs.into(),
            shat.into(),
            ehat.into(),
            dks.into(),
            n32(n).into(),
        ];
        self.run(w, &self.f.mlkem_keygen_noise, n * self.s.k, &args)
    }

    /// `mlkem_keygen_t(rs, shat, ehat, eks, n)`: t̂ = Â ŝ + ê and rho into the ek rows.
    pub fn keygen_t(
        &self,
        w: &mut Worker,
        rs: Dev<u8>,
        shat: Dev<u16>,
        ehat: Dev<u16>,
        eks: Dev<u8>,
        n: usize,
    ) -> Result<(), DriverError> {
        let args = [
            rs.into(),
            shat.into(),
            ehat.into(),
            eks.into(),
            n32(n).into(),
        ];
        self.run(w, &self.f.mlkem_keygen_t, n * self.s.k, &args)
    }

    /// `mlkem_keygen_finish(seeds, eks, dks, n)`: dk = dk_pke || ek || H(ek) || z.
    pub fn keygen_finish(
        &self,
        w: &mut Worker,
        seeds: Dev<u8>,
        eks: Dev<u8>,
        dks: Dev<u8>,
        n: usize,
    ) -> Result<(), DriverError> {
        let args = [seeds.into(), eks.into(), dks.into(), n32(n).into()];
        self.run(w, &self.f.mlkem_keygen_finish, n, &args)
    }

    /// `mlkem_encaps(msgs, key_idx, eks, hek, amat, nkeys, cts, sss, n)`; `key_idx` null: item
    /// i uses key i.
    pub fn encaps(
        &self,
        w: &mut Worker,
        msgs: Dev<u8>,
        key_idx: Dev<u32>,
        (eks, hek, amat, nkeys): (Dev<u8>, Dev<u8>, Dev<u16>, usize),
        cts: Dev<u8>,
        sss: Dev<u8>,
        n: usize,
    ) -> Result<(), DriverError> {
        let args = [
            msgs.into(),
            key_idx.into(),
            eks.into(),
            hek.into(),
            amat.into(),
            n32(nkeys).into(),
            cts.into(),
            sss.into(),
            n32(n).into(),
        ];
        self.run(w, &self.f.mlkem_encaps, n, &args)
    }

    /// `mlkem_decaps(cts, key_idx, dks, amat, nkeys, sss, n)`; `key_idx` null: item i uses key i.
    pub fn decaps(
        &self,
        w: &mut Worker,
        cts: Dev<u8>,
        key_idx: Dev<u32>,
        (dks, amat, nkeys): (Dev<u8>, Dev<u16>, usize),
        sss: Dev<u8>,
        n: usize,
    ) -> Result<(), DriverError> {
        let args = [
            cts.into(),
            key_idx.into(),
            dks.into(),
            amat.into(),
            n32(nkeys).into(),
            sss.into(),
            n32(n).into(),
        ];
        self.run(w, &self.f.mlkem_decaps, n, &args)
    }
}
