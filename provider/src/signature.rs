//! The signature operation for every signature family this provider serves (ML-DSA,
//! SLH-DSA) under OpenSSL 3.5's names and context parameters: one-shot message signing
//! (`EVP_PKEY_sign_message_*`) and one-shot digest signing with no digest (`EVP_DigestSign*`,
//! as X.509 and CMS use), `context-string`, `deterministic`, `test-entropy`,
//! `message-encoding`, ML-DSA's `mu`, and the X.509 `algorithm-id`. Each family's key says
//! how it signs (`SigKey`); the context here handles OpenSSL's calling conventions.

use crate::abi::{self, Dispatch, Param, Table};
use crate::entry;
use crate::guard::guard;
use crate::params::{status, Params};
use crate::sig_key::{Request, Rnd, SigKey};
use std::ffi::{c_char, c_int, c_void, CStr};
use std::ptr;
use zeroize::Zeroizing;

/// One signing or verification context. `key` is borrowed: OpenSSL keeps the key alive while
/// a context uses it (as for its own ML-DSA and SLH-DSA).
struct SigCtx<K: SigKey> {
    /// The parameter set: the index of this operation's table in the family's row.
    index: usize,
    key: *const K,
    context: Vec<u8>,
    test_entropy: Option<Zeroizing<Vec<u8>>>,
    deterministic: bool,
    /// OpenSSL's message-encoding: 0 raw (the caller gives M'), 1 pure (the default).
    encoding: i32,
    mu: bool,
    /// The key as this context signs or verifies with it (ML-DSA: its pqgpu handles), taken
    /// once per init, not looked up through the key object per request (one cache line per
    /// request instead of three). Dropped with the context or at the next init.
    sk: Option<K::Prepared>,
    pk: Option<K::Prepared>,
}

impl<K: SigKey> Clone for SigCtx<K> {
    fn clone(&self) -> Self {
        SigCtx {
            index: self.index,
            key: self.key,
            context: self.context.clone(),
            test_entropy: self.test_entropy.clone(),
            deterministic: self.deterministic,
            encoding: self.encoding,
            mu: self.mu,
            sk: self.sk.clone(),
            pk: self.pk.clone(),
        }
    }
}

impl<K: SigKey> SigCtx<K> {
    fn key(&self) -> Option<&K> {
        // SAFETY: a key OpenSSL handed to init and keeps alive while this context uses it.
        unsafe { self.key.as_ref() }
    }

    /// Makes sure `self.sk` (`secret`) or `self.pk` holds the prepared key; false if the key
    /// has no such part or it cannot be made ready.
    fn take_key(&mut self, secret: bool) -> bool {
        let have = if secret { &self.sk } else { &self.pk };
        if have.is_some() {
            return true;
        }
        let Some(prepared) = self.key().and_then(|k| k.prepare(secret)) else {
            return false;
        };
        *(if secret { &mut self.sk } else { &mut self.pk }) = Some(prepared);
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
            Ok(Some(e)) if e.len() == K::entropy_len(self.index) => {
                self.test_entropy = Some(Zeroizing::new(e.to_vec()))
            }
            Ok(Some(_)) => {
                self.test_entropy = None;
                return false;
            }
            Ok(None) => {}
            Err(_) => return false,
        }
        let ints = [c"deterministic", c"message-encoding"].map(|k| p.int(k));
        let [Ok(det), Ok(enc)] = ints else {
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
        if K::TAKES_MU {
            match p.int(c"mu") {
                Ok(Some(m)) => self.mu = m != 0,
                Ok(None) => {}
                Err(_) => return false,
            }
        }
        true
    }

    /// The request for OpenSSL's message `data`, as the parameters say to read it.
    fn request<'a>(&'a self, data: &'a [u8]) -> Request<'a> {
        Request {
            data,
            context: &self.context,
            raw: self.encoding == 0,
            mu: self.mu,
        }
    }

    fn init(&mut self, k: *mut c_void, params: *const Param) -> bool {
        if !k.is_null() {
            self.key = k as *const K;
        }
        (self.sk, self.pk) = (None, None);
        if self.key().is_none_or(|k| !k.is_set(self.index)) {
            return false;
        }
        self.mu = false;
        // SAFETY: a terminated parameter array or NULL.
        self.set_params(&unsafe { Params::new(params) })
    }
}

