//! Encoders and decoders for CTRU-Prime keys (OpenSSL has none for a private OID):
//! SubjectPublicKeyInfo and PKCS#8 PrivateKeyInfo, as DER or PEM. OpenSSL's own PEM and PKCS#8
//! decoders unwrap the PEM (and an encrypted PKCS#8) and name the key by its OID; these
//! decoders then take the DER. Unencrypted output only: an encoder asked for a cipher refuses.
//!
//! The private key inside PKCS#8 is `CtruPrivateKey ::= CHOICE { seed [0] IMPLICIT OCTET
//! STRING (SIZE (64)), expandedKey OCTET STRING }` (the shape of the ML-KEM private-key
//! format); written as `expandedKey` (sk = sk_pke || pk || z), read in either form.

use crate::abi::{self, Callback, Dispatch, Param, Table};
use crate::ctru_key::{self, Key};
use crate::der::{self, PrivateKey};
use crate::entry;
use crate::guard::guard;
use crate::key_family;
use crate::params::{status, Params};
use std::ffi::{c_int, c_void, CStr};
use std::ptr;

/// Structures: 0 = PrivateKeyInfo, 1 = SubjectPublicKeyInfo.
const PRIVATE: usize = 0;

/// The key part a structure holds, as a selection bit.
const fn mask(structure: usize) -> c_int {
    if structure == PRIVATE {
        abi::SELECT_PRIVATE_KEY
    } else {
        abi::SELECT_PUBLIC_KEY
    }
}

/// OpenSSL's rule (key2any / der2key `check_selection`): the first of private key, public key,
/// parameters that `selection` asks for decides; an empty selection means "anything".
fn selected(selection: c_int, structure: usize) -> bool {
    if selection == 0 {
        return true;
    }
    for bit in [
        abi::SELECT_PRIVATE_KEY,
        abi::SELECT_PUBLIC_KEY,
        abi::SELECT_ALL_PARAMETERS,
    ] {
        if selection & bit != 0 {
            return mask(structure) & bit != 0;
        }
    }
    false
}

/// Encoder and decoder contexts: whether a cipher was asked for (encoders refuse then).
#[derive(Default)]
struct CodecCtx {
    cipher: bool,
}

unsafe extern "C" fn newctx(_provctx: *mut c_void) -> *mut c_void {
    guard(ptr::null_mut(), || {
        Box::into_raw(Box::new(CodecCtx::default())).cast()
    })
}

unsafe extern "C" fn freectx(c: *mut c_void) {
    guard((), || {
        if !c.is_null() {
            // SAFETY: made by Box::into_raw in newctx; freed once.
            drop(unsafe { Box::from_raw(c as *mut CodecCtx) });
        }
    })
}

unsafe extern "C" fn set_ctx_params(c: *mut c_void, params: *const Param) -> c_int {
    guard(0, || {
        // SAFETY: our context and a terminated array.
        let (Some(c), p) = (unsafe { (c as *mut CodecCtx).as_mut() }, unsafe {
            Params::new(params)
        }) else {
            return 0;
        };
        match p.utf8(c"cipher") {
            Ok(Some(name)) => c.cipher = !name.is_empty(),
            Ok(None) => {}
            Err(_) => return 0,
        }
        1
    })
}

static ENC_SETTABLE: Table<Param, 3> = Table([
    abi::describe(c"cipher", abi::PARAM_UTF8_STRING),
    abi::describe(c"properties", abi::PARAM_UTF8_STRING),
    abi::PARAM_END,
]);

unsafe extern "C" fn enc_settable_ctx_params(_provctx: *mut c_void) -> *const Param {
    ENC_SETTABLE.as_ptr()
}

unsafe extern "C" fn does_selection<const T: usize>(
    _provctx: *mut c_void,
    selection: c_int,
) -> c_int {
    status(selected(selection, T))
}

/// The DER of `k` in structure `T`, or `None` when the key lacks that part.
fn encode_der<const T: usize>(k: &Key) -> Option<zeroize::Zeroizing<Vec<u8>>> {
    let oid = ctru_key::oid_der(k.set);
    if T == PRIVATE {
        Some(der::pkcs8(&oid, k.sk.as_ref()?))
    } else {
        Some(zeroize::Zeroizing::new(der::spki(&oid, k.pk.as_ref()?)))
    }
}

/// `T`: structure; `PEM`: 1 for PEM output, 0 for DER.
unsafe extern "C" fn encode<const T: usize, const PEM: usize>(
    c: *mut c_void,
    out: *mut c_void,
    obj: *const c_void,
    _abstract: *const Param,
    selection: c_int,
    _cb: *const c_void,
    _cbarg: *mut c_void,
) -> c_int {
    guard(0, || {
        // SAFETY: our context.
        let Some(c) = (unsafe { (c as *const CodecCtx).as_ref() }) else {
            return 0;
        };
        // SAFETY: the key of our key management that OpenSSL asks us to encode.
        let Some(k) = (unsafe { key_family::key::<Key>(obj) }) else {
            return 0;
        };
        if !selected(selection, T) || (T == PRIVATE && c.cipher) {
            return 0;
        }
        let Some(d) = encode_der::<T>(k) else {
            return 0;
        };
        let bytes = if PEM == 1 {
            der::pem(
                if T == PRIVATE {
                    "PRIVATE KEY"
                } else {
                    "PUBLIC KEY"
                },
                &d,
            )
        } else {
            d
        };
        status(crate::core::write_all(out, &bytes))
    })
}

