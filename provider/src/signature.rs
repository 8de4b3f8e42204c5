//! ML-DSA signatures under OpenSSL 3.5's names and context parameters: one-shot message
//! signing (`EVP_PKEY_sign_message_*`) and one-shot digest signing with no digest
//! (`EVP_DigestSign*`, as X.509 uses), `context-string`, `deterministic`, `test-entropy`,
//! `mu`, `message-encoding`, and the X.509 `algorithm-id`.

use crate::abi::{self, Dispatch, Param, Table};
use crate::engine::{self, Handle};
use crate::guard::guard;
use crate::keymgmt::Key;
use crate::params::{status, Params};
use crate::{entry, set_of};
use pqgpu::mldsa::{Message, ParamSet};
use std::ffi::{c_char, c_int, c_void, CStr};
use std::ptr;
use zeroize::Zeroizing;

/// One signing or verification context. `key` is borrowed: OpenSSL keeps the key alive while
/// a context uses it (as for its own ML-DSA).
#[derive(Clone)]
struct SigCtx {
    set: ParamSet,
    key: *const Key,
    context: Vec<u8>,
    test_entropy: Option<Zeroizing<[u8; 32]>>,
    deterministic: bool,
    /// OpenSSL's message-encoding: 0 raw (the caller gives M'), 1 pure (the default).
    encoding: i32,
    mu: bool,
    /// The key's pqgpu handles as this context signs or verifies with them: taken once per
    /// init, not looked up through the key object per request (one cache line per request
    /// instead of three). Counted references, dropped with the context or at the next init.
    sk: Option<Handle>,
    pk: Option<Handle>,
}

/// DER of AlgorithmIdentifier { id-ml-dsa-NN } (RFC 9881: no parameters).
fn algorithm_id(set: ParamSet) -> [u8; 13] {
    let last = match set {
        // The provider registers ML-DSA only; round-3 sets never reach it.
        ParamSet::MlDsa44 | ParamSet::Dilithium2 => 0x11,
        ParamSet::MlDsa65 | ParamSet::Dilithium3 => 0x12,
        ParamSet::MlDsa87 | ParamSet::Dilithium5 => 0x13,
    };
    [
        0x30, 0x0b, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, last,
    ]
}

impl SigCtx {
    fn key(&self) -> Option<&Key> {
        // SAFETY: a key OpenSSL handed to init and keeps alive while this context uses it.
        unsafe { self.key.as_ref() }
    }

    /// Makes sure `self.sk` (`secret`) or `self.pk` holds the key's handle; false if the key
    /// has none or it cannot be made.
    fn take_handle(&mut self, secret: bool) -> bool {
        let have = if secret { &self.sk } else { &self.pk };
        if have.is_some() {
            return true;
        }
        let Some(k) = self.key() else { return false };
        let lazy = if secret {
            k.secret_handle()
        } else {
            k.public_handle()
        };
        let Some(Ok(h)) = lazy.map(|l| l.handle()) else {
            return false;
        };
        *(if secret { &mut self.sk } else { &mut self.pk }) = Some(h);
        true
    }

    fn set_params(&mut self, p: &Params) -> bool {
        match p.octets(c"context-string") {
            Ok(Some(c)) if c.len() <= 255 => self.context = c.to_vec(),
            Ok(Some(_)) | Err(_) => {
                self.context.clear();
                return false;
            }
            Ok(None) => {}
        }
        match p.octets(c"test-entropy") {
            Ok(Some(e)) => match <[u8; 32]>::try_from(e) {
                Ok(e) => self.test_entropy = Some(Zeroizing::new(e)),
                Err(_) => {
                    self.test_entropy = None;
                    return false;
                }
            },
            Ok(None) => {}
            Err(_) => return false,
        }
        let ints = [c"deterministic", c"message-encoding", c"mu"].map(|k| p.int(k));
        let [Ok(det), Ok(enc), Ok(mu)] = ints else {
            return false;
        };
        if let Some(d) = det {
            self.deterministic = d == 1;
        }
        if let Some(e) = enc {
            if !(0..=1).contains(&e) {
                return false;
            }
            self.encoding = e;
        }
        if let Some(m) = mu {
            self.mu = m != 0;
        }
        true
    }

    /// The message as OpenSSL passes it (`data`), read as the `mu` and `message-encoding`
    /// parameters say.
    fn message<'a>(&'a self, data: &'a [u8]) -> Message<'a> {
        if self.mu {
            Message::Mu(data)
        } else if self.encoding == 0 {
            Message::Internal(data)
        } else {
            Message::Pure {
                ctx: &self.context,
                msg: data,
            }
        }
    }

    fn init(&mut self, k: *mut c_void, params: *const Param) -> bool {
        if !k.is_null() {
            self.key = k as *const Key;
        }
        (self.sk, self.pk) = (None, None);
        if self.key().is_none_or(|k| k.set != self.set) {
            return false;
        }
        self.mu = false;
        // SAFETY: a terminated parameter array or NULL.
        self.set_params(&unsafe { Params::new(params) })
    }
}

