//! The CTRU-Prime kernels of one parameter set (`kernels/ctru.cu`): their sizes, passed to NVRTC
//! as `-D` definitions (the one place they are written), the compiled module with every kernel
//! resolved at load, and one typed launcher per kernel (parameters in the kernel's order).
// A launcher takes the kernel's parameters one by one, in order: as many as the kernel has.
#![allow(clippy::too_many_arguments)]

use crate::ctru::ParamSet;
use crate::gpu::config::{GpuConfig, ProductEngine};
use crate::gpu::hostio::HostIo;
use crate::gpu::launch::{blocks, kernel_table, n32, Dev};
use crate::gpu::nvrtc::{self, Module};
use crate::gpu::worker::Worker;
use cudarc::driver::{CudaContext, DriverError};
use std::sync::Arc;

/// Threads per block of the one-thread-per-item kernels.
const BLOCK_ITEM: u32 = 128;
/// Bytes per message row on the device (`MSG_STRIDE`; MSGBYTES <= 79).
pub const MSG_STRIDE: usize = 128;
/// Bytes of one key's `keyinfo` row (`KEYINFO`): pk33 at 0, z at 64.
pub const KEYINFO: usize = 128;
/// Output coefficients per thread of the full product (`MF_R`): a product block has
/// NP / MF_R threads.
const MF_R: usize = 8;
/// `mul_tc`'s warps per block, stacked along items, and m16 tiles per warp (`TC_WARPS`,
/// `TC_MT`).
const TC_WARPS: usize = 4;
const TC_MT: usize = 2;
/// Items per `mul_tc` block; the item side is padded to this.
pub const TC_ITEMS: usize = TC_WARPS * TC_MT * 16;

/// Sizes shared with the kernels. NP: n + 1 rounded up to 32 (the MMA k-step; the inversion
/// keeps n + 1 coefficients); ct rows are padded to 16 bytes for word access.
#[derive(Clone, Copy)]
pub struct Sizes {
    pub n: usize,
    pub np: usize,
    pub pk: usize,
    pub sk: usize,
    pub ct: usize,
    pub ct_stride: usize,
}

impl Sizes {
    pub fn of(p: ParamSet) -> Sizes {
        Sizes {
            n: p.n(),
            np: (p.n() + 1).div_ceil(32) * 32,
            pk: p.public_key_len(),
            sk: p.secret_key_len(),
            ct: p.ciphertext_len(),
            ct_stride: p.ciphertext_len().div_ceil(16) * 16,
        }
    }
}

/// The -D definitions that fix one parameter set's sizes in the kernels.
pub fn defines(p: ParamSet) -> Vec<String> {
    let s = Sizes::of(p);
    nvrtc::defines(&[
        ("CTRU_N", s.n),
        ("CTRU_NP", s.np),
        ("CTRU_Q", p.q() as usize),
        ("CTRU_D2", p.q2_bits() as usize),
        ("CTRU_ETA", p.eta()),
        ("CTRU_MSGBYTES", p.msg_bytes()),
        ("CTRU_COIN_HALF", p.coin_half_bytes()),
        ("CTRU_PK_LEN", s.pk),
        ("CTRU_CT_LEN", s.ct),
        ("CTRU_CT_STRIDE", s.ct_stride),
        ("CTRU_SKPKE_LEN", p.sk_pke_len()),
        ("CTRU_KEYINFO", KEYINFO),
        ("CTRU_MSG_STRIDE", MSG_STRIDE),
        ("CTRU_MF_R", MF_R),
        ("CTRU_TC_WARPS", TC_WARPS),
        ("CTRU_TC_MT", TC_MT),
    ])
}

/// PTX of `p`'s kernels for compute capability `arch`.
pub fn compile(arch: (i32, i32), p: ParamSet, cfg: &GpuConfig) -> Result<String, String> {
    nvrtc::compile(
        &nvrtc::CTRU,
        arch,
        p.name(),
        defines(p),
        cfg.cache_dir.as_deref(),
    )
}

kernel_table! {
    struct Fns {
        encaps_coins,
        encaps_hash,
        keygen_sample,
        decaps_kbar,
        encaps_finish,
        decaps_unpack,
        decaps_decode,
        decaps_finish,
        keygen_invert,
        tree_leaves,
        tree_up,
        tree_invert,
        tree_down,
        keygen_pack,
        mul_cc,
        expand_key,
        mul_tc,
    }
}

