//! Typed device memory and kernel handles: the vocabulary every launch is written in.
//!
//! * [`Dev<T>`]: the address of device memory holding `T`s (a worker's pooled buffer, an
//!   offset into one, or null where a kernel documents a null meaning). Copy, like the raw
//!   pointer a kernel takes; the element type is checked against the kernel's parameter.
//! * [`Kernel`]: one kernel function, resolved when its module loads (never by name at launch).
//! * [`kernel_table!`]: a family's kernels as named fields, all resolved at load.
//!
//! Each family writes one launcher per kernel (`gpu/mldsa/kernels.rs`, `gpu/ctru/kernels.rs`):
//! a method whose parameters are the kernel's, in order, typed.

use cudarc::driver::CudaFunction;
use std::marker::PhantomData;

/// Device memory holding elements of type `T`, by address.
pub struct Dev<T> {
    addr: u64,
    _elem: PhantomData<fn() -> T>,
}

impl<T> Clone for Dev<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Dev<T> {}

impl<T> std::fmt::Debug for Dev<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Dev<{}>({:#x})", std::any::type_name::<T>(), self.addr)
    }
}

impl<T> Dev<T> {
    /// Device address `addr` (from the worker's allocator, or a registered host address the
    /// device can use).
    pub(crate) fn at(addr: u64) -> Dev<T> {
        Dev {
            addr,
            _elem: PhantomData,
        }
    }

    /// The null pointer (for kernel parameters whose null has a documented meaning).
    pub fn null() -> Dev<T> {
        Dev::at(0)
    }

    pub fn addr(self) -> u64 {
        self.addr
    }

    /// The address `elems` elements further on.
    pub fn add(self, elems: usize) -> Dev<T> {
        Dev::at(self.addr + (elems * std::mem::size_of::<T>()) as u64)
    }

    /// The same memory seen as `U`s (a kernel that reads a buffer in another unit).
    pub fn cast<U>(self) -> Dev<U> {
        Dev::at(self.addr)
    }
}

/// A kernel argument as the driver receives it: a 64-bit pointer or a 32-bit scalar.
#[derive(Clone, Copy)]
pub enum Arg {
    P(u64),
    U(u32),
}

impl<T> From<Dev<T>> for Arg {
    fn from(d: Dev<T>) -> Arg {
        Arg::P(d.addr)
    }
}

impl From<u32> for Arg {
    fn from(v: u32) -> Arg {
        Arg::U(v)
    }
}

/// A kernel function of a loaded module, with its name (for profiles and errors).
pub struct Kernel {
    pub(crate) f: CudaFunction,
    pub(crate) name: &'static str,
}

/// Declares a struct with one [`Kernel`] field per kernel of a family, `NAMES` (every kernel
/// the module must export) and `resolve` (looks each up once, when the module loads).
macro_rules! kernel_table {
    ($(#[$m:meta])* $vis:vis struct $name:ident { $($k:ident),* $(,)? }) => {
        $(#[$m])*
        $vis struct $name {
            $($k: $crate::gpu::launch::Kernel,)*
        }

        impl $name {
            /// Every kernel of the table, by its `extern "C"` name.
            #[allow(dead_code)]
            pub const NAMES: &'static [&'static str] = &[$(stringify!($k)),*];

            /// Resolves every kernel of `module`; the error names the missing one.
            pub fn resolve(module: &$crate::gpu::nvrtc::Module) -> Result<Self, String> {
                Ok($name {
                    $($k: module.kernel(stringify!($k))?,)*
                })
            }
        }
    };
}
pub(crate) use kernel_table;

/// Blocks of `per_block` threads to cover `threads` threads.
pub fn blocks(threads: usize, per_block: u32) -> usize {
    threads.div_ceil(per_block as usize)
}

/// A task or item count as the kernels' `u32` (chunks are far below 2^32 items).
pub fn n32(n: usize) -> u32 {
    n as u32
}
