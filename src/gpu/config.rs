//! The GPU engine's configuration, read once when the engine opens (from [`crate::settings`],
//! which holds every environment read). A value that does not parse is an error naming the
//! variable, never silently replaced by the default.
//!
//! Chunk sizes and worker counts are settings an operator may need on another GPU (and the
//! failure-injection tests use `PQGPU_GPU_CHUNK` and `PQGPU_GPU_FAIL_AFTER`). Switches that only
//! measure or that change what the kernels do (profiles, forced engines, extra NVRTC defines)
//! exist only in builds with the cargo feature `tuning`.

use std::path::PathBuf;

/// Items per ML-DSA chunk: big enough to fill the GPU with the other workers' chunks, small
/// enough that chunks stagger and one's copies overlap another's kernels. Measured on the H200
/// (batch 65536): 4096 best for keygen and verify (output/input-copy bound). Signing: see
/// `MLDSA_SIGN_WORKERS`.
const CHUNK: usize = 4096;
const SIGN_CHUNK: usize = 8192;
/// CTRU-Prime items per chunk. Measured on the H200 (batch 65,536, registered buffers): 8192
/// beat 4096 and 16384 for every operation and set.
const KEM_CHUNK: usize = 8192;
/// ML-KEM items per chunk (encaps, decaps) and per keygen chunk, and keygen's chunks in
/// flight. A batch must make several chunks, so that one's copies and host work overlap
/// another's kernels. Measured on the H200 (batch 65,536, registered, three rounds alternated
/// in one call, ML-KEM-768 medians): encaps and decaps with a key per item 18.5 / 12.3 M/s
/// at 8,192 against 18.0 / 12.0 at 4,096 and 17.9 / 11.7 at 16,384; keygen, bound by its
/// keys' copy back (3,584 bytes per item), 12.9 M/s with 4 chunks of 4,096 in flight
/// against 12.3 with 8 and 11.5 with 8 of 8,192 (fewer chunks at once finish one by one, so
/// the copies back start sooner).
const MLKEM_CHUNK: usize = 8192;
const MLKEM_KEYGEN_CHUNK: usize = 4096;
const MLKEM_KEYGEN_WORKERS: usize = 4;
/// Chunks in flight at once per GPU, one stream and host thread each. Measured on the H200
/// (16-core host, batch 65,536): 8 workers made ML-DSA keygen 5-10 % slower than 4, and
/// CTRU-Prime-761 encaps, decaps and keygen 27 %, 14 % and 16 % faster (its chunks are short
/// and host-bound).
const MLDSA_WORKERS: usize = 4;
/// Chunks in flight for ML-DSA signing, with `SIGN_CHUNK` and the ramp (`RAMP`). Four chunks
/// of 16,384 started and finished together: the GPU waited 0.9 ms for the first keys and the
/// signatures' copy back (160 MB) ran after the last kernel, 17 % of an ML-DSA-44 batch
/// (`PQGPU_TIMELINE`). Measured on the H200 (C ABI, registered, batch 65,536, two rounds in
/// one call, ML-DSA-44 / 65 / 87): 4 of 16,384 3.18-3.25 / 2.28-2.30 / 1.68-1.70 M/s; ramped
/// 3.43-3.47 / 2.36-2.41 / 1.76-1.80; 8 of 8,192 3.33-3.37 / 2.38-2.39 / 1.77-1.78; 8 of
/// 8,192 ramped 3.57-3.58 / 2.47-2.54 / 1.88-1.89 (first kernel after 0.1 ms, 0.2 ms after
/// the last); 6 of 8,192 ramped 3.53-3.55 / 2.46-2.48 / 1.85-1.87.
const MLDSA_SIGN_WORKERS: usize = 8;
const KEM_WORKERS: usize = 8;
/// Chunks in flight for SLH-DSA verification (one H_msg per item on the host, then a long
/// kernel): measured on the H200 (batch 131,072, registered, three runs in one call), 8 beat 4
/// by 7 % (SHA2-128s) and 14 % (SHA2-128f), the host's hashing of one chunk overlapping
/// another's kernel.
const SLHDSA_VERIFY_WORKERS: usize = 8;
/// Signing attempts per round at least, shared by the chunks running at once (a chunk alone
/// speculates up to this when few tasks remain, `gpu/mldsa/sign.rs`; each of n chunks in
/// flight up to an n-th). Measured on the H200 (serving, ML-DSA-44, 2,048-16,384
/// outstanding single signatures, four chunks in flight): a fill of 4,096-8,192 per chunk
/// beat 16,384 (more speculation only took GPU time from the other chunks); alone, 16,384
/// fills the GPU for a batch's last tasks. On a GPU shared through MPS a quarter of it
/// (`engine::DeviceEngine::sign_fill`).
pub const SIGN_FILL: usize = 16384;