/// Every kernel the module must export (for the compile test).
#[cfg(test)]
pub fn names() -> Vec<&'static str> {
    [HostIo::NAMES, Fns::NAMES].concat()
}

/// The loaded kernels of one parameter set, with the engine choices of a `tuning` build.
pub struct Kernels {
    pub s: Sizes,
    pub io: HostIo,
    /// `PQGPU_CTRU_ENGINE`: the product engine forced for every chunk.
    pub forced_engine: Option<ProductEngine>,
    /// `PQGPU_CTRU_INVERT=perkey`: KeyGen inverts one key per warp instead of the tree.
    pub per_key_invert: bool,
    f: Fns,
}

impl Kernels {
    /// Compiles (or reads from the cache) and loads `p`'s kernels.
    pub fn load(ctx: &Arc<CudaContext>, p: ParamSet, cfg: &GpuConfig) -> Result<Kernels, String> {
        let module = Module::compile_and_load(ctx, p.name(), |arch| compile(arch, p, cfg))?;
        Ok(Kernels {
            s: Sizes::of(p),
            io: HostIo::resolve(&module, cfg.tuning.hostio_kernel)?,
            forced_engine: cfg.tuning.ctru_engine,
            per_key_invert: cfg.tuning.ctru_invert_perkey,
            f: Fns::resolve(&module)?,
        })
    }

    /// `encaps_coins(key, e, len)`: `n` fresh 32-byte seeds e, the first `32 n` bytes of
    /// ChaCha20 stream 0 under the 32 bytes at `key` (`kernels/chacha.cuh`).
    pub fn encaps_coins(
        &self,
        w: &mut Worker,
        key: Dev<u8>,
        e: Dev<u8>,
        n: usize,
    ) -> Result<(), DriverError> {
        let args = [key.into(), e.into(), n32(n * 32).into()];
        w.launch(
            &self.f.encaps_coins,
            blocks(n.div_ceil(2), BLOCK_ITEM),
            BLOCK_ITEM,
            &args,
        )
    }

    /// `encaps_hash(e, from_msg, keyinfo, key_idx, msg, kout, r, n)`: m = SHAKE256(e) (or the
    /// message already in `msg` when `from_msg`), (K || s) = SHA3-512(pk33 || m), r = CBD(s).
    /// `key_idx` null: item i uses key i.
    pub fn encaps_hash(
        &self,
        w: &mut Worker,
        e: Dev<u8>,
        from_msg: bool,
        keyinfo: Dev<u8>,
        key_idx: Dev<u32>,
        msg: Dev<u8>,
        kout: Dev<u8>,
        r: Dev<i8>,
        n: usize,
    ) -> Result<(), DriverError> {
        let args = [
            e.into(),
            (from_msg as u32).into(),
            keyinfo.into(),
            key_idx.into(),
            msg.into(),
            kout.into(),
            r.into(),
            n32(n).into(),
        ];
        w.launch(
            &self.f.encaps_hash,
            blocks(n, BLOCK_ITEM),
            BLOCK_ITEM,
            &args,
        )
    }

    /// `keygen_sample(seeds, f, g, n)`: f = 2f' + 1 and g from each 64-byte seed.
    pub fn keygen_sample(
        &self,
        w: &mut Worker,
        seeds: Dev<u8>,
        f: Dev<i8>,
        g: Dev<i8>,
        n: usize,
    ) -> Result<(), DriverError> {
        let args = [seeds.into(), f.into(), g.into(), n32(n).into()];
        w.launch(
            &self.f.keygen_sample,
            blocks(n, BLOCK_ITEM),
            BLOCK_ITEM,
            &args,
        )
    }

    /// `decaps_kbar(ct, keyinfo, key_idx, kbar, n)`: K-bar = SHA3-512(pk33 || z || ct)[..32].
    pub fn decaps_kbar(
        &self,
        w: &mut Worker,
        ct: Dev<u8>,
        keyinfo: Dev<u8>,
        key_idx: Dev<u32>,
        kbar: Dev<u8>,
        n: usize,
    ) -> Result<(), DriverError> {
        let args = [
            ct.into(),
            keyinfo.into(),
            key_idx.into(),
            kbar.into(),
            n32(n).into(),
        ];
        w.launch(
            &self.f.decaps_kbar,
            blocks(n, BLOCK_ITEM),
            BLOCK_ITEM,
            &args,
        )
    }

