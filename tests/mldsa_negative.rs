//! Malformed inputs, wrong lengths and tampering: every path must give the documented error and
//! never panic. Also the HashML-DSA and external-mu interfaces end to end.

use pqgpu::mldsa::{self, Message, ParamSet, PreHash};
use pqgpu::Error;
use sha3::digest::{ExtendableOutput, Update, XofReader};

struct Keys {
    p: ParamSet,
    pk: Vec<u8>,
    sk: Vec<u8>,
}

fn keys(p: ParamSet, seed: u8) -> Keys {
    let (mut pk, mut sk) = (vec![0u8; p.public_key_len()], vec![0u8; p.secret_key_len()]);
    mldsa::keygen_internal(p, &[seed; 32], &mut pk, &mut sk).unwrap();
    Keys { p, pk, sk }
}

impl Keys {
    fn sign(&self, msg: &Message<'_>, rnd: Option<&[u8; 32]>) -> Result<Vec<u8>, Error> {
        let mut sig = vec![0u8; self.p.signature_len()];
        mldsa::sign(self.p, &self.sk, msg, rnd, &mut sig).map(|()| sig)
    }

    fn verify(&self, msg: &Message<'_>, sig: &[u8]) -> Result<(), Error> {
        mldsa::verify(self.p, &self.pk, msg, sig)
    }
}

const MSG: Message<'static> = Message::Pure {
    ctx: b"negative tests",
    msg: b"the message",
};

/// Offsets of the hint encoding: (start of the omega index bytes, start of the k counts).
fn hint_layout(p: ParamSet) -> (usize, usize) {
    let start = p.signature_len() - p.omega() - p.k();
    (start, start + p.omega())
}

/// Every single-bit flip of a valid signature must fail verification.
fn all_bit_flips(p: ParamSet) {
    let k = keys(p, 1);
    let mut sig = k.sign(&MSG, Some(&[0; 32])).unwrap();
    assert_eq!(k.verify(&MSG, &sig), Ok(()));
    let mut flips = 0;
    for byte in 0..sig.len() {
        for bit in 0..8 {
            sig[byte] ^= 1 << bit;
            assert_eq!(
                k.verify(&MSG, &sig),
                Err(Error::VerifyFailed),
                "{p:?}: byte {byte} bit {bit}"
            );
            sig[byte] ^= 1 << bit;
            flips += 1;
        }
    }
    assert_eq!(flips, p.signature_len() * 8);
    assert_eq!(k.verify(&MSG, &sig), Ok(()));
}

#[test]
fn bit_flips_ml_dsa_44() {
    all_bit_flips(ParamSet::MlDsa44);
}

#[test]
fn bit_flips_ml_dsa_65() {
    all_bit_flips(ParamSet::MlDsa65);
}

#[test]
fn bit_flips_ml_dsa_87() {
    all_bit_flips(ParamSet::MlDsa87);
}

#[test]
fn lengths() {
    for p in ParamSet::ALL {
        let k = keys(p, 2);
        let sig = k.sign(&MSG, None).unwrap();
        // Truncated or extended signatures are invalid signatures.
        for len in [0, 1, sig.len() - 1, sig.len() + 1, 2 * sig.len()] {
            let mut s = sig.clone();
            s.resize(len, 0);
            assert_eq!(
                k.verify(&MSG, &s),
                Err(Error::VerifyFailed),
                "{p:?} sig len {len}"
            );
        }
        // Wrong key and output buffers are length errors.
        for len in [0, k.pk.len() - 1, k.pk.len() + 1] {
            let pk = vec![0u8; len];
            assert_eq!(
                mldsa::verify(p, &pk, &MSG, &sig),
                Err(Error::BadLength),
                "{p:?} pk len {len}"
            );
        }
        let mut out = vec![0u8; sig.len()];
        for len in [0, k.sk.len() - 1, k.sk.len() + 1] {
            let sk = vec![0u8; len];
            assert_eq!(
                mldsa::sign(p, &sk, &MSG, None, &mut out),
                Err(Error::BadLength)
            );
        }
        for len in [0, sig.len() - 1, sig.len() + 1] {
            let mut out = vec![0u8; len];
            assert_eq!(
                mldsa::sign(p, &k.sk, &MSG, None, &mut out),
                Err(Error::BadLength)
            );
        }
        let (mut pk, mut sk) = (vec![0u8; k.pk.len()], vec![0u8; k.sk.len()]);
        assert_eq!(
            mldsa::keygen_internal(p, &[0; 32], &mut pk[1..], &mut sk),
            Err(Error::BadLength)
        );
        assert_eq!(
            mldsa::keygen_internal(p, &[0; 32], &mut pk, &mut sk[1..]),
            Err(Error::BadLength)
        );
        // A wrong-length mu or HashML-DSA digest is a length error too.
        let mu = [0u8; 63];
        assert_eq!(k.sign(&Message::Mu(&mu), None), Err(Error::BadLength));
        assert_eq!(k.verify(&Message::Mu(&mu), &sig), Err(Error::BadLength));
        for ph in PreHash::ALL {
            for len in [0, ph.digest_len() - 1, ph.digest_len() + 1] {
                let digest = vec![7u8; len];
                let m = Message::PreHashed {
                    ctx: b"",
                    ph,
                    digest: &digest,
                };
                assert_eq!(
                    k.sign(&m, None),
                    Err(Error::BadLength),
                    "{ph:?} digest len {len}"
                );
                assert_eq!(
                    k.verify(&m, &sig),
                    Err(Error::BadLength),
                    "{ph:?} digest len {len}"
                );
            }
        }
    }
}

