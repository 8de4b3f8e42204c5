//! The error type shared by every layer; its discriminants are the C ABI's `pqg_status` codes.

use std::fmt;

/// Every way an operation can fail. `as i32` gives the `PQG_ERR_*` value of the C contract.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum Error {
    /// A required pointer was NULL (C ABI only).
    NullPointer = -1,
    /// Unknown algorithm, context string over 255 bytes, bad option.
    InvalidArgument = -2,
    /// A buffer length does not match the algorithm.
    BadLength = -3,
    /// A key's encoding is malformed (e.g. secret coefficients out of range).
    BadKey = -4,
    /// The signature does not verify (includes malformed signatures).
    VerifyFailed = -5,
    /// A GPU backend was demanded and none is usable.
    NoDevice = -6,
    /// The GPU failed while running this work.
    Device = -7,
    /// A wait ran out before the job finished.
    Timeout = -8,
    /// The operating system's randomness was unavailable.
    Rng = -9,
    /// An internal bug was caught at the boundary.
    Panic = -99,
}

/// The outcome of one item of a batch.
pub type Status = Result<(), Error>;

impl Error {
    /// The `pqg_status` value of this error.
    pub const fn code(self) -> i32 {
        self as i32
    }

    /// A short static description, as `pqg_status_str` returns it.
    pub const fn message(self) -> &'static str {
        match self {
            Error::NullPointer => "a required pointer was NULL",
            Error::InvalidArgument => {
                "invalid argument (unknown algorithm, context over 255 bytes, or bad option)"
            }
            Error::BadLength => "a buffer length does not match the algorithm",
            Error::BadKey => "the key encoding is malformed",
            Error::VerifyFailed => "the signature does not verify",
            Error::NoDevice => "no usable GPU device",
            Error::Device => "the GPU failed while running this work",
            Error::Timeout => "the wait ran out before the job finished",
            Error::Rng => "operating system randomness unavailable",
            Error::Panic => "internal error (panic caught at the boundary)",
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for Error {}
