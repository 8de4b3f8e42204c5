//! What the signature operation asks of a key family (ML-DSA, SLH-DSA): below the operation
//! and the key modules, so neither reaches up to the other.

use crate::abi::Param;
use pqgpu::Status;

/// Where signing randomness comes from, as the context's parameters chose it.
pub enum Rnd<'a> {
    /// `test-entropy`: the caller's bytes (the family's length, checked when set).
    Given(&'a [u8]),
    /// `deterministic`: the family's deterministic variant.
    Deterministic,
    /// Hedged (the default): fresh randomness.
    Fresh,
}

/// One signing or verification request, as OpenSSL's context describes it.
pub struct Request<'a> {
    /// The message (or M' with `raw`, or mu with `mu`) as OpenSSL passes it.
    pub data: &'a [u8],
    /// `context-string` (at most 255 bytes).
    pub context: &'a [u8],
    /// `message-encoding` 0: the caller passes M' itself (the internal interface).
    pub raw: bool,
    /// `mu` (ML-DSA's external mu): the caller passes mu.
    pub mu: bool,
}

/// A key family the signature operation serves. `s` is the index of the operation's table in
/// the family's row.
pub trait SigKey: 'static {
    /// What a context keeps of its key to sign or verify with (taken once per init, dropped
    /// with the context): ML-DSA's pqgpu key handles, SLH-DSA's key bytes.
    type Prepared: Clone;
    /// The `mu` parameter is the family's (ML-DSA).
    const TAKES_MU: bool;

    /// Whether this key is of parameter set `s`.
    fn is_set(&self, s: usize) -> bool;
    fn signature_len(s: usize) -> usize;
    /// The length `test-entropy` must have.
    fn entropy_len(s: usize) -> usize;
    /// DER of the signature's AlgorithmIdentifier (X.509, CMS).
    fn algorithm_id(s: usize) -> Vec<u8>;
    /// The context parameters the family takes.
    fn settable() -> *const Param;
    /// The secret (`secret`) or public part of the key, ready to use; `None` if the key has
    /// none or it cannot be made ready.
    fn prepare(&self, secret: bool) -> Option<Self::Prepared>;
    /// Signs into `sig` (exactly `signature_len` bytes). `data`, `context` and `sig` are
    /// OpenSSL's buffers, which the family may use in place until it returns.
    fn sign(key: &Self::Prepared, req: &Request<'_>, rnd: Rnd<'_>, sig: &mut [u8]) -> Status;
    /// `Ok(())` when `sig` is valid.
    fn verify(key: &Self::Prepared, req: &Request<'_>, sig: &[u8]) -> Status;
}

/// DER of AlgorithmIdentifier { 2.16.840.1.101.3.4.3.`arc` } with no parameters: NIST's
/// signature arc, where ML-DSA (RFC 9881) and SLH-DSA (FIPS 205's sets) have their OIDs.
pub fn nist_sig_algorithm_id(arc: u8) -> Vec<u8> {
    vec![
        0x30, 0x0b, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, arc,
    ]
}