#[test]
fn context_lengths() {
    let long = [0x5a; 256];
    for p in ParamSet::ALL {
        let k = keys(p, 3);
        let sig = k.sign(&MSG, None).unwrap();
        let too_long = Message::Pure {
            ctx: &long,
            msg: b"m",
        };
        assert_eq!(k.sign(&too_long, None), Err(Error::InvalidArgument));
        assert_eq!(k.verify(&too_long, &sig), Err(Error::InvalidArgument));
        let digest = [0u8; 32];
        let hashed = Message::PreHashed {
            ctx: &long,
            ph: PreHash::Sha2_256,
            digest: &digest,
        };
        assert_eq!(k.sign(&hashed, None), Err(Error::InvalidArgument));
        assert_eq!(k.verify(&hashed, &sig), Err(Error::InvalidArgument));

        let max = Message::Pure {
            ctx: &long[..255],
            msg: b"m",
        };
        let sig = k.sign(&max, None).unwrap();
        assert_eq!(k.verify(&max, &sig), Ok(()));
        let hashed = Message::PreHashed {
            ctx: &long[..255],
            ph: PreHash::Sha2_256,
            digest: &digest,
        };
        let sig = k.sign(&hashed, None).unwrap();
        assert_eq!(k.verify(&hashed, &sig), Ok(()));
        // The context is bound to the signature.
        let shorter = Message::PreHashed {
            ctx: &long[..254],
            ph: PreHash::Sha2_256,
            digest: &digest,
        };
        assert_eq!(k.verify(&shorter, &sig), Err(Error::VerifyFailed));
    }
}

#[test]
fn secret_key_out_of_range() {
    for p in ParamSet::ALL {
        let k = keys(p, 4);
        let bits = p.eta_bits();
        let s_len = 32 * bits; // bytes per packed s1/s2 polynomial
        let s2_last = 128 + (p.k() + p.l() - 1) * s_len;
        // The first coefficient of s1 and the last of s2 at their largest legal field value 2 eta
        // (coefficient -eta) still sign; one above (coefficient -eta - 1) is BadKey.
        let first = |sk: &mut Vec<u8>, v: u8| {
            let mask = (1u8 << bits) - 1;
            sk[128] = (sk[128] & !mask) | v;
        };
        let last = |sk: &mut Vec<u8>, v: u8| {
            // The last field of a polynomial holds the top `bits` bits of its last byte.
            let end = s2_last + s_len - 1;
            let shift = 8 - bits;
            sk[end] = (sk[end] & ((1u8 << shift) - 1)) | (v << shift);
        };
        let two_eta = 2 * p.eta() as u8;
        for edit in [&first as &dyn Fn(&mut Vec<u8>, u8), &last] {
            let mut sk = k.sk.clone();
            edit(&mut sk, two_eta);
            let mut sig = vec![0u8; p.signature_len()];
            assert_eq!(mldsa::sign(p, &sk, &MSG, None, &mut sig), Ok(()), "{p:?}");
            for v in two_eta + 1..1 << bits {
                edit(&mut sk, v);
                assert_eq!(
                    mldsa::sign(p, &sk, &MSG, None, &mut sig),
                    Err(Error::BadKey),
                    "{p:?} v={v}"
                );
            }
        }
    }
}