/// # Safety
/// `c` must be NULL or a context made by this module.
unsafe fn ctx<'a>(c: *mut c_void) -> Option<&'a mut SigCtx> {
    // SAFETY: the caller's promise; OpenSSL does not share a context between threads.
    unsafe { (c as *mut SigCtx).as_mut() }
}

unsafe extern "C" fn newctx<const S: usize>(
    _provctx: *mut c_void,
    _propq: *const c_char,
) -> *mut c_void {
    guard(ptr::null_mut(), || {
        let c = SigCtx {
            set: set_of(S),
            key: ptr::null(),
            context: Vec::new(),
            test_entropy: None,
            deterministic: false,
            encoding: 1,
            mu: false,
            sk: None,
            pk: None,
        };
        Box::into_raw(Box::new(c)).cast()
    })
}

unsafe extern "C" fn freectx(c: *mut c_void) {
    guard((), || {
        if !c.is_null() {
            // SAFETY: made by Box::into_raw here; OpenSSL frees each context once.
            drop(unsafe { Box::from_raw(c as *mut SigCtx) });
        }
    })
}

unsafe extern "C" fn dupctx(c: *mut c_void) -> *mut c_void {
    guard(ptr::null_mut(), || {
        // SAFETY: a context of ours.
        match unsafe { ctx(c) } {
            Some(c) => Box::into_raw(Box::new(c.clone())).cast(),
            None => ptr::null_mut(),
        }
    })
}

unsafe extern "C" fn message_init(c: *mut c_void, k: *mut c_void, params: *const Param) -> c_int {
    guard(0, || {
        // SAFETY: a context of ours.
        unsafe { ctx(c) }.map_or(0, |c| status(c.init(k, params)))
    })
}

unsafe extern "C" fn digest_init(
    c: *mut c_void,
    mdname: *const c_char,
    k: *mut c_void,
    params: *const Param,
) -> c_int {
    guard(0, || {
        // SAFETY: a context of ours.
        let Some(c) = (unsafe { ctx(c) }) else {
            return 0;
        };
        // SAFETY: NULL or a NUL-terminated name.
        if !mdname.is_null() && !unsafe { CStr::from_ptr(mdname) }.is_empty() {
            return 0; // ML-DSA takes no external digest.
        }
        c.mu = false;
        if k.is_null() && !c.key.is_null() {
            // SAFETY: a terminated parameter array or NULL.
            return status(c.set_params(&unsafe { Params::new(params) }));
        }
        status(c.init(k, params))
    })
}

unsafe extern "C" fn sign(
    c: *mut c_void,
    sig: *mut u8,
    siglen: *mut usize,
    sigsize: usize,
    tbs: *const u8,
    tbslen: usize,
) -> c_int {
    guard(0, || {
        // SAFETY: a context of ours.
        let Some(c) = (unsafe { ctx(c) }) else {
            return 0;
        };
        if c.key().is_none() {
            return 0;
        }
        let len = c.set.signature_len();
        if siglen.is_null() {
            return 0;
        }
        if sig.is_null() {
            // SAFETY: non-NULL out-pointer from OpenSSL.
            unsafe { *siglen = len };
            return 1;
        }
        if sigsize < len || (tbs.is_null() && tbslen != 0) {
            return 0;
        }
        if !c.take_handle(true) {
            return 0;
        }
        let rnd = match (&c.test_entropy, c.deterministic) {
            (Some(e), _) => e.clone(),
            (None, true) => Zeroizing::new([0u8; 32]),
            (None, false) => match pqgpu::rng::array32() {
                Ok(r) => Zeroizing::new(r),
                Err(_) => return 0,
            },
        };
        // The message is read in place unless it shares bytes with the signature's buffer.
        let (t, s) = (tbs as usize, sig as usize);
        let copied = (tbslen != 0 && t < s + len && s < t + tbslen)
            // SAFETY: tbs points to tbslen readable bytes (OpenSSL's contract).
            .then(|| unsafe { bytes(tbs, tbslen) }.to_vec());
        // SAFETY: tbs points to tbslen readable bytes and sig to sigsize >= len writable ones
        // (OpenSSL's contract), OpenSSL's until this call returns; they do not overlap (else
        // the message is the copy).
        let (data, out) = unsafe {
            (
                copied.as_deref().unwrap_or_else(|| bytes(tbs, tbslen)),
                std::slice::from_raw_parts_mut(sig, len),
            )
        };
        let sk = c.sk.as_ref().expect("taken above");
        match engine::sign(sk, &c.message(data), &rnd, out) {
            Ok(()) => {
                // SAFETY: a writable out-pointer from OpenSSL.
                unsafe { *siglen = len };
                1
            }
            Err(_) => 0,
        }
    })
}

/// OpenSSL's (pointer, length) as a slice; empty for length 0 (the pointer may be NULL).
///
/// # Safety
/// For a non-zero length, `p` points to `len` readable bytes that stay valid and unwritten
/// for the lifetime chosen.
unsafe fn bytes<'a>(p: *const u8, len: usize) -> &'a [u8] {
    if len == 0 {
        &[]
    } else {
        // SAFETY: the caller's promise.
        unsafe { std::slice::from_raw_parts(p, len) }
    }
}