/// SLH-DSA work per chunk, in WOTS+ keys (each len * 16 hash calls: about 560 for n = 16):
/// a keygen chunk builds 2^h' per item, a signing chunk d * 2^h' per item, so the item counts
/// follow from the set (SHA2-128f: 65,536 keys and 2,978 signatures; SHA2-128s: 1,024 and
/// 146). Enough threads per chunk to fill an H200 twice over with a few chunks in flight.
pub const SLHDSA_KEYGEN_LEAVES: usize = 1 << 19;
pub const SLHDSA_SIGN_LEAVES: usize = 1 << 19;
/// SLH-DSA signature bytes per verification chunk (one thread per item, 8-50 KB each):
/// SHA2-128s 25,627 items, SHA2-128f 11,782, SHA2-256f 4,038. Batches of four chunks or more
/// ramp (with the `verify` ramp switch), so a batch of 131,072 starts with small chunks and
/// overlaps the signatures' copy with the kernels from there on; the four chunks in flight
/// hold 16-100 k threads (on the H200, SHA2-128s's kernel-only verification on 30,990
/// threads reached 90 % of SHA2-128f's share of its ceiling on 65,536). The large-signature
/// sets are bound by the copy more than by the hashing (SHA2-256f at its 1.35 M/s ceiling
/// would move 67 GB/s).
pub const SLHDSA_VERIFY_BYTES: usize = 3 << 26;

/// A set of the engine's chunked operations (for the per-operation switches below).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpSet {
    pub mldsa_keygen: bool,
    pub mldsa_sign: bool,
    /// ML-DSA verification; for the ramp switch, SLH-DSA's too.
    pub mldsa_verify: bool,
    pub kem_keygen: bool,
    /// CTRU-Prime encaps and decaps.
    pub kem: bool,
}

/// One of the engine's chunked operations (what a chunk tells its worker it runs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChunkOp {
    MlDsaKeygen,
    MlDsaSign,
    MlDsaVerify,
    KemKeygen,
    /// CTRU-Prime encaps or decaps.
    Kem,
    /// SLH-DSA keygen, sign or verify (long compute-bound chunks: never asleep).
    SlhDsa,
}

impl OpSet {
    pub fn has(self, op: ChunkOp) -> bool {
        match op {
            ChunkOp::MlDsaKeygen => self.mldsa_keygen,
            ChunkOp::MlDsaSign => self.mldsa_sign,
            ChunkOp::MlDsaVerify => self.mldsa_verify,
            ChunkOp::KemKeygen => self.kem_keygen,
            ChunkOp::Kem => self.kem,
            ChunkOp::SlhDsa => false,
        }
    }

    /// `none` or a comma list of the names in `allowed` (of keygen, sign, verify, kem-keygen,
    /// kem); `var` names the variable in the error.
    fn parse(var: &str, v: &str, allowed: &[&str]) -> Result<OpSet, String> {
        let mut r = OpSet::default();
        for op in v.split(',').map(str::trim).filter(|o| !o.is_empty()) {
            if op != "none" && !allowed.contains(&op) {
                return Err(format!(
                    "{var}={v:?}: expected none or {}",
                    allowed.join(",")
                ));
            }
            match op {
                "keygen" => r.mldsa_keygen = true,
                "sign" => r.mldsa_sign = true,
                "verify" => r.mldsa_verify = true,
                "kem-keygen" => r.kem_keygen = true,
                "kem" => r.kem = true,
                _ => {}
            }
        }
        Ok(r)
    }
}

