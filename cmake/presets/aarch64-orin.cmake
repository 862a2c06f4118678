# aarch64-orin — NVIDIA Jetson Orin (AGX, NX, Nano) on JetPack 6 (L4T r36: Ubuntu 22.04, glibc
# 2.35, CUDA 12.6): TVM's compiler (LLVM inside, AArch64 + NVPTX) and runtime, and TVM's CUDA
# runtime for the Orin GPU (sm_87). Cross-built on x86_64 (cmake/toolchains/), tested under
# qemu-user (tests/wheel/test_orin_wheel.py); natively on an aarch64 machine.
# No CUDA 12 nvcc exists for these builds (NVIDIA's registries carry none for aarch64), so the
# wheel has no prebuilt CUTLASS or flash-attention kernels: TVM compiles the kernels it
# generates on the board, through NVRTC (JetPack's).
include(${CMAKE_CURRENT_LIST_DIR}/cpu.cmake)

set(TVM_WHEEL_LABEL "orin")
set(TVM_WHEEL_SUMMARY "aarch64 Jetson Orin (JetPack 6): cpu + CUDA 12.6 runtime for sm_87")
set(TVM_WHEEL_STATUS "supported")
set(TVM_WHEEL_ARCHS "aarch64")
# Built on another architecture: this toolchain file (relative to the project root), with
# qemu-user running the aarch64 llvm-config; not used on an aarch64 build machine.
set(TVM_WHEEL_TOOLCHAIN "cmake/toolchains/aarch64-linux-gnu.cmake")
# Orin's CPU is the Cortex-A78AE: Armv8.2-A with FP16 arithmetic, dot product and RCpc.
set(TVM_WHEEL_MARCH "armv8.2-a+fp16+dotprod+rcpc")
# numpy's names for them (its CPU table reads the kernel's HWCAP); RCpc is not in that table.
set(TVM_WHEEL_CPU_FEATURES "ASIMDHP;ASIMDDP")
set(TVM_WHEEL_HOST_TARGET "cortex-a78ae")
set(TVM_WHEEL_HOST_MATTR "")
set(TVM_WHEEL_TUNING_DB "")               # none tuned: no Orin to measure on
set(TVM_WHEEL_CI_TIER 2)                  # its wheel: .ci/run --full; its probe: tier 1
set(TVM_WHEEL_VARIANT_PROPERTIES "nvidia :: sm_arch :: 87" "nvidia :: cuda_version_lower_bound :: 12.6")

# JetPack 6's CUDA: libcudart.so.12 and NVRTC come from the board (never bundled). CUDA's
# minor-version compatibility does not hold on Jetson, so nothing here may need a runtime newer
# than 12.6: the headers are 12.6's.
set(TVM_WHEEL_CUDA "12.6")
# "runtime": no nvcc, so no sidecar build; the main build compiles TVM's CUDA runtime
# (C++ against the toolkit's headers) into libtvm_runtime_cuda (cmake/modules/CudaSidecar.cmake).
set(TVM_WHEEL_CUDA_BUILD "runtime")
# Headers and libcudart to build against, for the variant's arch (aarch64) whatever the build
# machine: NVIDIA's 12.6 runtime wheel, and its nvcc wheel for the crt/ headers that
# cuda_runtime.h includes (for aarch64 it has ptxas but no nvcc). tools/wheelhouse.py provisions
# them; or TVM_WHEELS_CUDA.
set(TVM_WHEEL_CUDA_PIP "nvidia-cuda-runtime-cu12==12.6.77" "nvidia-cuda-nvcc-cu12==12.6.85")
set(TVM_WHEEL_CUDA_ARCHS "87")
set(TVM_WHEEL_CUTLASS OFF)
set(TVM_WHEEL_DEPENDENCIES "")            # JetPack provides CUDA on the board
set(TVM_WHEEL_REPAIR_EXCLUDE "libtvm_ffi.so;libcuda.so.*;libcudart.so.*;libnvrtc.so.*;libnvrtc-builtins.so.*")

# The build probe: the cross toolchain and LLVM (an LLVM AArch64 codegen source of TVM, through
# the aarch64 llvm-config under qemu) and TVM's CUDA device API against CUDA 12.6's headers.
set(TVM_WHEEL_PROBE_BUILD "main")
set(TVM_WHEEL_PROBE_SOURCES
  "tvm/src/target/llvm/codegen_aarch64.cc"
  "tvm/src/backend/cuda/runtime/cuda_device_api.cc")
