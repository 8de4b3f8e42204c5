//! Reading and writing OpenSSL's `OSSL_PARAM` arrays (the provider ABI's key-value lists),
//! with the same rules as OpenSSL's own `OSSL_PARAM_get_*` / `OSSL_PARAM_set_*`.

use crate::abi::{self, Param};
use std::ffi::{c_int, CStr};
use std::ptr;

/// A parameter array from the core, or NULL (no parameters).
#[derive(Clone, Copy)]
pub struct Params(*mut Param);

/// Why a parameter could not be read or written.
#[derive(Debug, PartialEq, Eq)]
pub struct BadParam;

impl Params {
    /// # Safety
    /// `p` must be NULL or an array terminated by an entry with a NULL key, valid for as long
    /// as this value is used.
    pub unsafe fn new(p: *const Param) -> Params {
        Params(p as *mut Param)
    }

    /// The entry named `key`, if any.
    pub fn find(&self, key: &CStr) -> Option<*mut Param> {
        if self.0.is_null() {
            return None;
        }
        let mut p = self.0;
        // SAFETY: the array is terminated by a NULL key (constructor's promise).
        unsafe {
            while !(*p).key.is_null() {
                if CStr::from_ptr((*p).key) == key {
                    return Some(p);
                }
                p = p.add(1);
            }
        }
        None
    }

    /// An octet string parameter's bytes (`OSSL_PARAM_get_octet_string_ptr`).
    pub fn octets(&self, key: &CStr) -> Result<Option<&[u8]>, BadParam> {
        let Some(p) = self.find(key) else {
            return Ok(None);
        };
        // SAFETY: `p` is an entry of the array; its data/size describe the caller's buffer.
        let p = unsafe { &*p };
        let data: *const u8 = match p.data_type {
            abi::PARAM_OCTET_STRING => p.data as *const u8,
            // SAFETY: an OCTET_PTR's data is a pointer to the bytes' address.
            abi::PARAM_OCTET_PTR if !p.data.is_null() => unsafe { *(p.data as *const *const u8) },
            _ => return Err(BadParam),
        };
        if p.data_size == 0 {
            return Ok(Some(&[]));
        }
        if data.is_null() {
            return Err(BadParam);
        }
        // SAFETY: non-NULL data of data_size bytes, the caller's promise for the array.
        Ok(Some(unsafe {
            std::slice::from_raw_parts(data, p.data_size)
        }))
    }

    /// An integer parameter (`OSSL_PARAM_get_int`): signed or unsigned, 4 or 8 bytes.
    pub fn int(&self, key: &CStr) -> Result<Option<i32>, BadParam> {
        let Some(p) = self.find(key) else {
            return Ok(None);
        };
        // SAFETY: as in `octets`.
        let p = unsafe { &*p };
        if p.data.is_null() {
            return Err(BadParam);
        }
        // SAFETY: data points to data_size bytes; read_unaligned since alignment is not promised.
        let v: i64 = unsafe {
            match (p.data_type, p.data_size) {
                (abi::PARAM_INTEGER, 4) => ptr::read_unaligned(p.data as *const i32) as i64,
                (abi::PARAM_INTEGER, 8) => ptr::read_unaligned(p.data as *const i64),
                (abi::PARAM_UNSIGNED_INTEGER, 4) => {
                    ptr::read_unaligned(p.data as *const u32) as i64
                }
                (abi::PARAM_UNSIGNED_INTEGER, 8) => {
                    i64::try_from(ptr::read_unaligned(p.data as *const u64))
                        .map_err(|_| BadParam)?
                }
                _ => return Err(BadParam),
            }
        };
        i32::try_from(v).map(Some).map_err(|_| BadParam)
    }