/// # Safety
/// `c` must be NULL or a context of family `K` made by this module.
unsafe fn ctx<'a, K: SigKey>(c: *mut c_void) -> Option<&'a mut SigCtx<K>> {
    // SAFETY: the caller's promise; OpenSSL does not share a context between threads.
    unsafe { (c as *mut SigCtx<K>).as_mut() }
}

unsafe extern "C" fn newctx<K: SigKey, const S: usize>(
    _provctx: *mut c_void,
    _propq: *const c_char,
) -> *mut c_void {
    guard(ptr::null_mut(), || {
        let c = SigCtx::<K> {
            index: S,
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

unsafe extern "C" fn freectx<K: SigKey>(c: *mut c_void) {
    guard((), || {
        if !c.is_null() {
            // SAFETY: made by Box::into_raw here; OpenSSL frees each context once.
            drop(unsafe { Box::from_raw(c as *mut SigCtx<K>) });
        }
    })
}

unsafe extern "C" fn dupctx<K: SigKey>(c: *mut c_void) -> *mut c_void {
    guard(ptr::null_mut(), || {
        // SAFETY: a context of ours.
        match unsafe { ctx::<K>(c) } {
            Some(c) => Box::into_raw(Box::new(c.clone())).cast(),
            None => ptr::null_mut(),
        }
    })
}

unsafe extern "C" fn message_init<K: SigKey>(
    c: *mut c_void,
    k: *mut c_void,
    params: *const Param,
) -> c_int {
    guard(0, || {
        // SAFETY: a context of ours.
        unsafe { ctx::<K>(c) }.map_or(0, |c| status(c.init(k, params)))
    })
}

unsafe extern "C" fn digest_init<K: SigKey>(
    c: *mut c_void,
    mdname: *const c_char,
    k: *mut c_void,
    params: *const Param,
) -> c_int {
    guard(0, || {
        // SAFETY: a context of ours.
        let Some(c) = (unsafe { ctx::<K>(c) }) else {
            return 0;
        };
        // SAFETY: NULL or a NUL-terminated name.
        if !mdname.is_null() && !unsafe { CStr::from_ptr(mdname) }.is_empty() {
            return 0; // Neither ML-DSA nor SLH-DSA takes an external digest.
        }
        c.mu = false;
        if k.is_null() && !c.key.is_null() {
            // SAFETY: a terminated parameter array or NULL.
            return status(c.set_params(&unsafe { Params::new(params) }));
        }
        status(c.init(k, params))
    })
}

unsafe extern "C" fn sign<K: SigKey>(
    c: *mut c_void,
    sig: *mut u8,
    siglen: *mut usize,
    sigsize: usize,
    tbs: *const u8,
    tbslen: usize,
) -> c_int {
    guard(0, || {
        // SAFETY: a context of ours.
        let Some(c) = (unsafe { ctx::<K>(c) }) else {
            return 0;
        };
        if c.key().is_none() {
            return 0;
        }
        let len = K::signature_len(c.index);
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
        if !c.take_key(true) {
            return 0;
        }
        let rnd = match (&c.test_entropy, c.deterministic) {
            (Some(e), _) => Rnd::Given(&e[..]),
            (None, true) => Rnd::Deterministic,
            (None, false) => Rnd::Fresh,
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
        match K::sign(sk, &c.request(data), rnd, out) {
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

unsafe extern "C" fn verify<K: SigKey>(
    c: *mut c_void,
    sig: *const u8,
    siglen: usize,
    tbs: *const u8,
    tbslen: usize,
) -> c_int {
    guard(0, || {
        // SAFETY: a context of ours.
        let Some(c) = (unsafe { ctx::<K>(c) }) else {
            return 0;
        };
        if !c.take_key(false) {
            return 0;
        }
        if (sig.is_null() && siglen != 0) || (tbs.is_null() && tbslen != 0) {
            return 0;
        }
        // SAFETY: OpenSSL's contract: sig/tbs point to siglen/tbslen readable bytes, OpenSSL's
        // until this call returns.
        let (s, data) = unsafe { (bytes(sig, siglen), bytes(tbs, tbslen)) };
        let pk = c.pk.as_ref().expect("taken above");
        status(K::verify(pk, &c.request(data), s).is_ok())
    })
}

unsafe extern "C" fn set_ctx_params<K: SigKey>(c: *mut c_void, params: *const Param) -> c_int {
    guard(0, || {
        // SAFETY: a context of ours and a terminated array.
        unsafe { ctx::<K>(c) }.map_or(0, |c| status(c.set_params(&unsafe { Params::new(params) })))
    })
}

unsafe extern "C" fn settable_ctx_params<K: SigKey>(
    _c: *mut c_void,
    _provctx: *mut c_void,
) -> *const Param {
    K::settable()
}

unsafe extern "C" fn get_ctx_params<K: SigKey>(c: *mut c_void, params: *mut Param) -> c_int {
    guard(0, || {
        // SAFETY: a context of ours and a terminated, writable array.
        let Some(c) = (unsafe { ctx::<K>(c) }) else {
            return 0;
        };
        status(
            unsafe { Params::new(params) }
                .set_octets(c"algorithm-id", &K::algorithm_id(c.index))
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

/// The signature dispatch table for keys of family `K`, parameter set `S` of its row.
pub const fn functions<K: SigKey, const S: usize>() -> [Dispatch; 16] {
    [
        entry!(abi::SIGNATURE_NEWCTX, newctx::<K, S>),
        entry!(abi::SIGNATURE_SIGN_MESSAGE_INIT, message_init::<K>),
        entry!(abi::SIGNATURE_SIGN, sign::<K>),
        entry!(abi::SIGNATURE_VERIFY_MESSAGE_INIT, message_init::<K>),
        entry!(abi::SIGNATURE_VERIFY, verify::<K>),
        entry!(abi::SIGNATURE_DIGEST_SIGN_INIT, digest_init::<K>),
        entry!(abi::SIGNATURE_DIGEST_SIGN, sign::<K>),
        entry!(abi::SIGNATURE_DIGEST_VERIFY_INIT, digest_init::<K>),
        entry!(abi::SIGNATURE_DIGEST_VERIFY, verify::<K>),
        entry!(abi::SIGNATURE_FREECTX, freectx::<K>),
        entry!(abi::SIGNATURE_DUPCTX, dupctx::<K>),
        entry!(abi::SIGNATURE_SET_CTX_PARAMS, set_ctx_params::<K>),
        entry!(abi::SIGNATURE_SETTABLE_CTX_PARAMS, settable_ctx_params::<K>),
        entry!(abi::SIGNATURE_GET_CTX_PARAMS, get_ctx_params::<K>),
        entry!(abi::SIGNATURE_GETTABLE_CTX_PARAMS, gettable_ctx_params),
        abi::DISPATCH_END,
    ]
}

/// ML-DSA-44/65/87.
pub static ML_DSA: [Table<Dispatch, 16>; 3] = [
    Table(functions::<crate::mldsa_key::Key, 0>()),
    Table(functions::<crate::mldsa_key::Key, 1>()),
    Table(functions::<crate::mldsa_key::Key, 2>()),
];

/// The twelve SLH-DSA sets, in `pqgpu::slhdsa::ParamSet::ALL`'s order.
pub static SLH_DSA: [Table<Dispatch, 16>; 12] = [
    Table(functions::<crate::slhdsa_key::Key, 0>()),
    Table(functions::<crate::slhdsa_key::Key, 1>()),
    Table(functions::<crate::slhdsa_key::Key, 2>()),
    Table(functions::<crate::slhdsa_key::Key, 3>()),
    Table(functions::<crate::slhdsa_key::Key, 4>()),
    Table(functions::<crate::slhdsa_key::Key, 5>()),
    Table(functions::<crate::slhdsa_key::Key, 6>()),
    Table(functions::<crate::slhdsa_key::Key, 7>()),
    Table(functions::<crate::slhdsa_key::Key, 8>()),
    Table(functions::<crate::slhdsa_key::Key, 9>()),
    Table(functions::<crate::slhdsa_key::Key, 10>()),
    Table(functions::<crate::slhdsa_key::Key, 11>()),
];
