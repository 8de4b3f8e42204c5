//! pqgpu's SLH-DSA against RustCrypto's independent `slh-dsa` crate, for every parameter set:
//! keys from random seeds, pure signatures with random messages and contexts (deterministic and
//! with a given opt_rand, bit for bit), HashSLH-DSA and internal signatures (against the crate's
//! slh_sign_internal on M' formed here), verification agreement both ways, and modified
//! signatures rejected by both.
//!
//! Items per set: `PQGPU_SLHDSA_CASES` (default 2 for the f sets; for the slow-signing s sets
//! one item with the deterministic signature only, so that CI stays quick; setting the
//! variable runs every form on every set).

mod common;

use common::{bytes, env_count};
use pqgpu::slhdsa::{self, Message, ParamSet, PreHash};
use pqgpu::Error;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use slh_dsa::{ParameterSet, Signature, SigningKey, VerifyingKey};

fn items(p: ParamSet) -> usize {
    let default = if slow(p) { 1 } else { 2 };
    env_count("PQGPU_SLHDSA_CASES", default)
}

/// An s set with no case count asked for: only the deterministic signature is compared.
fn slow(p: ParamSet) -> bool {
    p.name().ends_with('s') && std::env::var_os("PQGPU_SLHDSA_CASES").is_none()
}

fn differential<P: ParameterSet>(p: ParamSet, seed: u64) {
    assert_eq!(P::NAME, p.name(), "the crate's set matches");
    let mut rng = StdRng::seed_from_u64(seed);
    let n = p.n();
    for item in 0..items(p) {
        // Keys from the same three seeds.
        let seeds = bytes(&mut rng, 3 * n);
        let mut pk = vec![0u8; p.public_key_len()];
        let mut sk = vec![0u8; p.secret_key_len()];
        slhdsa::keygen_internal(p, &seeds, &mut pk, &mut sk).expect("keygen");
        let theirs =
            SigningKey::<P>::slh_keygen_internal(&seeds[..n], &seeds[n..2 * n], &seeds[2 * n..]);
        assert_eq!(
            theirs.to_bytes().as_slice(),
            &sk[..],
            "{} item {item}: sk",
            p.name()
        );
        let vk: &VerifyingKey<P> = theirs.as_ref();
        assert_eq!(
            vk.to_bytes().as_slice(),
            &pk[..],
            "{} item {item}: pk",
            p.name()
        );

        let msg_len = rng.gen_range(0..300);
        let msg = bytes(&mut rng, msg_len);
        let ctx_len = rng.gen_range(0..=255);
        let ctx = bytes(&mut rng, ctx_len);
        let pure = Message::Pure {
            ctx: &ctx,
            msg: &msg,
        };
        let mut sig = vec![0u8; p.signature_len()];

        // Deterministic: opt_rand = PK.seed.
        slhdsa::sign(p, &sk, &pure, Some(&sk[2 * n..3 * n]), &mut sig).expect("sign");
        let want = theirs
            .try_sign_with_context(&msg, &ctx, None)
            .expect("their sign");
        assert_eq!(
            want.to_bytes().as_slice(),
            &sig[..],
            "{} item {item}: deterministic",
            p.name()
        );
        check_verify::<P>(p, &pk, vk, &pure, &ctx, &msg, &mut sig, &mut rng);

        if slow(p) {
            continue;
        }
        // A given opt_rand.
        let rnd = bytes(&mut rng, n);
        slhdsa::sign(p, &sk, &pure, Some(&rnd), &mut sig).expect("sign");
        let want = theirs
            .try_sign_with_context(&msg, &ctx, Some(&rnd))
            .expect("their sign");
        assert_eq!(
            want.to_bytes().as_slice(),
            &sig[..],
            "{} item {item}: given rnd",
            p.name()
        );

        // HashSLH-DSA: M' = 1 || |ctx| || ctx || OID || PH(M), formed here.
        let ph = PreHash::ALL[rng.gen_range(0..PreHash::ALL.len())];
        let digest = bytes(&mut rng, ph.digest_len());
        let m_prime = [&[1, ctx.len() as u8][..], &ctx, &ph.oid_der(), &digest].concat();
        let hashed = Message::PreHashed {
            ctx: &ctx,
            ph,
            digest: &digest,
        };
        slhdsa::sign(p, &sk, &hashed, Some(&rnd), &mut sig).expect("sign");
        let want = theirs.slh_sign_internal(&m_prime, Some(&rnd));
        assert_eq!(
            want.to_bytes().as_slice(),
            &sig[..],
            "{} item {item}: pre-hash",
            p.name()
        );
        assert_eq!(slhdsa::verify(p, &pk, &hashed, &sig), Ok(()));
        assert_eq!(
            slhdsa::verify(p, &pk, &Message::Internal(&m_prime), &sig),
            Ok(())
        );
        assert_eq!(
            slhdsa::verify(p, &pk, &pure, &sig),
            Err(Error::VerifyFailed),
            "pre-hash is not pure"
        );

        // Hedged: fresh randomness; the crate verifies it.
        slhdsa::sign(p, &sk, &pure, None, &mut sig).expect("sign");
        let s = Signature::<P>::try_from(&sig[..]).expect("their decode");
        assert!(
            vk.try_verify_with_context(&msg, &ctx, &s).is_ok(),
            "{}: hedged",
            p.name()
        );
    }
}

