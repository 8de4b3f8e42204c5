//! OSSL_PARAM cells over static data, and the TLS version constant, for the capability tables
//! (`caps` for signature algorithms, `tls_group` for key-exchange groups).

use crate::abi::{self, Param};
use std::ffi::{c_int, c_uint, c_void, CStr};

pub(crate) const TLS1_3_VERSION: c_int = 0x0304;

pub(crate) const fn text(key: &'static CStr, v: &'static CStr) -> Param {
    Param {
        key: key.as_ptr(),
        data_type: abi::PARAM_UTF8_STRING,
        data: v.as_ptr() as *mut c_void,
        data_size: v.to_bytes_with_nul().len(),
        return_size: abi::PARAM_UNMODIFIED,
    }
}

pub(crate) const fn num<T>(key: &'static CStr, data_type: c_uint, v: &'static T) -> Param {
    Param {
        key: key.as_ptr(),
        data_type,
        data: v as *const T as *mut c_void,
        data_size: size_of::<T>(),
        return_size: abi::PARAM_UNMODIFIED,
    }
}