    /// A UTF-8 string parameter.
    pub fn utf8(&self, key: &CStr) -> Result<Option<String>, BadParam> {
        let Some(p) = self.find(key) else {
            return Ok(None);
        };
        // SAFETY: as in `octets`.
        let p = unsafe { &*p };
        let data: *const u8 = match p.data_type {
            abi::PARAM_UTF8_STRING => p.data as *const u8,
            // SAFETY: a UTF8_PTR's data is a pointer to the string's address.
            abi::PARAM_UTF8_PTR if !p.data.is_null() => unsafe { *(p.data as *const *const u8) },
            _ => return Err(BadParam),
        };
        if data.is_null() {
            return Err(BadParam);
        }
        // SAFETY: data_size bytes (the terminating NUL not counted, or counted: cut at a NUL).
        let bytes = unsafe { std::slice::from_raw_parts(data, p.data_size) };
        let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
        String::from_utf8(bytes[..end].to_vec())
            .map(Some)
            .map_err(|_| BadParam)
    }

    /// Sets `key` to `v` if the array asks for it (`OSSL_PARAM_set_int`).
    pub fn set_int(&self, key: &CStr, v: i32) -> Result<(), BadParam> {
        let Some(p) = self.find(key) else {
            return Ok(());
        };
        // SAFETY: `p` is an entry of a writable array (get_params' contract).
        let p = unsafe { &mut *p };
        match p.data_type {
            abi::PARAM_INTEGER | abi::PARAM_UNSIGNED_INTEGER => {}
            _ => return Err(BadParam),
        }
        if p.data_type == abi::PARAM_UNSIGNED_INTEGER && v < 0 {
            return Err(BadParam);
        }
        if p.data.is_null() {
            p.return_size = if p.data_size == 8 { 8 } else { 4 };
            return Ok(());
        }
        // SAFETY: data holds data_size writable bytes.
        unsafe {
            match p.data_size {
                4 => ptr::write_unaligned(p.data as *mut i32, v),
                8 => ptr::write_unaligned(p.data as *mut i64, v as i64),
                _ => return Err(BadParam),
            }
        }
        p.return_size = p.data_size;
        Ok(())
    }

    /// Sets `key` to the bytes `v` (`OSSL_PARAM_set_octet_string`); a NULL buffer learns the size.
    pub fn set_octets(&self, key: &CStr, v: &[u8]) -> Result<(), BadParam> {
        let Some(p) = self.find(key) else {
            return Ok(());
        };
        // SAFETY: as in `set_int`.
        let p = unsafe { &mut *p };
        match p.data_type {
            abi::PARAM_OCTET_STRING => {
                p.return_size = v.len();
                if p.data.is_null() {
                    return Ok(());
                }
                if p.data_size < v.len() {
                    return Err(BadParam);
                }
                // SAFETY: data holds data_size >= v.len() writable bytes, not overlapping v.
                unsafe { ptr::copy_nonoverlapping(v.as_ptr(), p.data as *mut u8, v.len()) };
                Ok(())
            }
            abi::PARAM_OCTET_PTR => {
                p.return_size = v.len();
                if p.data.is_null() {
                    return Ok(());
                }
                // SAFETY: an OCTET_PTR's data is where the pointer goes; `v` outlives the
                // caller's use (it is the key's own storage).
                unsafe { *(p.data as *mut *const u8) = v.as_ptr() };
                Ok(())
            }
            _ => Err(BadParam),
        }
    }

    /// Sets `key` to a static string (`OSSL_PARAM_set_utf8_string` / `_ptr`).
    /// Sets a UTF-8 string parameter to a copy of `v` (a `PARAM_UTF8_STRING` only: `v` does
    /// not live long enough to be pointed at).
    pub fn set_utf8_copy(&self, key: &CStr, v: &str) -> Result<(), BadParam> {
        let Some(p) = self.find(key) else {
            return Ok(());
        };
        // SAFETY: as in `set_int`.
        let p = unsafe { &mut *p };
        if p.data_type != abi::PARAM_UTF8_STRING {
            return Err(BadParam);
        }
        p.return_size = v.len();
        if p.data.is_null() {
            return Ok(());
        }
        if p.data_size < v.len() {
            return Err(BadParam);
        }
        // SAFETY: data holds data_size writable bytes; the NUL only when it fits.
        unsafe {
            ptr::copy_nonoverlapping(v.as_ptr(), p.data as *mut u8, v.len());
            if p.data_size > v.len() {
                *(p.data as *mut u8).add(v.len()) = 0;
            }
        }
        Ok(())
    }

