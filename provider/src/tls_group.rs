//! The TLS-GROUP capability: the TLS 1.3 key exchange groups served by this provider's KEMs,
//! with the same entries as OpenSSL 3.5's default provider (providers/common/capabilities.c):
//! MLKEM512 0x0200, MLKEM768 0x0201, MLKEM1024 0x0202 and X25519MLKEM768 0x11EC. libssl
//! generates and encapsulates a group's keys with the key management and KEM of the group's
//! algorithm fetched under the SSL_CTX's properties, so with pqgpu preferred its ML-KEM and
//! X25519MLKEM768 do the key exchange. None is announced when ML-KEM is switched off in the
//! configuration (`ml_kem = no`).

use crate::abi::{self, Callback, Param, Table};
use crate::static_param::{num, text, TLS1_3_VERSION};
use std::ffi::{c_int, c_uint, c_void, CStr};

/// The numbers of one group, in the C types OpenSSL reads them as.
struct Numbers {
    id: c_uint,
    sec_bits: c_uint,
    min_tls: c_int,
    max_tls: c_int,
    min_dtls: c_int,
    max_dtls: c_int,
    is_kem: c_uint,
}

const fn kem_group(id: c_uint, sec_bits: c_uint) -> Numbers {
    Numbers {
        id,
        sec_bits,
        min_tls: TLS1_3_VERSION,
        max_tls: 0,
        min_dtls: -1,
        max_dtls: -1,
        is_kem: 1,
    }
}

/// Security bits are ML-KEM's (for the hybrid too), as OpenSSL announces them.
static NUMBERS: [Numbers; 4] = [
    kem_group(0x0200, 128),
    kem_group(0x0201, 192),
    kem_group(0x0202, 256),
    kem_group(0x11EC, 192),
];

const fn entry(name: &'static CStr, alg: &'static CStr, n: &'static Numbers) -> [Param; 11] {
    [
        text(c"tls-group-name", name),
        // The name passed to the key management as `group`; ML-KEM needs none.
        text(c"tls-group-name-internal", c""),
        text(c"tls-group-alg", alg),
        num(c"tls-group-id", abi::PARAM_UNSIGNED_INTEGER, &n.id),
        num(
            c"tls-group-sec-bits",
            abi::PARAM_UNSIGNED_INTEGER,
            &n.sec_bits,
        ),
        num(c"tls-min-tls", abi::PARAM_INTEGER, &n.min_tls),
        num(c"tls-max-tls", abi::PARAM_INTEGER, &n.max_tls),
        num(c"tls-min-dtls", abi::PARAM_INTEGER, &n.min_dtls),
        num(c"tls-max-dtls", abi::PARAM_INTEGER, &n.max_dtls),
        num(c"tls-group-is-kem", abi::PARAM_UNSIGNED_INTEGER, &n.is_kem),
        abi::PARAM_END,
    ]
}

static GROUPS: Table<[Param; 11], 4> = Table([
    entry(c"MLKEM512", c"ML-KEM-512", &NUMBERS[0]),
    entry(c"MLKEM768", c"ML-KEM-768", &NUMBERS[1]),
    entry(c"MLKEM1024", c"ML-KEM-1024", &NUMBERS[2]),
    entry(c"X25519MLKEM768", c"X25519MLKEM768", &NUMBERS[3]),
]);

/// Calls `cb` once per group.
///
/// # Safety
/// `cb` and `arg` must be OpenSSL's capability callback and its argument.
pub unsafe fn announce(cb: Callback, arg: *mut c_void) -> c_int {
    if !crate::ml_kem_enabled() {
        return 1;
    }
    for g in &GROUPS.0 {
        // SAFETY: a terminated static array; the callback copies what it keeps.
        if unsafe { cb(g.as_ptr(), arg) } == 0 {
            return 0;
        }
    }
    1
}
