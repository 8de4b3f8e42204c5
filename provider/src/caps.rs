//! The TLS-SIGALG capability (the TLS-GROUP one is `tls_group`): mldsa44/65/87 (TLS 1.3 code points 0x0904-0x0906), the same
//! entries as OpenSSL 3.5's default provider. libssl keeps a provider's signature scheme only
//! when the key type's key management fetched under the SSL_CTX's properties comes from that
//! same provider, so when pqgpu is preferred it must announce the schemes itself.

use crate::abi::{self, Callback, Param, Table};
use crate::static_param::{num, text, TLS1_3_VERSION};
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};

/// The numbers of one scheme, in the C types OpenSSL reads them as.
struct Numbers {
    code_point: c_uint,
    sec_bits: c_uint,
    min_tls: c_int,
    max_tls: c_int,
    min_dtls: c_int,
    max_dtls: c_int,
}

static NUMBERS: [Numbers; 3] = [
    Numbers {
        code_point: 0x0904,
        sec_bits: 128,
        min_tls: TLS1_3_VERSION,
        max_tls: 0,
        min_dtls: -1,
        max_dtls: -1,
    },
    Numbers {
        code_point: 0x0905,
        sec_bits: 192,
        min_tls: TLS1_3_VERSION,
        max_tls: 0,
        min_dtls: -1,
        max_dtls: -1,
    },
    Numbers {
        code_point: 0x0906,
        sec_bits: 256,
        min_tls: TLS1_3_VERSION,
        max_tls: 0,
        min_dtls: -1,
        max_dtls: -1,
    },
];

const fn entry(
    iana: &'static CStr,
    name: &'static CStr,
    oid: &'static CStr,
    n: &'static Numbers,
) -> [Param; 10] {
    [
        text(c"tls-sigalg-iana-name", iana),
        text(c"tls-sigalg-name", name),
        text(c"tls-sigalg-oid", oid),
        num(
            c"tls-sigalg-code-point",
            abi::PARAM_UNSIGNED_INTEGER,
            &n.code_point,
        ),
        num(
            c"tls-sigalg-sec-bits",
            abi::PARAM_UNSIGNED_INTEGER,
            &n.sec_bits,
        ),
        num(c"tls-min-tls", abi::PARAM_INTEGER, &n.min_tls),
        num(c"tls-max-tls", abi::PARAM_INTEGER, &n.max_tls),
        num(c"tls-min-dtls", abi::PARAM_INTEGER, &n.min_dtls),
        num(c"tls-max-dtls", abi::PARAM_INTEGER, &n.max_dtls),
        abi::PARAM_END,
    ]
}

static SIGALGS: Table<[Param; 10], 3> = Table([
    entry(
        c"mldsa44",
        c"ML-DSA-44",
        c"2.16.840.1.101.3.4.3.17",
        &NUMBERS[0],
    ),
    entry(
        c"mldsa65",
        c"ML-DSA-65",
        c"2.16.840.1.101.3.4.3.18",
        &NUMBERS[1],
    ),
    entry(
        c"mldsa87",
        c"ML-DSA-87",
        c"2.16.840.1.101.3.4.3.19",
        &NUMBERS[2],
    ),
]);

/// `OSSL_FUNC_provider_get_capabilities`.
pub unsafe extern "C" fn get_capabilities(
    _provctx: *mut c_void,
    capability: *const c_char,
    cb: Option<Callback>,
    arg: *mut c_void,
) -> c_int {
    crate::guard::guard(0, || {
        let Some(cb) = cb else { return 0 };
        if capability.is_null() {
            return 0;
        }
        // SAFETY: a NUL-terminated capability name from OpenSSL.
        let name = unsafe { CStr::from_ptr(capability) };
        if name.to_bytes().eq_ignore_ascii_case(b"TLS-GROUP") {
            // SAFETY: OpenSSL's callback and argument.
            return unsafe { crate::tls_group::announce(cb, arg) };
        }
        if !name.to_bytes().eq_ignore_ascii_case(b"TLS-SIGALG") {
            return 1; // nothing else to announce
        }
        for e in &SIGALGS.0 {
            // SAFETY: a terminated static array; the callback copies what it keeps.
            if unsafe { cb(e.as_ptr(), arg) } == 0 {
                return 0;
            }
        }
        1
    })
}
