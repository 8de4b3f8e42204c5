//! The ML-KEM kernels of one parameter set (`kernels/mlkem.cu`): their sizes, passed to NVRTC as
//! `-D` definitions (the one place they are written), the compiled module with every kernel
//! resolved at load, and a typed launcher per kernel or per pipeline of kernels (keygen,
//! encaps, decaps: the Keccak stream kernels and the block kernels between them, their
//! intermediate rows in the worker's scratch buffers).
// A launcher takes the kernel's parameters one by one, in order: as many as the kernel has.
#![allow(clippy::too_many_arguments)]

use crate::gpu::config::GpuConfig;
use crate::gpu::hostio::HostIo;
use crate::gpu::launch::{blocks, kernel_table, n32, Dev};
use crate::gpu::nvrtc::{self, Module};
use crate::gpu::worker::Worker;
use crate::mlkem::ParamSet;
use cudarc::driver::{CudaContext, DriverError};
use std::sync::Arc;

/// Threads per block of the one-thread-per-task kernels (Keccak: one state per thread).
const BLOCK: u32 = 128;

/// Threads per item of the block kernels (the polynomial arithmetic: a coefficient pair per
/// thread); the kernels are written for 128.
const ITEM_THREADS: u32 = 128;

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

    /// Bytes of one PRF output in a noise row (`NOISE_SLOT`: 64 eta1).
    fn noise_slot(&self) -> usize {
        64 * self.eta1
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
        ("MLKEM_NT", ITEM_THREADS as usize),
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
        mlkem_prf,
        mlkem_keygen_g,
        mlkem_keygen_main,
        mlkem_keygen_finish,
        mlkem_encaps_g,
        mlkem_encaps_encrypt,
        mlkem_decrypt,
        mlkem_decaps_g,
        mlkem_decaps_check,
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

    /// A block kernel: one block of [`ITEM_THREADS`] per item.
    fn run_items(
        &self,
        w: &mut Worker,
        k: &crate::gpu::launch::Kernel,
        n: usize,
        args: &[crate::gpu::launch::Arg],
    ) -> Result<(), DriverError> {
        w.launch(k, n, ITEM_THREADS, args)
    }

    /// `mlkem_prf(seeds, stride, count, wide, noise, n)`: PRF outputs of nonces 0..count per
    /// item (the first `wide` with eta1) into the worker's noise rows, which it returns.
    fn prf(
        &self,
        w: &mut Worker,
        seeds: Dev<u8>,
        stride: usize,
        (count, wide): (usize, usize),
        n: usize,
    ) -> Result<Dev<u8>, DriverError> {
        let noise = w.dev("mlkem_noise", n * count * self.s.noise_slot())?;
        let args = [
            seeds.into(),
            n32(stride).into(),
            n32(count).into(),
            n32(wide).into(),
            noise.into(),
            n32(n).into(),
        ];
        self.run(w, &self.f.mlkem_prf, n * count, &args)?;
        Ok(noise)
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
    /// `rho_rows + key * stride`), key-major.
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

    /// KeyGen_internal of `n` items: `mlkem_keygen_g(seeds, rs, n)` (rho || sigma into `rs`,
    /// 64 bytes per item), `mlkem_expand_a` of each item's rho, `mlkem_prf` (s and e),
    /// `mlkem_keygen_main(rs, amat, noise, eks, dks)` (ŝ, t̂ and rho into the rows),
    /// `mlkem_keygen_finish(seeds, eks, dks, n)` (dk = dk_pke || ek || H(ek) || z).
    pub fn keygen(
        &self,
        w: &mut Worker,
        seeds: Dev<u8>,
        rs: Dev<u8>,
        (eks, dks): (Dev<u8>, Dev<u8>),
        n: usize,
    ) -> Result<(), DriverError> {
        let k = self.s.k;
        let args = [seeds.into(), rs.into(), n32(n).into()];
        self.run(w, &self.f.mlkem_keygen_g, n, &args)?;
        let amat: Dev<u16> = w.dev("mlkem_kg_amat", n * k * k * 256)?;
        self.expand_a(w, rs, 64, n, amat)?;
        let noise = self.prf(w, rs.add(32), 64, (2 * k, 2 * k), n)?;
        let args = [rs.into(), amat.into(), noise.into(), eks.into(), dks.into()];
        self.run_items(w, &self.f.mlkem_keygen_main, n, &args)?;
        let args = [seeds.into(), eks.into(), dks.into(), n32(n).into()];
        self.run(w, &self.f.mlkem_keygen_finish, n, &args)
    }

    /// Encaps_internal of `n` items (`key_idx` null: item i uses key i), the keys' H(ek) and Â
    /// made: `mlkem_encaps_g(msgs, key_idx, hek, sss, coins, n)` ((K, r) = G(m || H(ek))),
    /// `mlkem_prf` of r, `mlkem_encaps_encrypt(msgs, key_idx, eks, amat, noise, cts)`.
    pub fn encaps(
        &self,
        w: &mut Worker,
        msgs: Dev<u8>,
        key_idx: Dev<u32>,
        (eks, hek, amat): (Dev<u8>, Dev<u8>, Dev<u16>),
        cts: Dev<u8>,
        sss: Dev<u8>,
        n: usize,
    ) -> Result<(), DriverError> {
        let k = self.s.k;
        let coins: Dev<u8> = w.dev("mlkem_coins_r", n * 32)?;
        let args = [
            msgs.into(),
            key_idx.into(),
            hek.into(),
            sss.into(),
            coins.into(),
            n32(n).into(),
        ];
        self.run(w, &self.f.mlkem_encaps_g, n, &args)?;
        let noise = self.prf(w, coins, 32, (2 * k + 1, k), n)?;
        let args = [
            msgs.into(),
            key_idx.into(),
            eks.into(),
            amat.into(),
            noise.into(),
            cts.into(),
        ];
        self.run_items(w, &self.f.mlkem_encaps_encrypt, n, &args)
    }

    /// Decaps_internal of `n` items (`key_idx` null: item i uses key i), the keys' Â made:
    /// `mlkem_decrypt(cts, key_idx, dks, msgs)` (m'), `mlkem_decaps_g(cts, key_idx, dks, msgs,
    /// kk, coins, n)` (K', r', K-bar), `mlkem_prf` of r', `mlkem_decaps_check(cts, key_idx, dks,
    /// amat, msgs, noise, kk, ok, sss)` (re-encryption, comparison, selection; a zero shared
    /// secret where `ok[key]` is 0, `ok` null: every key passed its check).
    pub fn decaps(
        &self,
        w: &mut Worker,
        cts: Dev<u8>,
        key_idx: Dev<u32>,
        (dks, amat, ok): (Dev<u8>, Dev<u16>, Dev<u32>),
        sss: Dev<u8>,
        n: usize,
    ) -> Result<(), DriverError> {
        let k = self.s.k;
        let msgs: Dev<u8> = w.dev("mlkem_dec_msgs", n * 32)?;
        let kk: Dev<u8> = w.dev("mlkem_dec_kk", n * 64)?;
        let coins: Dev<u8> = w.dev("mlkem_coins_r", n * 32)?;
        let args = [cts.into(), key_idx.into(), dks.into(), msgs.into()];
        self.run_items(w, &self.f.mlkem_decrypt, n, &args)?;
        let args = [
            cts.into(),
            key_idx.into(),
            dks.into(),
            msgs.into(),
            kk.into(),
            coins.into(),
            n32(n).into(),
        ];
        self.run(w, &self.f.mlkem_decaps_g, n, &args)?;
        let noise = self.prf(w, coins, 32, (2 * k + 1, k), n)?;
        let args = [
            cts.into(),
            key_idx.into(),
            dks.into(),
            amat.into(),
            msgs.into(),
            noise.into(),
            kk.into(),
            ok.into(),
            sss.into(),
        ];
        self.run_items(w, &self.f.mlkem_decaps_check, n, &args)
    }
}
