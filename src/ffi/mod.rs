//! The C ABI (`include/pqgpu.h`): the only place with `extern "C"`.