unsafe extern "C" fn import_object<const S: usize>(
    _c: *mut c_void,
    selection: c_int,
    params: *const Param,
) -> *mut c_void {
    guard(ptr::null_mut(), || {
        // SAFETY: a terminated parameter array.
        let p = unsafe { Params::new(params) };
        let private = selection & abi::SELECT_PRIVATE_KEY != 0;
        match ctru_key::key_from_params(ctru_key::set_of(S), &p, private) {
            Some(k) => Box::into_raw(Box::new(k)).cast(),
            None => ptr::null_mut(),
        }
    })
}

// ---- decoders -------------------------------------------------------------------------------

/// Larger than any CTRU-Prime key's DER; more input is not ours.
const MAX_DER: usize = 8192;

/// A key of set `S` from DER in structure `T`, or `None` when the DER is not such a key.
fn decode_der<const S: usize, const T: usize>(d: &[u8]) -> Option<Key> {
    let set = ctru_key::set_of(S);
    let oid = ctru_key::oid_der(set);
    if T == PRIVATE {
        let (o, key) = der::parse_pkcs8(d)?;
        if o != oid {
            return None;
        }
        match key {
            PrivateKey::Expanded(sk) => Key::from_sk(set, sk),
            PrivateKey::Seed(seed) => Key::generate(set, Some(seed.try_into().ok()?)),
        }
    } else {
        let (o, pk) = der::parse_spki(d)?;
        if o != oid {
            return None;
        }
        Key::from_pk(set, pk)
    }
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn decode<const S: usize, const T: usize>(
    _c: *mut c_void,
    input: *mut c_void,
    selection: c_int,
    data_cb: Option<Callback>,
    data_cbarg: *mut c_void,
    _pw_cb: *const c_void,
    _pw_cbarg: *mut c_void,
) -> c_int {
    guard(0, || {
        let Some(data_cb) = data_cb else { return 0 };
        // Not ours, or unreadable: "empty-handed", which is not an error (OpenSSL's decoder
        // chain goes on to other decoders).
        if !selected(selection, T) {
            return 1;
        }
        let Some(d) = crate::core::read_all(input, MAX_DER) else {
            return 1;
        };
        let d = zeroize::Zeroizing::new(d);
        let Some(key) = decode_der::<S, T>(&d) else {
            return 1;
        };
        let mut obj: *mut Key = Box::into_raw(Box::new(key));
        let mut objtype: c_int = abi::OBJECT_PKEY;
        let name: &CStr = ctru_key::SHORT[S];
        let params = [
            Param {
                key: c"type".as_ptr(),
                data_type: abi::PARAM_INTEGER,
                data: (&mut objtype as *mut c_int).cast(),
                data_size: size_of::<c_int>(),
                return_size: abi::PARAM_UNMODIFIED,
            },
            Param {
                key: c"data-type".as_ptr(),
                data_type: abi::PARAM_UTF8_STRING,
                data: name.as_ptr() as *mut c_void,
                data_size: name.to_bytes().len(),
                return_size: abi::PARAM_UNMODIFIED,
            },
            Param {
                key: c"reference".as_ptr(),
                data_type: abi::PARAM_OCTET_STRING,
                data: (&mut obj as *mut *mut Key).cast(),
                data_size: size_of::<*mut Key>(),
                return_size: abi::PARAM_UNMODIFIED,
            },
            abi::PARAM_END,
        ];
        // SAFETY: OpenSSL's callback with a terminated array over locals that outlive it.
        // Our key management's `load` takes the key out of `obj` (setting it to NULL).
        let r = unsafe { data_cb(params.as_ptr(), data_cbarg) };
        if !obj.is_null() {
            // SAFETY: still ours: nobody loaded it.
            drop(unsafe { Box::from_raw(obj) });
        }
        r
    })
}

/// `OSSL_FUNC_decoder_export_object`: the referenced key's parameters, for a key management
/// of another provider (OpenSSL prefers ours, which loads the reference directly).
unsafe extern "C" fn export_object(
    _c: *mut c_void,
    reference: *const c_void,
    size: usize,
    cb: Option<Callback>,
    cbarg: *mut c_void,
) -> c_int {
    guard(0, || {
        let Some(cb) = cb else { return 0 };
        if reference.is_null() || size != size_of::<*mut Key>() {
            return 0;
        }
        // SAFETY: the reference is our decoder's pointer slot, live during this call.
        let k = unsafe { *(reference as *const *const Key) };
        // SAFETY: NULL or a boxed key made by our decoder.
        match unsafe { k.as_ref() } {
            // SAFETY: OpenSSL's callback and argument.
            Some(k) => unsafe { key_family::export_key(k, abi::SELECT_KEYPAIR, cb, cbarg) },
            None => 0,
        }
    })
}

// ---- tables ---------------------------------------------------------------------------------

const fn encoder<const S: usize, const T: usize, const PEM: usize>() -> [Dispatch; 9] {
    [
        entry!(abi::CODEC_NEWCTX, newctx),
        entry!(abi::CODEC_FREECTX, freectx),
        entry!(abi::CODEC_SET_CTX_PARAMS, set_ctx_params),
        entry!(abi::CODEC_SETTABLE_CTX_PARAMS, enc_settable_ctx_params),
        entry!(abi::CODEC_DOES_SELECTION, does_selection::<T>),
        entry!(abi::ENCODER_ENCODE, encode::<T, PEM>),
        entry!(abi::ENCODER_IMPORT_OBJECT, import_object::<S>),
        entry!(abi::ENCODER_FREE_OBJECT, key_family::free::<Key>),
        abi::DISPATCH_END,
    ]
}

const fn decoder<const S: usize, const T: usize>() -> [Dispatch; 6] {
    [
        entry!(abi::CODEC_NEWCTX, newctx),
        entry!(abi::CODEC_FREECTX, freectx),
        entry!(abi::CODEC_DOES_SELECTION, does_selection::<T>),
        entry!(abi::DECODER_DECODE, decode::<S, T>),
        entry!(abi::DECODER_EXPORT_OBJECT, export_object),
        abi::DISPATCH_END,
    ]
}

macro_rules! encoders_of {
    ($s:literal) => {
        [
            Table(encoder::<$s, 0, 0>()),
            Table(encoder::<$s, 0, 1>()),
            Table(encoder::<$s, 1, 0>()),
            Table(encoder::<$s, 1, 1>()),
        ]
    };
}

/// `ENCODERS[s][2 * structure + pem]`.
pub static ENCODERS: [[Table<Dispatch, 9>; 4]; 3] =
    [encoders_of!(0), encoders_of!(1), encoders_of!(2)];

/// `DECODERS[s][structure]`.
pub static DECODERS: [[Table<Dispatch, 6>; 2]; 3] = [
    [Table(decoder::<0, 0>()), Table(decoder::<0, 1>())],
    [Table(decoder::<1, 0>()), Table(decoder::<1, 1>())],
    [Table(decoder::<2, 0>()), Table(decoder::<2, 1>())],
];

/// Property strings, `ENC_PROPS[2 * structure + pem]` and `DEC_PROPS[structure]`.
pub const ENC_PROPS: [&CStr; 4] = [
    c"provider=pqgpu,output=der,structure=PrivateKeyInfo",
    c"provider=pqgpu,output=pem,structure=PrivateKeyInfo",
    c"provider=pqgpu,output=der,structure=SubjectPublicKeyInfo",
    c"provider=pqgpu,output=pem,structure=SubjectPublicKeyInfo",
];
pub const DEC_PROPS: [&CStr; 2] = [
    c"provider=pqgpu,input=der,structure=PrivateKeyInfo",
    c"provider=pqgpu,input=der,structure=SubjectPublicKeyInfo",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selection_follows_openssl() {
        let all = abi::SELECT_KEYPAIR | abi::SELECT_ALL_PARAMETERS;
        assert!(selected(0, 0) && selected(0, 1));
        assert!(selected(all, 0) && !selected(all, 1));
        assert!(!selected(abi::SELECT_PUBLIC_KEY, 0) && selected(abi::SELECT_PUBLIC_KEY, 1));
        assert!(!selected(abi::SELECT_ALL_PARAMETERS, 1));
    }

    #[test]
    fn keys_round_trip_through_der() {
        let k = Key::generate(pqgpu::ctru::ParamSet::Ctru761, Some(&[3u8; 64])).unwrap();
        let priv_der = encode_der::<0>(&k).unwrap();
        let pub_der = encode_der::<1>(&k).unwrap();
        let back = decode_der::<1, 0>(&priv_der).expect("761 private key");
        assert_eq!(
            back.sk.as_deref().map(|s| &s[..]),
            k.sk.as_deref().map(|s| &s[..])
        );
        assert_eq!(back.pk, k.pk);
        assert_eq!(decode_der::<1, 1>(&pub_der).unwrap().pk, k.pk);
        // Another set's decoder, or the other structure, does not take it.
        assert!(decode_der::<0, 0>(&priv_der).is_none());
        assert!(decode_der::<2, 1>(&pub_der).is_none());
        assert!(decode_der::<1, 1>(&priv_der).is_none());
    }
}