unsafe extern "C" fn verify(
    c: *mut c_void,
    sig: *const u8,
    siglen: usize,
    tbs: *const u8,
    tbslen: usize,
) -> c_int {
    guard(0, || {
        // SAFETY: a context of ours.
        let Some(c) = (unsafe { ctx(c) }) else {
            return 0;
        };
        if !c.take_handle(false) {
            return 0;
        }
        if (sig.is_null() && siglen != 0) || (tbs.is_null() && tbslen != 0) {
            return 0;
        }
        // SAFETY: OpenSSL's contract: sig/tbs point to siglen/tbslen readable bytes, OpenSSL's
        // until this call returns.
        let (s, data) = unsafe { (bytes(sig, siglen), bytes(tbs, tbslen)) };
        let pk = c.pk.as_ref().expect("taken above");
        status(engine::verify(pk, &c.message(data), s).is_ok())
    })
}

unsafe extern "C" fn set_ctx_params(c: *mut c_void, params: *const Param) -> c_int {
    guard(0, || {
        // SAFETY: a context of ours and a terminated array.
        unsafe { ctx(c) }.map_or(0, |c| status(c.set_params(&unsafe { Params::new(params) })))
    })
}

static SETTABLE: Table<Param, 6> = Table([
    abi::describe(c"context-string", abi::PARAM_OCTET_STRING),
    abi::describe(c"test-entropy", abi::PARAM_OCTET_STRING),
    abi::describe(c"deterministic", abi::PARAM_INTEGER),
    abi::describe(c"mu", abi::PARAM_INTEGER),
    abi::describe(c"message-encoding", abi::PARAM_INTEGER),
    abi::PARAM_END,
]);

unsafe extern "C" fn settable_ctx_params(_c: *mut c_void, _provctx: *mut c_void) -> *const Param {
    SETTABLE.as_ptr()
}

unsafe extern "C" fn get_ctx_params(c: *mut c_void, params: *mut Param) -> c_int {
    guard(0, || {
        // SAFETY: a context of ours and a terminated, writable array.
        let Some(c) = (unsafe { ctx(c) }) else {
            return 0;
        };
        status(
            unsafe { Params::new(params) }
                .set_octets(c"algorithm-id", &algorithm_id(c.set))
                .is_ok(),
        )
    })
}

static GETTABLE: Table<Param, 2> = Table([
    abi::describe(c"algorithm-id", abi::PARAM_OCTET_STRING),
    abi::PARAM_END,
]);

unsafe extern "C" fn gettable_ctx_params(_c: *mut c_void, _provctx: *mut c_void) -> *const Param {
    GETTABLE.as_ptr()
}

const fn functions<const S: usize>() -> [Dispatch; 16] {
    [
        entry!(abi::SIGNATURE_NEWCTX, newctx::<S>),
        entry!(abi::SIGNATURE_SIGN_MESSAGE_INIT, message_init),
        entry!(abi::SIGNATURE_SIGN, sign),
        entry!(abi::SIGNATURE_VERIFY_MESSAGE_INIT, message_init),
        entry!(abi::SIGNATURE_VERIFY, verify),
        entry!(abi::SIGNATURE_DIGEST_SIGN_INIT, digest_init),
        entry!(abi::SIGNATURE_DIGEST_SIGN, sign),
        entry!(abi::SIGNATURE_DIGEST_VERIFY_INIT, digest_init),
        entry!(abi::SIGNATURE_DIGEST_VERIFY, verify),
        entry!(abi::SIGNATURE_FREECTX, freectx),
        entry!(abi::SIGNATURE_DUPCTX, dupctx),
        entry!(abi::SIGNATURE_SET_CTX_PARAMS, set_ctx_params),
        entry!(abi::SIGNATURE_SETTABLE_CTX_PARAMS, settable_ctx_params),
        entry!(abi::SIGNATURE_GET_CTX_PARAMS, get_ctx_params),
        entry!(abi::SIGNATURE_GETTABLE_CTX_PARAMS, gettable_ctx_params),
        abi::DISPATCH_END,
    ]
}

pub static MLDSA44: Table<Dispatch, 16> = Table(functions::<0>());
pub static MLDSA65: Table<Dispatch, 16> = Table(functions::<1>());
pub static MLDSA87: Table<Dispatch, 16> = Table(functions::<2>());

#[cfg(test)]
mod tests {
    #[test]
    fn algorithm_id_is_rfc9881_der() {
        // 2.16.840.1.101.3.4.3.17 = 60 86 48 01 65 03 04 03 11, in a SEQUENCE with no parameters.
        let der = super::algorithm_id(pqgpu::mldsa::ParamSet::MlDsa44);
        assert_eq!(der[..4], [0x30, 0x0b, 0x06, 0x09]);
        assert_eq!(
            der[4..],
            [0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, 0x11]
        );
    }
}
