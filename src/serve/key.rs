//! Key handles: a key decoded, checked and expanded once, then shared by reference count.
//!
//! A handle holds both forms: the expanded one (for the CPU fast paths) and the encoded bytes
//! (for backends that take encoded keys, e.g. the GPU). Queued items are lent their handle
//! ([`Lent`]) and the queue list holding them keeps one reference per key until they have all
//! reported, so a handle released by its creator stays valid until its items finish; the last
//! reference zeroizes the secret parts.

use super::uncounted::Uncounted;
use crate::{ctru, mldsa, mlkem, slhdsa, Alg, Error};
use std::sync::Arc;
use zeroize::Zeroizing;

/// Which half of a key pair a handle holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyKind {
    Public,
    Secret,
}

enum Form {
    MlDsaPk(mldsa::ExpandedPublicKey),
    MlDsaSk(mldsa::ExpandedSecretKey),
    CtruPk(ctru::ExpandedPublicKey),
    CtruSk(ctru::ExpandedSecretKey),
    SlhDsaPk(slhdsa::ExpandedPublicKey),
    SlhDsaSk(slhdsa::ExpandedSecretKey),
    /// An ML-KEM key that passed FIPS 203's check (ek modulus, dk hash); its bytes are the
    /// handle's encoded key.
    MlKem(KeyKind),
}

/// Aligned past a cache line: the `Arc`'s reference count (written by every call that queues
/// an item with the handle, from all submitting threads) then sits on a line of its own, away
/// from the fields every call reads.
#[repr(align(128))]
struct Inner {
    alg: Alg,
    bytes: Zeroizing<Vec<u8>>,
    form: Form,
}

/// A shared, immutable key handle (cheap to clone). Send + Sync.
#[derive(Clone)]
pub struct Key(Arc<Inner>);

impl Key {
    /// Checks and expands `bytes`. Errors: `BadLength` (wrong length for alg and kind),
    /// `BadKey` (ML-DSA s1/s2 out of range; CTRU-Prime non-canonical pk or malformed f; ML-KEM ek
    /// failing the modulus check or dk the hash check; an SLH-DSA sk whose PK.root is not its
    /// seeds' root).
    pub fn new(alg: Alg, kind: KeyKind, bytes: &[u8]) -> Result<Key, Error> {
        let form = match (alg, kind) {
            (Alg::MlDsa(p), KeyKind::Public) => {
                Form::MlDsaPk(mldsa::ExpandedPublicKey::new(p, bytes)?)
            }
            (Alg::MlDsa(p), KeyKind::Secret) => {
                Form::MlDsaSk(mldsa::ExpandedSecretKey::new(p, bytes)?)
            }
            (Alg::Ctru(p), KeyKind::Public) => {
                Form::CtruPk(ctru::ExpandedPublicKey::new(p, bytes)?)
            }
            (Alg::Ctru(p), KeyKind::Secret) => {
                Form::CtruSk(ctru::ExpandedSecretKey::new(p, bytes)?)
            }
            (Alg::SlhDsa(p), KeyKind::Public) => {
                Form::SlhDsaPk(slhdsa::ExpandedPublicKey::new(p, bytes)?)
            }
            (Alg::SlhDsa(p), KeyKind::Secret) => {
                Form::SlhDsaSk(slhdsa::ExpandedSecretKey::new(p, bytes)?)
            }
            (Alg::MlKem(p), KeyKind::Public) => {
                mlkem::check_encaps_key(p, bytes)?;
                Form::MlKem(kind)
            }
            (Alg::MlKem(p), KeyKind::Secret) => {
                mlkem::check_decaps_key(p, bytes)?;
                Form::MlKem(kind)
            }
        };
        Ok(Key(Arc::new(Inner {
            alg,
            bytes: Zeroizing::new(bytes.to_vec()),
            form,
        })))
    }

    pub fn alg(&self) -> Alg {
        self.0.alg
    }

    pub fn kind(&self) -> KeyKind {
        match self.0.form {
            Form::MlDsaPk(_) | Form::CtruPk(_) | Form::SlhDsaPk(_) => KeyKind::Public,
            Form::MlDsaSk(_) | Form::CtruSk(_) | Form::SlhDsaSk(_) => KeyKind::Secret,
            Form::MlKem(kind) => kind,
        }
    }

    /// The encoded key, as it was given.
    pub fn bytes(&self) -> &[u8] {
        &self.0.bytes
    }

    /// Whether two handles are the same key object (not merely equal bytes).
    pub fn same(&self, other: &Key) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// This handle without a reference count of its own (see [`Lent`]).
    ///
    /// # Safety
    /// The handle's allocation outlives every use of the result (some counted `Key` of it is
    /// alive meanwhile).
    pub(crate) unsafe fn lend(&self) -> Lent {
        // SAFETY: `Key` moves the `Arc` in; the lifetime is the caller's promise.
        unsafe { Uncounted::of(&self.0, Key) }
    }

    pub(crate) fn mldsa_sk(&self) -> Result<&mldsa::ExpandedSecretKey, Error> {
        match &self.0.form {
            Form::MlDsaSk(k) => Ok(k),
            _ => Err(Error::InvalidArgument),
        }
    }

    pub(crate) fn mldsa_pk(&self) -> Result<&mldsa::ExpandedPublicKey, Error> {
        match &self.0.form {
            Form::MlDsaPk(k) => Ok(k),
            _ => Err(Error::InvalidArgument),
        }
    }

    pub(crate) fn slhdsa_sk(&self) -> Result<&slhdsa::ExpandedSecretKey, Error> {
        match &self.0.form {
            Form::SlhDsaSk(k) => Ok(k),
            _ => Err(Error::InvalidArgument),
        }
    }

    pub(crate) fn slhdsa_pk(&self) -> Result<&slhdsa::ExpandedPublicKey, Error> {
        match &self.0.form {
            Form::SlhDsaPk(k) => Ok(k),
            _ => Err(Error::InvalidArgument),
        }
    }

    pub(crate) fn ctru_pk(&self) -> Result<&ctru::ExpandedPublicKey, Error> {
        match &self.0.form {
            Form::CtruPk(k) => Ok(k),
            _ => Err(Error::InvalidArgument),
        }
    }

    pub(crate) fn ctru_sk(&self) -> Result<&ctru::ExpandedSecretKey, Error> {
        match &self.0.form {
            Form::CtruSk(k) => Ok(k),
            _ => Err(Error::InvalidArgument),
        }
    }

    /// An ML-KEM secret-key handle's dk (checked when the handle was made).
    pub(crate) fn mlkem_dk(&self) -> Result<&[u8], Error> {
        match self.0.form {
            Form::MlKem(KeyKind::Secret) => Ok(&self.0.bytes),
            _ => Err(Error::InvalidArgument),
        }
    }
}

/// A key handle held without a reference count: a queued item names its key this way, and
/// the queue holds one counted reference per key for all the items it keeps (rather than one
/// per item, written by every submitting and every completing thread).
pub type Lent = Uncounted<Key>;

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Key({}, {:?})", self.alg().name(), self.kind())
    }
}
