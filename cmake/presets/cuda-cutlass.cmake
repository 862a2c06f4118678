# cuda-cutlass — cpu plus TVM's CUDA runtime and CUTLASS kernels, for NVIDIA GPUs.
# The wheel is the cpu build (same TVM options: its objects come from the cpu build's
# ccache) plus a CUDA sidecar build (cmake/modules/CudaSidecar.cmake) that adds
# libtvm_runtime_cuda and, with TVM_WHEEL_CUTLASS, the CUTLASS kernel libraries.
# Tier 2 builds and tests its wheel; tier 1 runs its build probe.
include(${CMAKE_CURRENT_LIST_DIR}/cpu.cmake)

set(TVM_WHEEL_LABEL "cu130")
set(TVM_WHEEL_SUMMARY "cpu + CUDA 13.0 runtime/codegen + CUTLASS")
set(TVM_WHEEL_STATUS "supported")
set(TVM_WHEEL_CI_TIER 2)                  # its wheel: .ci/run --full; its probe: tier 1
set(TVM_WHEEL_VARIANT_PROPERTIES "nvidia :: cuda_version_lower_bound :: 13.0")

# CUDA the sidecar is built with: this major, at least this minor (CudaToolkit.cmake).
set(TVM_WHEEL_CUDA "13.0")
# What `pip install ./` provisions it from when the user names no toolkit (TVM_WHEELS_CUDA):
# NVIDIA's unsuffixed 13.0 wheels (the -cu13 names are empty stubs).
set(TVM_WHEEL_CUDA_PIP
  "nvidia-cuda-nvcc==13.0.88" "nvidia-cuda-runtime==13.0.96" "nvidia-cuda-cccl==13.0.85"
  "nvidia-cuda-crt==13.0.88" "nvidia-nvvm==13.0.88")
# GPU code in the sidecar's kernels: sm_80 runs on every 8.x GPU (and as PTX on newer
# ones); 90a carries TVM's Hopper group-GEMM / FP8 kernels. Override by name:
# TVM_WHEELS_CUDA_ARCHS="80;89;90a" pip install ./
set(TVM_WHEEL_CUDA_ARCHS "80;90a")
set(TVM_WHEEL_CUTLASS ON)                 # fpA_intB GEMM, flash attention, TVM's CUTLASS kernels
# TVM's CUTLASS kernels (relative to tvm/) left out of the sidecar, each with its reason (README)
set(TVM_WHEEL_CUTLASS_SKIP
  # includes cutlass_extensions/gemm/collective/collective_builder.hpp and dispatch_policy.hpp,
  # which the 3rdparty/cutlass_fpA_intB_gemm tree (a substitute, upstream at f09824e) lacks;
  # and cuBLAS (below)
  "src/runtime/extra/contrib/cutlass/fp8_groupwise_scaled_gemm_sm90.cu"
  # includes cublas_v2.h / cublasLt.h: this variant provisions no cuBLAS
  "src/runtime/extra/contrib/cutlass/fp8_gemm.cu")
# The build probe: what makes this variant's build different, compiled by the sidecar's
# toolchain: TVM's CUDA device API (C++ against the toolkit's headers), the project's
# fpA_intB binding and one flash-attention kernel (nvcc, CUTLASS).
set(TVM_WHEEL_PROBE_BUILD "sidecar")
set(TVM_WHEEL_PROBE_SOURCES
  "tvm/src/backend/cuda/runtime/cuda_device_api.cc"
  "sidecar/fpA_intB_gemm_tvm_binding.cu"
  "tvm/3rdparty/libflash_attn/src/flash_fwd_hdim32_fp16_sm80.cu")

# What the wheel needs at run time besides the NVIDIA driver (pip: Requires-Dist), bounded to
# the toolkit's major: libcudart for the sidecar (RUNPATH to site-packages/nvidia/cu13/lib),
# NVRTC and its headers for the kernels TVM generates (tvm.support.nvcc, through cuda-bindings).
set(TVM_WHEEL_DEPENDENCIES
  "nvidia-cuda-runtime>=13.0,<14" "nvidia-cuda-nvrtc>=13.0,<14" "nvidia-cuda-cccl>=13.0,<14"
  "cuda-bindings>=13.0,<14")
# Extras ("extra :: requirement"). cutlass: TVM's CUTLASS BYOC (relax.backend.cuda.cutlass,
# tvm.contrib.cutlass) writes CUDA source for the kernels a model offloads and compiles it with
# nvcc when the model is built; NVRTC cannot (host code, CUTLASS's headers). Only that needs it.
set(TVM_WHEEL_EXTRAS
  "cutlass :: nvidia-cuda-nvcc>=13.0,<14" "cutlass :: nvidia-cuda-crt>=13.0,<14" "cutlass :: nvidia-nvvm>=13.0,<14")

# The driver and toolkit come from the user's system or the nvidia-* wheels, never from ours.
set(TVM_WHEEL_REPAIR_EXCLUDE "libtvm_ffi.so;libcuda.so.*;libcudart.so.*;libnvrtc.so.*;libnvrtc-builtins.so.*")