/// Which operations cut their batches into ramped chunks (`scheduler::chunk_sizes`): all of
/// them (signing: see `MLDSA_SIGN_WORKERS`). Their chunks start together and would
/// finish together, leaving the copy engine idle until then and the GPU idle while the last
/// outputs (ML-DSA-65 keygen: 392 MB per batch) or after the last inputs move. Measured on the
/// H200 (C ABI, registered, batch 65,536, two rounds alternated, without -> with): ML-DSA-44 /
/// 65 / 87 keygen 8.8-9.6 / 6.3-6.7 / 4.1-4.2 M -> 9.8-10.2 / 6.8-7.0 / 4.4 M, ML-DSA-44
/// verify 10.4 -> 10.6 M, CTRU-Prime-761 keygen 1.85-1.91 -> 2.02-2.03 M, encaps 20.0 ->
/// 22.5-23.8 M, decaps 12.6-12.9 -> 13.6-13.7 M, CTRU-Prime-1277 encaps 11.1-11.9 -> 12.9-13.1 M.
const RAMP: OpSet = OpSet {
    mldsa_keygen: true,
    mldsa_sign: true,
    mldsa_verify: true,
    kem_keygen: true,
    kem: true,
};
#[cfg_attr(not(feature = "tuning"), allow(dead_code))] // read by the tuning switch
const RAMP_NAMES: &[&str] = &["keygen", "sign", "verify", "kem-keygen", "kem"];

/// Which operations' chunks wait for the GPU asleep (on a blocking-sync event) rather than
/// spinning in the driver: CTRU-Prime encaps and decaps. Serving keeps eight short, host-heavy
/// KEM chunks in flight, whose spinning waiters took cores from the other chunks' staging and
/// from the callers. Measured on the H200 (serving, 65,536 outstanding, registered, two rounds
/// alternated, spinning -> asleep): CTRU-Prime-761 encaps 11.75 / 11.27 -> 13.06 / 11.29 M/s
/// with eight batches in flight, decaps 9.42 / 9.68 -> 11.24 / 9.99 M/s; batches of 65,536
/// within the noise. Not verification (serving 8.14 / 7.25 -> 7.59 / 6.92 M/s, batches 3-5 %
/// slower) nor signing (long compute-bound chunks that pay a wake-up at every round of their
/// schedule; `openssl speed -multi 4` under MPS 1.14 / 1.21 -> 1.11 / 1.14 M signatures/s).
const SLEEP: OpSet = OpSet {
    mldsa_keygen: false,
    mldsa_sign: false,
    mldsa_verify: false,
    kem_keygen: false,
    kem: true,
};
const SLEEP_NAMES: &[&str] = &["keygen", "sign", "verify", "kem-keygen", "kem"];

/// The CTRU-Prime ring-product engine (`gpu/ctru/product.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProductEngine {
    CudaCore,
    TensorCore,
}

/// How a host thread waits for its stream (the context's scheduling flag).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncMode {
    Spin,
    Yield,
    Blocking,
}

/// Measurement switches (`tuning` builds only; all off otherwise).
#[derive(Clone, Debug, Default)]
pub struct Tuning {
    /// `PQGPU_PROFILE`: per-kernel times on stderr (every launch synchronised).
    pub profile: bool,
    /// `PQGPU_HOST_PROFILE`: where each batch's host time went, on stderr.
    pub host_profile: bool,
    /// `PQGPU_HOSTIO=kernel`: even rows through the gather/scatter kernels too.
    pub hostio_kernel: bool,
    /// `PQGPU_NVRTC_DEFINES`: extra -D flags for the ML-DSA kernels (variant measurements).
    pub nvrtc_defines: Vec<String>,
    /// `PQGPU_CTRU_ENGINE=cc|tc`: force the CTRU-Prime product engine.
    pub ctru_engine: Option<ProductEngine>,
    /// `PQGPU_CTRU_INVERT=perkey`: one inversion per key instead of the product tree.
    pub ctru_invert_perkey: bool,
    /// `PQGPU_CHUNK_RAMP=none|keygen,verify,kem-keygen,kem`: which operations ramp their chunks.
    pub ramp: Option<OpSet>,
    /// `PQGPU_TIMELINE=FILE`: every copy and launch timed, appended to FILE per batch
    /// (`gpu::timeline`).
    pub timeline: Option<PathBuf>,
    /// `PQGPU_CHUNK_TURNS=off`: a batch's chunks queue their inputs in any order
    /// (`scheduler::Turns`).
    pub unordered: bool,
    /// `PQGPU_SIGN_THREADS=W,Z`: threads per block of the ML-DSA kernels `sign_w` and `sign_z`
    /// (128 or 256 each; default 256, 256).
    pub sign_threads: Option<[u32; 2]>,
}