#[test]
fn hedged_signatures_differ_and_verify() {
    for p in ParamSet::ALL {
        let k = keys(p, 5);
        let a = k.sign(&MSG, None).unwrap();
        let b = k.sign(&MSG, None).unwrap();
        assert_ne!(a, b, "{p:?}");
        assert_eq!(k.verify(&MSG, &a), Ok(()));
        assert_eq!(k.verify(&MSG, &b), Ok(()));
        // Deterministic signing is repeatable.
        assert_eq!(k.sign(&MSG, Some(&[0; 32])), k.sign(&MSG, Some(&[0; 32])));
    }
}

/// Finds a deterministic signature with at least two hints in one polynomial and fewer than
/// omega hints in all. Returns it with the index of that polynomial.
fn signature_with_hints(k: &Keys) -> (Vec<u8>, Message<'static>, usize) {
    let (_, counts) = hint_layout(k.p);
    for i in 0u8..=255 {
        let msgs: &'static [u8] = Box::leak(vec![i; 17].into_boxed_slice());
        let m = Message::Pure {
            ctx: b"",
            msg: msgs,
        };
        let sig = k.sign(&m, Some(&[0; 32])).unwrap();
        let total = sig[counts + k.p.k() - 1] as usize;
        let mut prev = 0;
        for poly in 0..k.p.k() {
            let end = sig[counts + poly] as usize;
            if end - prev >= 2 && total < k.p.omega() {
                return (sig, m, poly);
            }
            prev = end;
        }
    }
    panic!("no signature with two hints in one polynomial");
}

#[test]
fn malformed_hints() {
    for p in ParamSet::ALL {
        let k = keys(p, 6);
        let (sig, m, poly) = signature_with_hints(&k);
        assert_eq!(k.verify(&m, &sig), Ok(()));
        let (idx, counts) = hint_layout(p);
        let first = idx
            + if poly == 0 {
                0
            } else {
                sig[counts + poly - 1] as usize
            };
        let total = sig[counts + p.k() - 1] as usize;
        let fails = |s: &[u8], what: &str| {
            assert_eq!(k.verify(&m, s), Err(Error::VerifyFailed), "{p:?}: {what}");
        };

        let mut s = sig.clone();
        s.swap(first, first + 1);
        fails(&s, "indices out of order");

        let mut s = sig.clone();
        s[first + 1] = s[first];
        fails(&s, "repeated index");

        let mut s = sig.clone();
        s[counts + p.k() - 1] = p.omega() as u8 + 1;
        fails(&s, "count above omega");

        let mut s = sig.clone();
        for c in &mut s[counts..] {
            *c = 0xff;
        }
        fails(&s, "all counts 0xff");

        let mut s = sig.clone();
        s[counts] = s[counts + 1].wrapping_add(1);
        fails(&s, "decreasing counts");

        let mut s = sig.clone();
        s[idx + total] = 1;
        fails(&s, "nonzero padding after the last index");

        let mut s = sig.clone();
        s[counts - 1] = 0x80;
        fails(&s, "nonzero last padding byte");

        // Hints moved to the next polynomial: well-formed but wrong.
        if poly + 1 < p.k() {
            let mut s = sig.clone();
            s[counts + poly] -= 1;
            fails(&s, "hint shifted to another polynomial");
        }
    }
}

#[test]
fn z_out_of_range() {
    for p in ParamSet::ALL {
        let k = keys(p, 7);
        let sig = k.sign(&MSG, Some(&[0; 32])).unwrap();
        let z = p.c_tilde_len();
        let zbits = p.gamma1_bits() as usize + 1;
        // Field 0 encodes z = gamma1 (the first coefficient occupies the low zbits bits).
        let mut s = sig.clone();
        s[z] = 0;
        s[z + 1] = 0;
        s[z + 2] &= !((1u8 << (zbits - 16)) - 1);
        assert_eq!(
            k.verify(&MSG, &s),
            Err(Error::VerifyFailed),
            "{p:?}: z = gamma1"
        );
        // All-ones fields encode z = gamma1 - 2^zbits + 1 = -gamma1 + 1.
        let mut s = sig.clone();
        for b in &mut s[z..z + 32 * zbits] {
            *b = 0xff;
        }
        assert_eq!(
            k.verify(&MSG, &s),
            Err(Error::VerifyFailed),
            "{p:?}: z = -gamma1 + 1"
        );
    }
}