/// Both accept `sig` on `pure`; a changed byte (anywhere), another context or another message
/// is rejected by both.
#[allow(clippy::too_many_arguments)]
fn check_verify<P: ParameterSet>(
    p: ParamSet,
    pk: &[u8],
    vk: &VerifyingKey<P>,
    pure: &Message<'_>,
    ctx: &[u8],
    msg: &[u8],
    sig: &mut [u8],
    rng: &mut StdRng,
) {
    let theirs_ok = |sig: &[u8], ctx: &[u8], msg: &[u8]| {
        Signature::<P>::try_from(sig)
            .is_ok_and(|s| vk.try_verify_with_context(msg, ctx, &s).is_ok())
    };
    assert_eq!(slhdsa::verify(p, pk, pure, sig), Ok(()), "{}", p.name());
    assert!(theirs_ok(sig, ctx, msg));
    for _ in 0..3 {
        let at = rng.gen_range(0..sig.len());
        let bit = 1u8 << rng.gen_range(0..8);
        sig[at] ^= bit;
        assert_eq!(
            slhdsa::verify(p, pk, pure, sig),
            Err(Error::VerifyFailed),
            "{} byte {at}",
            p.name()
        );
        assert!(!theirs_ok(sig, ctx, msg), "{} byte {at}", p.name());
        sig[at] ^= bit;
    }
    let other_ctx = [ctx, b"x"].concat();
    if other_ctx.len() <= 255 {
        let m = Message::Pure {
            ctx: &other_ctx,
            msg,
        };
        assert_eq!(slhdsa::verify(p, pk, &m, sig), Err(Error::VerifyFailed));
        assert!(!theirs_ok(sig, &other_ctx, msg));
    }
    let other_msg = [msg, b"x"].concat();
    let m = Message::Pure {
        ctx,
        msg: &other_msg,
    };
    assert_eq!(slhdsa::verify(p, pk, &m, sig), Err(Error::VerifyFailed));
    assert!(!theirs_ok(sig, ctx, &other_msg));
    assert_eq!(
        slhdsa::verify(p, pk, pure, &sig[1..]),
        Err(Error::VerifyFailed),
        "short signature"
    );
}

macro_rules! sets {
    ($($test:ident: $set:ident => $ty:ident,)*) => {$(
        #[test]
        fn $test() {
            differential::<slh_dsa::$ty>(ParamSet::$set, ParamSet::$set as u64 + 0x5148);
        }
    )*};
}

sets! {
    sha2_128s: Sha2_128s => Sha2_128s,
    shake_128s: Shake128s => Shake128s,
    sha2_128f: Sha2_128f => Sha2_128f,
    shake_128f: Shake128f => Shake128f,
    sha2_192s: Sha2_192s => Sha2_192s,
    shake_192s: Shake192s => Shake192s,
    sha2_192f: Sha2_192f => Sha2_192f,
    shake_192f: Shake192f => Shake192f,
    sha2_256s: Sha2_256s => Sha2_256s,
    shake_256s: Shake256s => Shake256s,
    sha2_256f: Sha2_256f => Sha2_256f,
    shake_256f: Shake256f => Shake256f,
}

/// Bad shapes get their statuses: a context over 255 bytes, a wrong digest, key, rnd or
/// signature length.
#[test]
fn statuses() {
    let p = ParamSet::Sha2_128f;
    let seed = [7u8; 48];
    let mut pk = vec![0u8; 32];
    let mut sk = vec![0u8; 64];
    assert_eq!(
        slhdsa::keygen_internal(p, &seed[..47], &mut pk, &mut sk),
        Err(Error::BadLength)
    );
    slhdsa::keygen_internal(p, &seed, &mut pk, &mut sk).expect("keygen");
    let mut sig = vec![0u8; p.signature_len()];
    let long = [0u8; 256];
    let m = Message::Pure {
        ctx: &long,
        msg: b"m",
    };
    assert_eq!(
        slhdsa::sign(p, &sk, &m, None, &mut sig),
        Err(Error::InvalidArgument)
    );
    assert_eq!(
        slhdsa::verify(p, &pk, &m, &sig),
        Err(Error::InvalidArgument)
    );
    let d = Message::PreHashed {
        ctx: b"",
        ph: PreHash::Sha2_256,
        digest: &[0; 31],
    };
    assert_eq!(
        slhdsa::sign(p, &sk, &d, None, &mut sig),
        Err(Error::BadLength)
    );
    let m = Message::Pure {
        ctx: b"",
        msg: b"m",
    };
    assert_eq!(
        slhdsa::sign(p, &sk[1..], &m, None, &mut sig),
        Err(Error::BadLength)
    );
    assert_eq!(
        slhdsa::sign(p, &sk, &m, Some(&[0; 15]), &mut sig),
        Err(Error::BadLength)
    );
    assert_eq!(
        slhdsa::sign(p, &sk, &m, None, &mut sig[1..]),
        Err(Error::BadLength)
    );
    assert_eq!(slhdsa::verify(p, &pk[1..], &m, &sig), Err(Error::BadLength));
    assert_eq!(
        slhdsa::verify(p, &pk, &m, &sig[1..]),
        Err(Error::VerifyFailed)
    );
}