    pub fn set_utf8(&self, key: &CStr, v: &'static CStr) -> Result<(), BadParam> {
        let Some(p) = self.find(key) else {
            return Ok(());
        };
        // SAFETY: as in `set_int`.
        let p = unsafe { &mut *p };
        let bytes = v.to_bytes();
        match p.data_type {
            abi::PARAM_UTF8_STRING => {
                p.return_size = bytes.len();
                if p.data.is_null() {
                    return Ok(());
                }
                if p.data_size < bytes.len() {
                    return Err(BadParam);
                }
                // SAFETY: data holds data_size writable bytes; the NUL only when it fits.
                unsafe {
                    ptr::copy_nonoverlapping(bytes.as_ptr(), p.data as *mut u8, bytes.len());
                    if p.data_size > bytes.len() {
                        *(p.data as *mut u8).add(bytes.len()) = 0;
                    }
                }
                Ok(())
            }
            abi::PARAM_UTF8_PTR => {
                p.return_size = bytes.len();
                if !p.data.is_null() {
                    // SAFETY: data is where the pointer goes; the string is static.
                    unsafe { *(p.data as *mut *const u8) = v.as_ptr() as *const u8 };
                }
                Ok(())
            }
            _ => Err(BadParam),
        }
    }
}

/// An octet-string parameter over `data`, for arrays this provider hands to a callback.
pub fn octet_param(key: &'static CStr, data: &[u8]) -> Param {
    Param {
        key: key.as_ptr(),
        data_type: abi::PARAM_OCTET_STRING,
        data: data.as_ptr() as *mut _,
        data_size: data.len(),
        return_size: abi::PARAM_UNMODIFIED,
    }
}

/// 1 for success, 0 for failure: OpenSSL's convention.
pub fn status(ok: bool) -> c_int {
    c_int::from(ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_writes_like_openssl() {
        let seed = [7u8; 32];
        let mut bits: i32 = 0;
        let mut name = [0u8; 8];
        let mut out = [0u8; 4];
        let mut arr = [
            octet_param(c"seed", &seed),
            Param {
                key: c"bits".as_ptr(),
                data_type: abi::PARAM_INTEGER,
                data: (&mut bits as *mut i32).cast(),
                data_size: 4,
                return_size: 0,
            },
            Param {
                key: c"name".as_ptr(),
                data_type: abi::PARAM_UTF8_STRING,
                data: name.as_mut_ptr().cast(),
                data_size: 8,
                return_size: 0,
            },
            Param {
                key: c"out".as_ptr(),
                data_type: abi::PARAM_OCTET_STRING,
                data: out.as_mut_ptr().cast(),
                data_size: 4,
                return_size: 0,
            },
            abi::PARAM_END,
        ];
        // SAFETY: a terminated array over live locals.
        let p = unsafe { Params::new(arr.as_mut_ptr()) };
        assert_eq!(p.octets(c"seed").unwrap(), Some(&seed[..]));
        assert_eq!(p.octets(c"priv").unwrap(), None);
        assert!(p.int(c"seed").is_err());
        p.set_int(c"bits", 10496).unwrap();
        assert_eq!(p.int(c"bits").unwrap(), Some(10496));
        p.set_utf8(c"name", c"abc").unwrap();
        assert!(p.set_utf8(c"name", c"too long!").is_err());
        assert!(p.set_octets(c"out", &[1u8; 5]).is_err());
        p.set_octets(c"out", &[1u8; 3]).unwrap();
        assert_eq!(arr[3].return_size, 3);
        assert_eq!(&name[..4], b"abc\0");
        assert_eq!(out, [1, 1, 1, 0]);
    }
}