/// What the engine runs with.
#[derive(Clone, Debug)]
pub struct GpuConfig {
    /// Items per chunk: ML-DSA keygen, ML-DSA verify, ML-DSA sign, CTRU-Prime (all operations).
    pub keygen_chunk: usize,
    pub chunk: usize,
    pub sign_chunk: usize,
    pub ctru_chunk: usize,
    /// ML-KEM items per encaps/decaps chunk and per keygen chunk (`PQGPU_CTRU_CHUNK`, the KEM
    /// chunk setting, sets both too).
    pub mlkem_chunk: usize,
    pub mlkem_keygen_chunk: usize,
    /// ML-KEM keygen's chunks in flight per GPU (`PQGPU_GPU_WORKERS` sets it too).
    pub mlkem_keygen_workers: usize,
    /// Signing attempts per round at least, shared by the chunks running at once
    /// (`PQGPU_SIGN_FILL`; see `SIGN_FILL`).
    pub sign_fill: usize,
    /// How host threads wait for the GPU (`PQGPU_GPU_SYNC=spin|yield|blocking`; `None`: the
    /// driver's choice, spinning while the process has fewer CUDA contexts than cores).
    pub sync: Option<SyncMode>,
    /// Workers per GPU used by ML-DSA keygen and verification (and SLH-DSA keygen and
    /// signing), by ML-DSA signing, by the KEMs, and by SLH-DSA verification.
    pub mldsa_workers: usize,
    pub mldsa_sign_workers: usize,
    pub kem_workers: usize,
    pub slhdsa_verify_workers: usize,
    /// Which operations ramp their chunk sizes.
    pub ramp: OpSet,
    /// Which operations' chunks sleep while they wait for the GPU (`PQGPU_GPU_SLEEP=none|
    /// keygen,sign,verify,kem-keygen,kem`; see `SLEEP`).
    pub sleep: OpSet,
    /// `PQGPU_GPU_FAIL_AFTER=n` (tests): signing chunks after the n-th report a device failure.
    pub fail_after: Option<usize>,
    /// `PQGPU_DEVICES`: the GPU ordinals to use (checked against the devices present when
    /// the engine opens); `None`: every visible device.
    pub devices: Option<String>,
    /// The compiled-kernel cache directory.
    pub cache_dir: Option<PathBuf>,
    pub tuning: Tuning,
}

/// `Some(n)` for a positive count, `None` when unset; an error naming `var` otherwise.
fn count(var: &str, v: &Option<String>) -> Result<Option<usize>, String> {
    v.as_deref()
        .map(|s| {
            s.trim()
                .parse::<usize>()
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| format!("{var}={s:?}: expected a positive whole number"))
        })
        .transpose()
}

impl GpuConfig {
    /// The configuration of this process's settings.
    pub fn read() -> Result<GpuConfig, String> {
        Self::from(crate::settings::get())
    }

