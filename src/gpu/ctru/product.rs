//! The two ring-product engines (spec sections 4.1 and 9.2) and which one a chunk uses.
//!
//! * `CudaCore` (`mul_cc`): exact schoolbook product, one block per item, any mix of keys.
//! * `TensorCore` (`mul_tc`): the key's n x n multiplication matrix in int8 digits times the
//!   items' vectors as matrix columns, int8 `mma.sync` with int32 accumulation. Only for a
//!   chunk whose items share one key (the server case), where the matrix is expanded once.

use super::module::CtruKernels;
use super::Sizes;
use crate::gpu::worker::{Arg::*, Worker};
use cudarc::driver::DriverError;

/// Which engine multiplies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    CudaCore,
    TensorCore,
}

/// Items per `mul_tc` block (4 warps x 32 items); the item side is padded to this.
pub const TC_ITEMS: usize = 128;

/// The engine for a chunk with `keys` distinct keys: Tensor Cores for one shared key (faster in
/// the H200 measurements), CUDA cores otherwise. `PQGPU_CTRU_ENGINE=cc` forces CUDA cores
/// (for measurements); `tc` is the default where it applies.
pub fn choose(keys: usize) -> Engine {
    static FORCE_CC: once_cell::sync::Lazy<bool> = once_cell::sync::Lazy::new(|| {
        std::env::var("PQGPU_CTRU_ENGINE").is_ok_and(|v| v.eq_ignore_ascii_case("cc"))
    });
    if keys == 1 && !*FORCE_CC {
        Engine::TensorCore
    } else {
        Engine::CudaCore
    }
}

/// What is multiplied: `Encrypt` is h r mod q (key h: two int8 digits of the centered matrix;
/// item r: one digit), `Decrypt` is c f mod q2 (key f: one digit; item c = 128 hi + lo).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Encrypt,
    Decrypt,
}

/// Device operands of one product over `n` items (item rows padded to `pad` for the TC engine,
/// the rows past `n` zeroed by the caller).
pub struct Operands {
    /// Key vectors (i16 rows of NP).
    pub keyvec: u64,
    /// Per-item key index (u32), or 0 for item i -> key i.
    pub key_idx: u64,
    /// Item digits (i8 rows of NP); `hi` is 0 for one-digit items.
    pub lo: u64,
    pub hi: u64,
    /// Output: u16 rows of NP, reduced.
    pub out: u64,
    pub n: usize,
    pub pad: usize,
}

pub fn product(
    w: &mut Worker,
    k: &CtruKernels,
    s: &Sizes,
    engine: Engine,
    kind: Kind,
    o: &Operands,
) -> Result<(), DriverError> {
    let np = s.np;
    match engine {
        Engine::CudaCore => {
            let mod_q2 = U((kind == Kind::Decrypt) as u32);
            let args = [
                P(o.keyvec),
                P(o.key_idx),
                P(o.lo),
                P(o.hi),
                P(o.out),
                mod_q2,
            ];
            k.launch(
                w,
                "mul_cc",
                o.n,
                256,
                &[&args[..], &[U(o.n as u32)]].concat(),
            )
        }
        Engine::TensorCore => {
            let digits = if kind == Kind::Encrypt { 2 } else { 1 };
            let m_hi = w.dev("ctru_m_hi", np * np)?;
            let m_lo = w.dev("ctru_m_lo", np * np)?;
            // The single key is row 0 of keyvec (one key in the chunk's table).
            k.launch(
                w,
                "expand_key",
                (np * np).div_ceil(256),
                256,
                &[P(o.keyvec), U(0), U(digits), P(m_hi), P(m_lo)],
            )?;
            let (x_lo, x_hi, two_key) = match kind {
                Kind::Encrypt => (o.lo, o.lo, 1),
                Kind::Decrypt => (o.lo, o.hi, 0),
            };
            let grid = (o.pad / TC_ITEMS) * (np / 32);
            k.launch(
                w,
                "mul_tc",
                grid,
                128,
                &[
                    P(x_lo),
                    P(x_hi),
                    P(m_lo),
                    P(m_hi),
                    U(two_key),
                    P(o.out),
                    U(o.pad as u32),
                ],
            )
        }
    }
}