    /// `encaps_finish(sigma, msg, ct, n)`: compression, E8 encoding and packing; one warp per
    /// item.
    pub fn encaps_finish(
        &self,
        w: &mut Worker,
        sigma: Dev<u16>,
        msg: Dev<u8>,
        ct: Dev<u8>,
        n: usize,
    ) -> Result<(), DriverError> {
        let args = [sigma.into(), msg.into(), ct.into(), n32(n).into()];
        w.launch(&self.f.encaps_finish, blocks(n * 32, 256), 256, &args)
    }

    /// `decaps_unpack(ct, lo, hi, n)`: c as two i8 digits (c = 128 hi + lo).
    pub fn decaps_unpack(
        &self,
        w: &mut Worker,
        ct: Dev<u8>,
        lo: Dev<i8>,
        hi: Dev<i8>,
        n: usize,
    ) -> Result<(), DriverError> {
        let args = [ct.into(), lo.into(), hi.into(), n32(n).into()];
        w.launch(
            &self.f.decaps_unpack,
            blocks(n, BLOCK_ITEM),
            BLOCK_ITEM,
            &args,
        )
    }

    /// `decaps_decode(v, msg, n)`: m' = E8 decoding of c f mod q2.
    pub fn decaps_decode(
        &self,
        w: &mut Worker,
        v: Dev<u16>,
        msg: Dev<u8>,
        n: usize,
    ) -> Result<(), DriverError> {
        let args = [v.into(), msg.into(), n32(n).into()];
        w.launch(
            &self.f.decaps_decode,
            blocks(n, BLOCK_ITEM),
            BLOCK_ITEM,
            &args,
        )
    }

    /// `decaps_finish(sigma, msg, ct, kprime, kbar, ss, n)`: re-encryption compared with ct in
    /// constant time; K' or K-bar.
    pub fn decaps_finish(
        &self,
        w: &mut Worker,
        sigma: Dev<u16>,
        msg: Dev<u8>,
        ct: Dev<u8>,
        kprime: Dev<u8>,
        kbar: Dev<u8>,
        ss: Dev<u8>,
        n: usize,
    ) -> Result<(), DriverError> {
        let args = [
            sigma.into(),
            msg.into(),
            ct.into(),
            kprime.into(),
            kbar.into(),
            ss.into(),
            n32(n).into(),
        ];
        w.launch(
            &self.f.decaps_finish,
            blocks(n, BLOCK_ITEM),
            BLOCK_ITEM,
            &args,
        )
    }

    /// `keygen_invert(f_in, finv, n)`: f^-1 by divsteps, one warp per key (four per block).
    pub fn keygen_invert(
        &self,
        w: &mut Worker,
        f_in: Dev<i8>,
        finv: Dev<i16>,
        n: usize,
    ) -> Result<(), DriverError> {
        let args = [f_in.into(), finv.into(), n32(n).into()];
        w.launch(&self.f.keygen_invert, n.div_ceil(4), 128, &args)
    }

    /// `tree_leaves(f, leaf, n)`: the leaves (f as u16 residues).
    pub fn tree_leaves(
        &self,
        w: &mut Worker,
        f: Dev<i8>,
        leaf: Dev<u16>,
        n: usize,
    ) -> Result<(), DriverError> {
        let args = [f.into(), leaf.into(), n32(n).into()];
        w.launch(
            &self.f.tree_leaves,
            (n * self.s.np).div_ceil(256),
            256,
            &args,
        )
    }

    /// `tree_up(lower, upper, m)`: the products of the pairs of a level of `m` nodes; one block
    /// per parent (`parents` of them).
    pub fn tree_up(
        &self,
        w: &mut Worker,
        parents: usize,
        lower: Dev<u16>,
        upper: Dev<u16>,
        m: usize,
    ) -> Result<(), DriverError> {
        let args = [lower.into(), upper.into(), n32(m).into()];
        w.launch(&self.f.tree_up, parents, (self.s.np / MF_R) as u32, &args)
    }