    fn from(s: &crate::settings::Settings) -> Result<GpuConfig, String> {
        let workers = count("PQGPU_GPU_WORKERS", &s.gpu_workers)?;
        let chunk = count("PQGPU_GPU_CHUNK", &s.gpu_chunk)?;
        let keygen_chunk = count("PQGPU_KEYGEN_CHUNK", &s.keygen_chunk)?;
        let ctru_chunk = count("PQGPU_CTRU_CHUNK", &s.ctru_chunk)?;
        let fail_after = s
            .gpu_fail_after
            .as_deref()
            .map(|v| {
                v.trim().parse::<usize>().map_err(|_| {
                    format!("PQGPU_GPU_FAIL_AFTER={v:?}: expected a whole number of chunks")
                })
            })
            .transpose()?;
        let sign_fill = count("PQGPU_SIGN_FILL", &s.sign_fill)?;
        let sync = sync_mode(s.gpu_sync.as_deref())?;
        let sleep = s
            .gpu_sleep
            .as_deref()
            .map(|v| OpSet::parse("PQGPU_GPU_SLEEP", v, SLEEP_NAMES))
            .transpose()?;
        let tuning = tuning(s)?;
        Ok(GpuConfig {
            ramp: tuning.ramp.unwrap_or(RAMP),
            sleep: sleep.unwrap_or(SLEEP),
            sign_fill: sign_fill.unwrap_or(SIGN_FILL),
            sync,
            keygen_chunk: keygen_chunk.or(chunk).unwrap_or(CHUNK),
            chunk: chunk.unwrap_or(CHUNK),
            sign_chunk: chunk.unwrap_or(SIGN_CHUNK),
            ctru_chunk: ctru_chunk.unwrap_or(KEM_CHUNK),
            mlkem_chunk: ctru_chunk.unwrap_or(MLKEM_CHUNK),
            mlkem_keygen_chunk: ctru_chunk.unwrap_or(MLKEM_KEYGEN_CHUNK),
            mlkem_keygen_workers: workers.unwrap_or(MLKEM_KEYGEN_WORKERS),
            mldsa_workers: workers.unwrap_or(MLDSA_WORKERS),
            mldsa_sign_workers: workers.unwrap_or(MLDSA_SIGN_WORKERS),
            kem_workers: workers.unwrap_or(KEM_WORKERS),
            slhdsa_verify_workers: workers.unwrap_or(SLHDSA_VERIFY_WORKERS),
            fail_after,
            devices: s.devices.clone(),
            cache_dir: s.cache_dir.clone(),
            tuning,
        })
    }
}

/// `PQGPU_GPU_SYNC`'s value (case and surrounding blanks aside).
fn sync_mode(v: Option<&str>) -> Result<Option<SyncMode>, String> {
    let Some(v) = v else { return Ok(None) };
    match v.trim().to_ascii_lowercase().as_str() {
        "spin" => Ok(Some(SyncMode::Spin)),
        "yield" => Ok(Some(SyncMode::Yield)),
        "blocking" => Ok(Some(SyncMode::Blocking)),
        _ => Err(format!(
            "PQGPU_GPU_SYNC={v:?}: expected spin, yield or blocking"
        )),
    }
}

#[cfg(not(feature = "tuning"))]
fn tuning(_: &crate::settings::Settings) -> Result<Tuning, String> {
    Ok(Tuning::default())
}

#[cfg(feature = "tuning")]
fn tuning(s: &crate::settings::Settings) -> Result<Tuning, String> {
    let ctru_engine = match s.ctru_engine.as_deref() {
        None => None,
        Some(v) => match v.to_ascii_lowercase().as_str() {
            "cc" => Some(ProductEngine::CudaCore),
            "tc" => Some(ProductEngine::TensorCore),
            _ => return Err(format!("PQGPU_CTRU_ENGINE={v:?}: expected cc or tc")),
        },
    };
    let ctru_invert_perkey = match s.ctru_invert.as_deref() {
        None => false,
        Some(v) if v.eq_ignore_ascii_case("perkey") => true,
        Some(v) if v.eq_ignore_ascii_case("tree") => false,
        Some(v) => return Err(format!("PQGPU_CTRU_INVERT={v:?}: expected perkey or tree")),
    };
    let hostio_kernel = match s.hostio.as_deref() {
        None => false,
        Some("kernel") => true,
        Some("dma") => false,
        Some(v) => return Err(format!("PQGPU_HOSTIO={v:?}: expected kernel or dma")),
    };
    let ramp = s
        .chunk_ramp
        .as_deref()
        .map(|v| OpSet::parse("PQGPU_CHUNK_RAMP", v, RAMP_NAMES))
        .transpose()?;
    Ok(Tuning {
        ramp,
        profile: s.profile,
        host_profile: s.host_profile,
        hostio_kernel,
        nvrtc_defines: s
            .nvrtc_defines
            .as_deref()
            .map(|d| d.split_whitespace().map(String::from).collect())
            .unwrap_or_default(),
        ctru_engine,
        ctru_invert_perkey,
        timeline: s.timeline.clone(),
        unordered: match s.chunk_turns.as_deref() {
            None | Some("on") => false,
            Some("off") => true,
            Some(v) => return Err(format!("PQGPU_CHUNK_TURNS={v:?}: expected on or off")),
        },
        sign_threads: s.sign_threads.as_deref().map(sign_threads).transpose()?,
    })
}

