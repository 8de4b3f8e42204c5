//! The three parameter sets over libcrux-ml-kem's fixed-size types. Callers (mod.rs) have
//! checked every length, so the conversions to arrays here cannot fail.

use super::{ParamSet, SEED_LEN};
use crate::Error;
use libcrux_ml_kem::{MlKemCiphertext, MlKemPrivateKey, MlKemPublicKey};
use zeroize::Zeroize;

/// Runs `$body` with `$m` naming libcrux's module for `$p`.
macro_rules! for_set {
    ($p:expr, $m:ident => $body:expr) => {
        match $p {
            ParamSet::MlKem512 => {
                use libcrux_ml_kem::mlkem512 as $m;
                $body
            }
            ParamSet::MlKem768 => {
                use libcrux_ml_kem::mlkem768 as $m;
                $body
            }
            ParamSet::MlKem1024 => {
                use libcrux_ml_kem::mlkem1024 as $m;
                $body
            }
        }
    };
}

/// A private key copied out of the caller's buffer, wiped when dropped.
struct SecretCopy<const N: usize>(MlKemPrivateKey<N>);

impl<const N: usize> SecretCopy<N> {
    fn new(dk: &[u8]) -> Self {
        SecretCopy(MlKemPrivateKey::try_from(dk).expect("length checked by the caller"))
    }
}

impl<const N: usize> Drop for SecretCopy<N> {
    fn drop(&mut self) {
        self.0[0..].zeroize();
    }
}

fn public<const N: usize>(ek: &[u8]) -> MlKemPublicKey<N> {
    MlKemPublicKey::try_from(ek).expect("length checked by the caller")
}

pub(super) fn keygen(p: ParamSet, seed: &[u8; SEED_LEN], ek: &mut [u8], dk: &mut [u8]) {
    for_set!(p, m => {
        let (sk, pk) = m::generate_key_pair(*seed).into_parts();
        let sk = SecretCopy(sk);
        ek.copy_from_slice(pk.as_slice());
        dk.copy_from_slice(sk.0.as_slice());
    })
}

pub(super) fn encaps(
    p: ParamSet,
    ek: &[u8],
    coins: &[u8; 32],
    ct: &mut [u8],
    ss: &mut [u8],
) -> Result<(), Error> {
    for_set!(p, m => {
        let pk = public(ek);
        if !m::validate_public_key(&pk) {
            return Err(Error::BadKey);
        }
        let (c, mut k) = m::encapsulate(&pk, *coins);
        ct.copy_from_slice(c.as_slice());
        ss.copy_from_slice(&k);
        k.zeroize();
        Ok(())
    })
}

pub(super) fn decaps(p: ParamSet, dk: &[u8], ct: &[u8], ss: &mut [u8]) -> Result<(), Error> {
    for_set!(p, m => {
        let sk = SecretCopy::new(dk);
        let c = MlKemCiphertext::try_from(ct).expect("length checked by the caller");
        if !m::validate_private_key(&sk.0, &c) {
            return Err(Error::BadKey);
        }
        let mut k = m::decapsulate(&sk.0, &c);
        ss.copy_from_slice(&k);
        k.zeroize();
        Ok(())
    })
}

pub(super) fn decaps_unchecked(p: ParamSet, dk: &[u8], ct: &[u8], ss: &mut [u8]) {
    for_set!(p, m => {
        let sk = SecretCopy::new(dk);
        let c = MlKemCiphertext::try_from(ct).expect("length checked by the caller");
        let mut k = m::decapsulate(&sk.0, &c);
        ss.copy_from_slice(&k);
        k.zeroize();
    })
}

pub(super) fn check_encaps_key(p: ParamSet, ek: &[u8]) -> Result<(), Error> {
    for_set!(p, m => {
        if m::validate_public_key(&public(ek)) { Ok(()) } else { Err(Error::BadKey) }
    })
}

pub(super) fn check_decaps_key(p: ParamSet, dk: &[u8]) -> Result<(), Error> {
    for_set!(p, m => {
        let sk = SecretCopy::new(dk);
        // libcrux's check reads only the key (the ciphertext argument is for the length checks
        // its types already enforce).
        if m::validate_private_key(&sk.0, &MlKemCiphertext::default()) {
            Ok(())
        } else {
            Err(Error::BadKey)
        }
    })
}
