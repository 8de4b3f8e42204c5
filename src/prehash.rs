//! The pre-hash functions shared by HashML-DSA and HashSLH-DSA: `pqg_hash` values, OIDs and
//! digest lengths.

use crate::Error;

/// The pre-hash functions of HashML-DSA (FIPS 204 section 5.4) and HashSLH-DSA (FIPS 205
/// section 10.2.2). Discriminants are `pqg_hash` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum PreHash {
    Sha2_224 = 1,
    Sha2_256 = 2,
    Sha2_384 = 3,
    Sha2_512 = 4,
    Sha2_512_224 = 5,
    Sha2_512_256 = 6,
    Sha3_224 = 7,
    Sha3_256 = 8,
    Sha3_384 = 9,
    Sha3_512 = 10,
    Shake128 = 11,
    Shake256 = 12,
}

impl PreHash {
    pub const ALL: [PreHash; 12] = [
        PreHash::Sha2_224,
        PreHash::Sha2_256,
        PreHash::Sha2_384,
        PreHash::Sha2_512,
        PreHash::Sha2_512_224,
        PreHash::Sha2_512_256,
        PreHash::Sha3_224,
        PreHash::Sha3_256,
        PreHash::Sha3_384,
        PreHash::Sha3_512,
        PreHash::Shake128,
        PreHash::Shake256,
    ];

    /// Maps a `pqg_hash` value.
    pub fn from_code(code: i32) -> Result<PreHash, Error> {
        PreHash::ALL
            .get((code as usize).wrapping_sub(1))
            .copied()
            .filter(|_| code >= 1)
            .ok_or(Error::InvalidArgument)
    }

    /// The last byte of the NIST hash-algorithm OID 2.16.840.1.101.3.4.2.x.
    const fn oid_arc(self) -> u8 {
        match self {
            PreHash::Sha2_256 => 0x01,
            PreHash::Sha2_384 => 0x02,
            PreHash::Sha2_512 => 0x03,
            PreHash::Sha2_224 => 0x04,
            PreHash::Sha2_512_224 => 0x05,
            PreHash::Sha2_512_256 => 0x06,
            PreHash::Sha3_224 => 0x07,
            PreHash::Sha3_256 => 0x08,
            PreHash::Sha3_384 => 0x09,
            PreHash::Sha3_512 => 0x0a,
            PreHash::Shake128 => 0x0b,
            PreHash::Shake256 => 0x0c,
        }
    }

    /// DER encoding of the hash function's OID, as HashML-DSA and HashSLH-DSA put it into M'.
    pub const fn oid_der(self) -> [u8; 11] {
        [
            0x06,
            0x09,
            0x60,
            0x86,
            0x48,
            0x01,
            0x65,
            0x03,
            0x04,
            0x02,
            self.oid_arc(),
        ]
    }

    /// The digest length the caller must pass (SHAKE-128: 32 bytes, SHAKE-256: 64 bytes).
    pub const fn digest_len(self) -> usize {
        match self {
            PreHash::Sha2_224 | PreHash::Sha2_512_224 | PreHash::Sha3_224 => 28,
            PreHash::Sha2_256 | PreHash::Sha2_512_256 | PreHash::Sha3_256 | PreHash::Shake128 => 32,
            PreHash::Sha2_384 | PreHash::Sha3_384 => 48,
            PreHash::Sha2_512 | PreHash::Sha3_512 | PreHash::Shake256 => 64,
        }
    }
}