/// `PQGPU_SIGN_THREADS=W,Z`, each 128 or 256.
#[cfg_attr(not(feature = "tuning"), allow(dead_code))] // read by the tuning switch
fn sign_threads(v: &str) -> Result<[u32; 2], String> {
    let t: Vec<Option<u32>> = v
        .split(',')
        .map(|x| x.trim().parse().ok().filter(|n| [128, 256].contains(n)))
        .collect();
    match t[..] {
        [Some(w), Some(z)] => Ok([w, z]),
        _ => Err(format!(
            "PQGPU_SIGN_THREADS={v:?}: expected W,Z with each 128 or 256"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sync_modes_parse_and_others_are_errors() {
        assert_eq!(sync_mode(None), Ok(None));
        assert_eq!(sync_mode(Some(" Blocking ")), Ok(Some(SyncMode::Blocking)));
        assert_eq!(sync_mode(Some("spin")), Ok(Some(SyncMode::Spin)));
        assert_eq!(sync_mode(Some("yield")), Ok(Some(SyncMode::Yield)));
        for bad in ["", "block", "auto", "1"] {
            let e = sync_mode(Some(bad)).unwrap_err();
            assert!(e.starts_with("PQGPU_GPU_SYNC="), "{e}");
        }
    }

    #[test]
    fn sign_threads_are_two_block_sizes() {
        assert_eq!(sign_threads("128,256"), Ok([128, 256]));
        assert_eq!(sign_threads(" 256 , 128 "), Ok([256, 128]));
        for bad in ["", "128", "128,256,128", "64,256", "256,512", "a,b"] {
            let e = sign_threads(bad).unwrap_err();
            assert!(e.starts_with("PQGPU_SIGN_THREADS="), "{e}");
        }
    }

    #[test]
    fn op_sets_parse_their_own_names_only() {
        let v = OpSet::parse("PQGPU_GPU_SLEEP", " verify, kem ", SLEEP_NAMES).unwrap();
        assert!(v.has(ChunkOp::MlDsaVerify) && v.has(ChunkOp::Kem));
        assert!(!v.has(ChunkOp::MlDsaSign) && !v.has(ChunkOp::MlDsaKeygen));
        assert!(!v.has(ChunkOp::KemKeygen));
        assert_eq!(OpSet::parse("X", "none", SLEEP_NAMES), Ok(OpSet::default()));
        let all = OpSet::parse("X", "keygen,sign,verify,kem-keygen,kem", SLEEP_NAMES).unwrap();
        for op in [
            ChunkOp::MlDsaKeygen,
            ChunkOp::MlDsaSign,
            ChunkOp::MlDsaVerify,
            ChunkOp::KemKeygen,
            ChunkOp::Kem,
        ] {
            assert!(all.has(op), "{op:?}");
        }
        // Unknown names are errors.
        let e = OpSet::parse("PQGPU_CHUNK_RAMP", "signing", RAMP_NAMES).unwrap_err();
        assert!(e.starts_with("PQGPU_CHUNK_RAMP="), "{e}");
        assert!(OpSet::parse("PQGPU_GPU_SLEEP", "verify,kems", SLEEP_NAMES).is_err());
    }

    #[test]
    fn counts_must_be_positive_whole_numbers() {
        let set = |v: &str| Some(v.to_string());
        assert_eq!(count("X", &None), Ok(None));
        assert_eq!(count("X", &set("64")), Ok(Some(64)));
        assert_eq!(count("X", &set(" 8 ")), Ok(Some(8)));
        for bad in ["0", "-1", "", "4k", "1.5"] {
            let e = count("PQGPU_GPU_CHUNK", &set(bad)).unwrap_err();
            assert!(e.starts_with("PQGPU_GPU_CHUNK="), "{e}");
        }
    }
}
