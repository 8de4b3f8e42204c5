//! Crypto at rest. Each token has a random 32-byte data key; private key material is stored
//! only sealed under it (ChaCha20-Poly1305, a fresh 96-bit nonce per write, the object's id as
//! associated data so a sealed value cannot be moved to another object). The data key itself
//! is stored wrapped twice: under a key derived from the user PIN and under one derived from
//! the SO PIN (Argon2id, memory-hard, a random salt per PIN), so the SO can reset the user PIN
//! without losing the token's keys. A wrong PIN fails the AEAD check: no PIN verifier is kept.

use argon2::{Algorithm, Argon2, Params, Version};
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};
use zeroize::Zeroizing;

pub const KEY_LEN: usize = 32;
const NONCE_LEN: usize = 12;
const SALT_LEN: usize = 16;

/// A token's data key.
pub type DataKey = Zeroizing<[u8; KEY_LEN]>;

/// Argon2id cost, stored beside each wrapped key so that later changes of the defaults keep
/// old tokens readable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cost {
    pub memory_kib: u32,
    pub iterations: u32,
}

/// The data key wrapped under one PIN.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Wrapped {
    pub cost: Cost,
    pub salt: Vec<u8>,
    /// nonce || ciphertext || tag
    pub sealed: Vec<u8>,
}

#[derive(Debug, PartialEq, Eq)]
pub enum SealError {
    /// Wrong PIN, or tampered data.
    Open,
    /// No randomness, or a bad cost.
    Failed,
}

fn random<const N: usize>() -> Result<[u8; N], SealError> {
    let mut b = [0u8; N];
    getrandom::getrandom(&mut b).map_err(|_| SealError::Failed)?;
    Ok(b)
}

pub fn new_data_key() -> Result<DataKey, SealError> {
    Ok(Zeroizing::new(random::<KEY_LEN>()?))
}

fn derive(pin: &[u8], salt: &[u8], cost: Cost) -> Result<DataKey, SealError> {
    let params = Params::new(cost.memory_kib, cost.iterations, 1, Some(KEY_LEN))
        .map_err(|_| SealError::Failed)?;
    let mut out = Zeroizing::new([0u8; KEY_LEN]);
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
        .hash_password_into(pin, salt, &mut out[..])
        .map_err(|_| SealError::Failed)?;
    Ok(out)
}

/// Seals `plain` under `key` with `aad` bound to it: nonce || ciphertext || tag.
pub fn seal(key: &[u8; KEY_LEN], aad: &[u8], plain: &[u8]) -> Result<Vec<u8>, SealError> {
    let nonce = random::<NONCE_LEN>()?;
    let c = ChaCha20Poly1305::new(Key::from_slice(key));
    let ct = c
        .encrypt(Nonce::from_slice(&nonce), Payload { msg: plain, aad })
        .map_err(|_| SealError::Failed)?;
    let mut out = nonce.to_vec();
    out.extend_from_slice(&ct);
    Ok(out)
}

/// Opens what [`seal`] made; any change (key, aad, bytes) is `Open`.
pub fn open(
    key: &[u8; KEY_LEN],
    aad: &[u8],
    sealed: &[u8],
) -> Result<Zeroizing<Vec<u8>>, SealError> {
    if sealed.len() < NONCE_LEN {
        return Err(SealError::Open);
    }
    let (nonce, ct) = sealed.split_at(NONCE_LEN);
    let c = ChaCha20Poly1305::new(Key::from_slice(key));
    c.decrypt(Nonce::from_slice(nonce), Payload { msg: ct, aad })
        .map(Zeroizing::new)
        .map_err(|_| SealError::Open)
}

/// Wraps the data key under `pin`; `role` (b"user" or b"so") is bound as associated data.
pub fn wrap(dk: &DataKey, pin: &[u8], role: &[u8], cost: Cost) -> Result<Wrapped, SealError> {
    let salt = random::<SALT_LEN>()?.to_vec();
    let kek = derive(pin, &salt, cost)?;
    let sealed = seal(&kek, role, &dk[..])?;
    Ok(Wrapped { cost, salt, sealed })
}

/// Unwraps the data key with `pin`: `Open` for a wrong PIN.
pub fn unwrap(w: &Wrapped, pin: &[u8], role: &[u8]) -> Result<DataKey, SealError> {
    let kek = derive(pin, &w.salt, w.cost)?;
    let plain = open(&kek, role, &w.sealed)?;
    let key: [u8; KEY_LEN] = plain[..].try_into().map_err(|_| SealError::Open)?;
    Ok(Zeroizing::new(key))
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHEAP: Cost = Cost {
        memory_kib: 64,
        iterations: 1,
    };

    #[test]
    fn the_data_key_opens_with_the_right_pin_only() {
        let dk = new_data_key().unwrap();
        let w = wrap(&dk, b"1234", b"user", CHEAP).unwrap();
        assert!(!w.sealed.windows(KEY_LEN).any(|x| x == &dk[..]));
        assert_eq!(unwrap(&w, b"1234", b"user").unwrap()[..], dk[..]);
        assert_eq!(unwrap(&w, b"1235", b"user").unwrap_err(), SealError::Open);
        assert_eq!(unwrap(&w, b"1234", b"so").unwrap_err(), SealError::Open);
    }

    #[test]
    fn sealed_values_are_bound_to_their_object() {
        let dk = new_data_key().unwrap();
        let s = seal(&dk, b"obj-1", b"secret key bytes").unwrap();
        assert_eq!(&open(&dk, b"obj-1", &s).unwrap()[..], b"secret key bytes");
        assert_eq!(open(&dk, b"obj-2", &s).unwrap_err(), SealError::Open);
        let mut t = s.clone();
        t[20] ^= 1;
        assert_eq!(open(&dk, b"obj-1", &t).unwrap_err(), SealError::Open);
    }

    /// Argon2id against RFC 9106's test vector is the crate's own business; here: the derived
    /// key depends on the salt and the cost.
    #[test]
    fn derivation_depends_on_salt_and_cost() {
        let a = derive(b"pin", b"0123456789abcdef", CHEAP).unwrap();
        let b = derive(b"pin", b"0123456789abcdeg", CHEAP).unwrap();
        let c = derive(
            b"pin",
            b"0123456789abcdef",
            Cost {
                memory_kib: 128,
                iterations: 1,
            },
        )
        .unwrap();
        assert_ne!(a[..], b[..]);
        assert_ne!(a[..], c[..]);
    }
}
