//! The round-3 KAT files (tests/data/dilithium-r3) and NIST's DRBG that derives each record's
//! keygen seed, shared by the CPU, C-ABI and GPU tests.

use aes::cipher::{BlockEncrypt, KeyInit};
use aes::Aes256;
use pqgpu::mldsa::ParamSet;
use std::io::Read;

/// NIST's AES-256-CTR DRBG (PQCgenKAT's rng.c), without personalization string.
pub struct Drbg {
    key: [u8; 32],
    v: [u8; 16],
}

impl Drbg {
    pub fn new(entropy: &[u8; 48]) -> Drbg {
        let mut d = Drbg {
            key: [0; 32],
            v: [0; 16],
        };
        d.update(Some(entropy));
        d
    }

    fn increment_v(&mut self) {
        for b in self.v.iter_mut().rev() {
            *b = b.wrapping_add(1);
            if *b != 0 {
                break;
            }
        }
    }

    fn block(&mut self) -> [u8; 16] {
        self.increment_v();
        let mut b = aes::Block::from(self.v);
        Aes256::new(&self.key.into()).encrypt_block(&mut b);
        b.into()
    }

    fn update(&mut self, provided: Option<&[u8; 48]>) {
        let mut temp = [0u8; 48];
        for i in 0..3 {
            temp[16 * i..16 * i + 16].copy_from_slice(&self.block());
        }
        if let Some(p) = provided {
            for (t, x) in temp.iter_mut().zip(p) {
                *t ^= x;
            }
        }
        self.key.copy_from_slice(&temp[..32]);
        self.v.copy_from_slice(&temp[32..]);
    }

    pub fn randombytes(&mut self, out: &mut [u8]) {
        for chunk in out.chunks_mut(16) {
            let b = self.block();
            chunk.copy_from_slice(&b[..chunk.len()]);
        }
        self.update(None);
    }
}

pub struct Record {
    pub count: usize,
    pub seed: Vec<u8>,
    pub msg: Vec<u8>,
    pub pk: Vec<u8>,
    pub sk: Vec<u8>,
    pub sm: Vec<u8>,
}

impl Record {
    /// The 32-byte keygen seed: the DRBG's first output, as `crypto_sign_keypair` draws it.
    pub fn xi(&self) -> [u8; 32] {
        let mut xi = [0u8; 32];
        Drbg::new(self.seed.as_slice().try_into().expect("48-byte seed")).randombytes(&mut xi);
        xi
    }

    /// The signature part of sm = sig || msg.
    pub fn sig(&self, p: ParamSet) -> &[u8] {
        &self.sm[..p.signature_len()]
    }
}

/// The KAT file's level (2, 3 or 5) of a round-3 set.
pub fn level(p: ParamSet) -> u32 {
    match p {
        ParamSet::Dilithium2 => 2,
        ParamSet::Dilithium3 => 3,
        ParamSet::Dilithium5 => 5,
        _ => panic!("{} is not a round-3 set", p.name()),
    }
}

/// The 100 records of `p`'s KAT file.
pub fn records(p: ParamSet) -> Vec<Record> {
    let level = level(p);
    // `PQGPU_DILITHIUM_KAT_DIR` for test binaries run away from the checkout (the GPU machine).
    let dir = std::env::var("PQGPU_DILITHIUM_KAT_DIR").unwrap_or_else(|_| {
        concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/dilithium-r3").to_string()
    });
    let path = format!("{dir}/PQCsignKAT_Dilithium{level}.rsp.gz");
    let gz = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut text = String::new();
    flate2::read::GzDecoder::new(gz)
        .read_to_string(&mut text)
        .unwrap();
    let mut out = Vec::new();
    for block in text.split("\n\n") {
        let field = |name: &str| {
            block
                .lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix(" = "))
                .map(str::to_string)
        };
        let Some(count) = field("count") else {
            continue;
        };
        let hex = |name| hex::decode(field(name).unwrap()).unwrap();
        let r = Record {
            count: count.parse().unwrap(),
            seed: hex("seed"),
            msg: hex("msg"),
            pk: hex("pk"),
            sk: hex("sk"),
            sm: hex("sm"),
        };
        let mlen: usize = field("mlen").unwrap().parse().unwrap();
        let smlen: usize = field("smlen").unwrap().parse().unwrap();
        assert_eq!((r.msg.len(), r.sm.len()), (mlen, smlen), "record {count}");
        out.push(r);
    }
    out
}
