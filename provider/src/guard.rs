//! The panic boundary: no panic unwinds into OpenSSL; a caught one reads as a failed call.

use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs an entry point's body; a panic gives `fallback` (0 or NULL: OpenSSL's "failed").
pub fn guard<T>(fallback: T, body: impl FnOnce() -> T) -> T {
    // AssertUnwindSafe: after a panic the body's state is dropped, never observed again.
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(v) => v,
        Err(payload) => {
            // Dropping the payload runs foreign code (its Drop); keep that inside a guard too.
            let _ = catch_unwind(AssertUnwindSafe(move || drop(payload)));
            fallback
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_panic_becomes_the_fallback() {
        assert_eq!(super::guard(0, || -> i32 { panic!("boom") }), 0);
        assert_eq!(super::guard(0, || 1), 1);
    }
}
