//! One-thread ML-KEM rates of the candidates for `pqgpu::mlkem`, measured in one run:
//! the library's own path (libcrux-ml-kem, AVX2 chosen at run time, with FIPS 203's input
//! checks), libcrux-ml-kem's portable code, and RustCrypto's `ml-kem` (the differential tests'
//! reference, used as a library would: bytes in, bytes out, its key checks included).
//!
//! cargo run --release --example mlkem_crates -- [SECONDS per figure, default 0.5] [RUNS, default 3]
//! Prints the best of RUNS runs (the machine may be shared), ops/s on one thread.

#![allow(deprecated)] // ml-kem's expanded dk encoding is the contract's key format
use ml_kem::array::Array;
use ml_kem::{Decapsulate, DecapsulationKey, EncapsulationKey, ExpandedKeyEncoding, KeyExport};
use pqgpu::mlkem::{self, ParamSet};
use std::hint::black_box;
use std::time::Instant;

fn rate(secs: f64, runs: usize, mut op: impl FnMut(u64)) -> f64 {
    let mut best = 0f64;
    let mut i = 0u64;
    for _ in 0..runs {
        let t = Instant::now();
        let mut n = 0u64;
        while t.elapsed().as_secs_f64() < secs {
            for _ in 0..16 {
                op(i);
                i += 1;
            }
            n += 16;
        }
        best = best.max(n as f64 / t.elapsed().as_secs_f64());
    }
    best
}

fn seed<const N: usize>(i: u64) -> [u8; N] {
    let mut s = [0x5Cu8; N];
    s[..8].copy_from_slice(&i.to_le_bytes());
    s
}

fn row(name: &str, p: ParamSet, r: [f64; 3]) {
    println!(
        "{name:<34} {:<12} keygen {:>8.0}  encaps {:>8.0}  decaps {:>8.0}",
        p.name(),
        r[0],
        r[1],
        r[2]
    );
}

fn ours(p: ParamSet, secs: f64, runs: usize) -> [f64; 3] {
    let (mut ek, mut dk) = (vec![0u8; p.encaps_key_len()], vec![0u8; p.decaps_key_len()]);
    let (mut ct, mut ss) = (vec![0u8; p.ciphertext_len()], [0u8; 32]);
    mlkem::keygen_internal(p, &seed(1), &seed(2), &mut ek, &mut dk).unwrap();
    mlkem::encaps_internal(p, &ek, &seed(3), &mut ct, &mut ss).unwrap();
    let (mut e2, mut d2) = (ek.clone(), dk.clone());
    let kg = rate(secs, runs, |i| {
        mlkem::keygen_internal(p, &seed(i), &seed(i), &mut e2, &mut d2).unwrap()
    });
    let mut c2 = ct.clone();
    let en = rate(secs, runs, |i| {
        mlkem::encaps_internal(p, &ek, &seed(i), &mut c2, &mut ss).unwrap()
    });
    let de = rate(secs, runs, |_| {
        mlkem::decaps(p, &dk, black_box(&ct), &mut ss).unwrap()
    });
    [kg, en, de]
}

macro_rules! portable {
    ($m:ident, $secs:expr, $runs:expr) => {{
        use libcrux_ml_kem::$m::portable as m;
        let kp = m::generate_key_pair(seed(1));
        let (ct, _) = m::encapsulate(kp.public_key(), seed(2));
        [
            rate($secs, $runs, |i| {
                black_box(m::generate_key_pair(seed(i)));
            }),
            rate($secs, $runs, |i| {
                black_box(m::encapsulate(kp.public_key(), seed(i)));
            }),
            rate($secs, $runs, |_| {
                black_box(m::decapsulate(kp.private_key(), &ct));
            }),
        ]
    }};
}

macro_rules! rustcrypto {
    ($P:ty, $secs:expr, $runs:expr) => {{
        type Dk = DecapsulationKey<$P>;
        let dk = Dk::from_seed(seed::<64>(1).into());
        let dkb = dk.to_expanded_bytes();
        let ekb = dk.encapsulation_key().to_bytes();
        let (ct, _) = dk
            .encapsulation_key()
            .encapsulate_deterministic(&seed::<32>(2).into());
        [
            rate($secs, $runs, |i| {
                let d = Dk::from_seed(seed::<64>(i).into());
                black_box((d.to_expanded_bytes(), d.encapsulation_key().to_bytes()));
            }),
            rate($secs, $runs, |i| {
                let ek = EncapsulationKey::<$P>::new(&ekb).unwrap();
                black_box(ek.encapsulate_deterministic(&seed::<32>(i).into()));
            }),
            rate($secs, $runs, |_| {
                let d = Dk::from_expanded_bytes(&Array::try_from(&dkb[..]).unwrap()).unwrap();
                black_box(d.decapsulate(&ct));
            }),
        ]
    }};
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let secs: f64 = args.first().map_or(0.5, |s| s.parse().expect("SECONDS"));
    let runs: usize = args.get(1).map_or(3, |s| s.parse().expect("RUNS"));
    #[cfg(target_arch = "x86_64")]
    let avx2 = std::arch::is_x86_feature_detected!("avx2");
    #[cfg(not(target_arch = "x86_64"))]
    let avx2 = false;
    println!("one thread, best of {runs} x {secs} s; AVX2 available: {avx2}");
    for p in ParamSet::ALL {
        row("pqgpu::mlkem (libcrux, checked)", p, ours(p, secs, runs));
    }
    row(
        "libcrux-ml-kem portable",
        ParamSet::MlKem512,
        portable!(mlkem512, secs, runs),
    );
    row(
        "libcrux-ml-kem portable",
        ParamSet::MlKem768,
        portable!(mlkem768, secs, runs),
    );
    row(
        "libcrux-ml-kem portable",
        ParamSet::MlKem1024,
        portable!(mlkem1024, secs, runs),
    );
    row(
        "RustCrypto ml-kem 0.3",
        ParamSet::MlKem512,
        rustcrypto!(ml_kem::MlKem512, secs, runs),
    );
    row(
        "RustCrypto ml-kem 0.3",
        ParamSet::MlKem768,
        rustcrypto!(ml_kem::MlKem768, secs, runs),
    );
    row(
        "RustCrypto ml-kem 0.3",
        ParamSet::MlKem1024,
        rustcrypto!(ml_kem::MlKem1024, secs, runs),
    );
}
