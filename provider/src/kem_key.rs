//! What the KEM operation (`kem`) asks of a key family: each family's key module implements
//! it, and the operation is generic over it, so the key modules need nothing from the
//! operation.

use crate::engine::Encapsulated;
use pqgpu::Error;
use zeroize::Zeroizing;

/// A key the KEM operation can use.
pub trait KemKey: Clone + 'static {
    /// Whether `ikme` applies (32 bytes of encapsulation coins).
    const TAKES_IKME: bool;
    /// The key management's table index for this key's parameter set (a context made for
    /// index `s` takes only keys of set `s`).
    fn index(&self) -> usize;
    fn can_encaps(&self) -> bool;
    fn can_decaps(&self) -> bool;
    fn ciphertext_len(&self) -> usize;
    fn shared_secret_len(&self) -> usize;
    /// (ciphertext, shared secret) with the given coins, or fresh ones.
    fn encaps(&self, coins: Option<Zeroizing<[u8; 32]>>) -> Result<Encapsulated, Error>;
    /// The shared secret of a ciphertext of the right length (implicit rejection for a wrong
    /// one, where the family has it).
    fn decaps(&self, ct: &[u8]) -> Result<Zeroizing<Vec<u8>>, Error>;
}