    /// `tree_invert(root, inv)`: the root's inverse by divsteps, one warp.
    pub fn tree_invert(
        &self,
        w: &mut Worker,
        root: Dev<u16>,
        inv: Dev<i16>,
    ) -> Result<(), DriverError> {
        let args = [root.into(), inv.into()];
        w.launch(&self.f.tree_invert, 1, 32, &args)
    }

    /// `tree_down(inv_upper, lower, inv_lower, m)`: the inverses of a level of `m` nodes; one
    /// block per node.
    pub fn tree_down(
        &self,
        w: &mut Worker,
        inv_upper: Dev<u16>,
        lower: Dev<u16>,
        inv_lower: Dev<u16>,
        m: usize,
    ) -> Result<(), DriverError> {
        let args = [
            inv_upper.into(),
            lower.into(),
            inv_lower.into(),
            n32(m).into(),
        ];
        w.launch(&self.f.tree_down, m, (self.s.np / MF_R) as u32, &args)
    }

    /// `keygen_pack(h, f, seeds, pk, sk, n)`: pk = Encode(h), sk = PackF(f) || pk || z.
    pub fn keygen_pack(
        &self,
        w: &mut Worker,
        h: Dev<u16>,
        f: Dev<i8>,
        seeds: Dev<u8>,
        pk: Dev<u8>,
        sk: Dev<u8>,
        n: usize,
    ) -> Result<(), DriverError> {
        let args = [
            h.into(),
            f.into(),
            seeds.into(),
            pk.into(),
            sk.into(),
            n32(n).into(),
        ];
        w.launch(
            &self.f.keygen_pack,
            blocks(n, BLOCK_ITEM),
            BLOCK_ITEM,
            &args,
        )
    }

    /// `mul_cc(keyvec, key_idx, lo, hi, out, mod_q2, n)`: exact schoolbook product on the CUDA
    /// cores, one block per item; `hi` null for one-digit items, `key_idx` null for item i ->
    /// key i.
    pub fn mul_cc(
        &self,
        w: &mut Worker,
        keyvec: Dev<i16>,
        key_idx: Dev<u32>,
        lo: Dev<i8>,
        hi: Dev<i8>,
        out: Dev<u16>,
        mod_q2: bool,
        n: usize,
    ) -> Result<(), DriverError> {
        let args = [
            keyvec.into(),
            key_idx.into(),
            lo.into(),
            hi.into(),
            out.into(),
            (mod_q2 as u32).into(),
            n32(n).into(),
        ];
        w.launch(&self.f.mul_cc, n, 256, &args)
    }

    /// `expand_key(keyvec, key, digits, hi, lo)`: key row `key`'s NP x NP multiplication matrix
    /// in `digits` int8 digits.
    pub fn expand_key(
        &self,
        w: &mut Worker,
        keyvec: Dev<i16>,
        key: u32,
        digits: u32,
        hi: Dev<i8>,
        lo: Dev<i8>,
    ) -> Result<(), DriverError> {
        let args = [
            keyvec.into(),
            key.into(),
            digits.into(),
            hi.into(),
            lo.into(),
        ];
        let np = self.s.np;
        w.launch(&self.f.expand_key, (np * np).div_ceil(256), 256, &args)
    }

    /// `mul_tc(x_lo, x_hi, m_lo, m_hi, two_key, out, items)`: the matrix times `items` item
    /// columns (a multiple of [`TC_ITEMS`]) with int8 `mma.sync`.
    pub fn mul_tc(
        &self,
        w: &mut Worker,
        x_lo: Dev<i8>,
        x_hi: Dev<i8>,
        m_lo: Dev<i8>,
        m_hi: Dev<i8>,
        two_key: bool,
        out: Dev<u16>,
        items: usize,
    ) -> Result<(), DriverError> {
        let args = [
            x_lo.into(),
            x_hi.into(),
            m_lo.into(),
            m_hi.into(),
            (two_key as u32).into(),
            out.into(),
            n32(items).into(),
        ];
        let grid = (items / TC_ITEMS) * (self.s.np / 32);
        w.launch(&self.f.mul_tc, grid, (TC_WARPS * 32) as u32, &args)
    }
}
