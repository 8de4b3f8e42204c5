//! Constant-time check of the vector kernels under valgrind's memcheck: the secret inputs are
//! marked undefined through memcheck's client request, so every branch, conditional move or
//! memory index that depends on them is reported as "depends on uninitialised value(s)".
//! Natively the client request is a no-op and the test only runs the kernels.
//!
//! The tests are `mldsa::sampling::tests::ct_check_vector_kernels` and
//! `ctru::poly::tests::ct_check_ctru_kernels`; run them with
//! `scripts/ct-memcheck.sh` (memcheck must report no error).

/// memcheck's MAKE_MEM_UNDEFINED / MAKE_MEM_DEFINED requests (valgrind.h, amd64 form).
fn client_request(request: u64, p: *const u8, len: usize) {
    let args: [u64; 6] = [request, p as u64, len as u64, 0, 0, 0];
    let mut res: u64 = 0;
    // SAFETY: valgrind's "special instruction" sequence: rdi is rotated by 128 bits in all
    // (unchanged) and xchg rbx, rbx is a no-op natively; under valgrind it reads `args`.
    unsafe {
        core::arch::asm!(
            "rol rdi, 3", "rol rdi, 13", "rol rdi, 61", "rol rdi, 51", "xchg rbx, rbx",
            inout("rdx") res, in("rax") args.as_ptr(), inout("rdi") 0u64 => _,
            options(nostack)
        );
    }
    let _ = res;
}

const MC: u64 = ((b'M' as u64) << 24) | ((b'C' as u64) << 16);

/// Marks `x` secret (undefined) for memcheck.
pub(crate) fn secret<T: ?Sized>(x: &T) {
    client_request(
        MC + 1,
        x as *const T as *const u8,
        core::mem::size_of_val(x),
    );
}

/// Marks `x` public (defined) again.
pub(crate) fn public<T: ?Sized>(x: &T) {
    client_request(
        MC + 2,
        x as *const T as *const u8,
        core::mem::size_of_val(x),
    );
}
