#!/usr/bin/env bash
# Fetches NVIDIA's runtime compiler (libnvrtc, the `nvidia-cuda-nvrtc-cu12` wheel from PyPI) so
# that the kernels' compile tests run on a machine without a GPU or CUDA: every kernel of every
# parameter set compiled for sm_90 (`kernels_compile_for_hopper` in gpu/mldsa, gpu/mlkem,
# gpu/slhdsa, gpu/ctru; they skip, saying so, where libnvrtc is missing). Needs python3 with
# venv (as the PKCS#11 client tests do). Kept in ${PQGPU_NVRTC_CACHE:-$HOME/.cache/pqgpu/nvrtc};
# prints the directory holding libnvrtc.so on the last line, or nothing when it cannot fetch it.
set -euo pipefail

version="12.9.86"
cache="${PQGPU_NVRTC_CACHE:-$HOME/.cache/pqgpu/nvrtc}"
lib="$cache/$version/nvidia/cuda_nvrtc/lib"

if [ ! -e "$lib/libnvrtc.so" ]; then
  rm -rf "$cache/$version" "$cache/venv" "$cache/wheel"
  mkdir -p "$cache/$version"
  python3 -m venv "$cache/venv" >&2
  "$cache/venv/bin/pip" download -q --no-deps "nvidia-cuda-nvrtc-cu12==$version" -d "$cache/wheel" >&2
  "$cache/venv/bin/python" -m zipfile -e "$cache"/wheel/*.whl "$cache/$version" >&2
  # cudarc opens libnvrtc.so; the wheel names it by its major version only.
  ln -sf libnvrtc.so.12 "$lib/libnvrtc.so"
  rm -rf "$cache/venv" "$cache/wheel"
fi
echo "$lib"