#[test]
fn garbage_never_panics() {
    let mut state = 0x1234_5678_9abc_def0u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state as u8
    };
    for p in ParamSet::ALL {
        let k = keys(p, 8);
        for _ in 0..20 {
            let sig: Vec<u8> = (0..p.signature_len()).map(|_| next()).collect();
            assert_eq!(k.verify(&MSG, &sig), Err(Error::VerifyFailed));
            let pk: Vec<u8> = (0..p.public_key_len()).map(|_| next()).collect();
            assert_eq!(mldsa::verify(p, &pk, &MSG, &sig), Err(Error::VerifyFailed));
        }
        assert_eq!(
            k.verify(&MSG, &vec![0u8; p.signature_len()]),
            Err(Error::VerifyFailed)
        );
        assert_eq!(
            k.verify(&MSG, &vec![0xffu8; p.signature_len()]),
            Err(Error::VerifyFailed)
        );
        // A random secret key either signs (and verifies under nothing in particular) or is BadKey.
        let sk: Vec<u8> = (0..p.secret_key_len()).map(|_| next()).collect();
        let mut sig = vec![0u8; p.signature_len()];
        let r = mldsa::sign(p, &sk, &MSG, Some(&[0; 32]), &mut sig);
        assert!(matches!(r, Ok(()) | Err(Error::BadKey)), "{p:?}: {r:?}");
    }
}

#[test]
fn hash_ml_dsa_round_trip_all_prehashes() {
    for p in ParamSet::ALL {
        let k = keys(p, 9);
        for ph in PreHash::ALL {
            let digest: Vec<u8> = (0..ph.digest_len() as u8).collect();
            let m = Message::PreHashed {
                ctx: b"ctx",
                ph,
                digest: &digest,
            };
            let sig = k.sign(&m, None).unwrap();
            assert_eq!(k.verify(&m, &sig), Ok(()), "{p:?} {ph:?}");
            // Domain separation: not valid as pure ML-DSA or under another hash OID.
            assert_eq!(
                k.verify(
                    &Message::Pure {
                        ctx: b"ctx",
                        msg: &digest
                    },
                    &sig
                ),
                Err(Error::VerifyFailed)
            );
            for other in PreHash::ALL
                .into_iter()
                .filter(|o| *o != ph && o.digest_len() == ph.digest_len())
            {
                let m2 = Message::PreHashed {
                    ctx: b"ctx",
                    ph: other,
                    digest: &digest,
                };
                assert_eq!(
                    k.verify(&m2, &sig),
                    Err(Error::VerifyFailed),
                    "{p:?} {ph:?} as {other:?}"
                );
            }
        }
    }
}

#[test]
fn external_mu_equals_pure() {
    let (ctx, msg) = (b"some context", b"some message");
    for p in ParamSet::ALL {
        let k = keys(p, 10);
        // tr = H(pk, 64); mu = H(tr || 0 || |ctx| || ctx || M, 64).
        let mut tr = [0u8; 64];
        let mut h = sha3::Shake256::default();
        h.update(&k.pk);
        h.finalize_xof().read(&mut tr);
        let mut mu = [0u8; 64];
        let mut h = sha3::Shake256::default();
        h.update(&tr);
        h.update(&[0, ctx.len() as u8]);
        h.update(ctx);
        h.update(msg);
        h.finalize_xof().read(&mut mu);

        let pure = Message::Pure { ctx, msg };
        let rnd = [0x42; 32];
        let a = k.sign(&pure, Some(&rnd)).unwrap();
        let b = k.sign(&Message::Mu(&mu), Some(&rnd)).unwrap();
        assert_eq!(a, b, "{p:?}");
        assert_eq!(k.verify(&Message::Mu(&mu), &a), Ok(()));
        let internal = [&[0u8, ctx.len() as u8][..], ctx, msg].concat();
        assert_eq!(k.verify(&Message::Internal(&internal), &a), Ok(()));
        assert_eq!(
            k.sign(&Message::Internal(&internal), Some(&rnd)).unwrap(),
            a
        );
    }
}

#[test]
fn fits_a_small_thread_stack() {
    // C callers may run us on threads with small stacks; 256 KiB must do for every operation.
    std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(|| {
            for p in ParamSet::ALL {
                let k = keys(p, 11);
                let sig = k.sign(&MSG, None).unwrap();
                assert_eq!(k.verify(&MSG, &sig), Ok(()));
            }
        })
        .unwrap()
        .join()
        .unwrap();
}
