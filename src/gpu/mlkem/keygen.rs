//! ML-KEM.KeyGen_internal (FIPS 203 Algorithm 16) for one chunk: G per item, Â per (item, i,
//! j) and the PRF outputs of s and e per (item, polynomial) one thread each, ŝ, ê and t̂ one
//! block per item, then dk = dk_pke || ek || H(ek) || z per item.

use super::kernels::Kernels;
use crate::gpu::config::ChunkOp;
use crate::gpu::hostio;
use crate::gpu::hostmem::Ranges;
use crate::gpu::kem::Seeds;
use crate::gpu::worker::{Phase, Worker};
use cudarc::driver::DriverError;

/// One chunk of `n` keys end to end: seeds d || z in, or drawn on the GPU from a key of OS
/// randomness (ChaCha20, as the encapsulations' coins: no seeds made or copied on the host),
/// keys out ([`hostio::keys_out`]: by DMA straight into registered arrays).
pub fn keygen_chunk(
    w: &mut Worker,
    k: &Kernels,
    reg: &Ranges,
    n: usize,
    seeds: Seeds<'_>,
    eks: &mut [u8],
    dks: &mut [u8],
) -> Result<(), DriverError> {
    w.start_chunk(ChunkOp::KemKeygen);
    let s = &k.s;
    // What goes up: the seeds, or the key they are drawn from.
    let up: &[u8] = match seeds {
        Seeds::Given(x) => x,
        Seeds::Drawn(key) => key,
    };
    let mut stage = w.take_host("mlkem_kg_stage", up.len())?;
    let host = &mut stage.bytes()?[..up.len()];
    host.copy_from_slice(up);
    let d_seeds = w.dev("mlkem_kg_seeds", n * 64)?;
    let rs = w.dev("mlkem_kg_rs", n * 64)?;
    let ek = w.dev("mlkem_kg_ek", n * s.ek)?;
    let dk = w.dev("mlkem_kg_dk", n * s.dk)?;
    match seeds {
        Seeds::Given(_) => w.htod(d_seeds, host)?,
        Seeds::Drawn(_) => {
            let d_key = w.dev("mlkem_kg_key", 32)?;
            w.htod(d_key, host)?;
            // 64 bytes per key: two 32-byte draws.
            k.coins(w, d_key, d_seeds, 2 * n)?;
        }
    }
    k.keygen(w, d_seeds, rs, (ek, dk), n)?;
    hostio::keys_out(w, reg, "mlkem_kg_out", (ek, eks), (dk, dks))?;
    // The seeds are secret: do not leave them in the staging buffer.
    host.fill(0);
    w.end_phase(Phase::Unpacking);
    Ok(())
}
