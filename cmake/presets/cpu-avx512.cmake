# cpu-avx512 — the cpu wheel for x86-64-v4 CPUs (AVX-512 F/BW/CD/DQ/VL):
# TVM's runtime libraries (what runs the models) are built for x86-64-v4, and
# the default host target emits AVX-512 code (libtvm_compiler keeps the
# baseline: see TVM_WHEEL_MARCH in CMakeLists.txt). Importing it on a CPU
# without these features raises ImportError naming the missing ones
# (tvm_wheels.guard), before any of its native code loads.
include(${CMAKE_CURRENT_LIST_DIR}/cpu.cmake)

set(TVM_WHEEL_LABEL "avx512")
set(TVM_WHEEL_SUMMARY "cpu, with TVM's runtime and its default target built for x86-64-v4 (AVX-512)")
set(TVM_WHEEL_MARCH "x86-64-v4")
set(TVM_WHEEL_CPU_FEATURES "AVX512F;AVX512CD;AVX512BW;AVX512DQ;AVX512VL")
set(TVM_WHEEL_HOST_TARGET "x86-64-v4")
# LLVM's x86-64-v4 tuning prefers 256-bit vectors (ymm): measured, a vectorized
# loop then has no zmm instruction at all. Full-width AVX-512 is what this wheel is for.
set(TVM_WHEEL_HOST_MATTR "-prefer-256-bit")
# MetaSchedule records for that target (ResNet-50 + a BERT block; budget in budget.json)
set(TVM_WHEEL_TUNING_DB "llvm-x86-64-v4--prefer-256-bit")
set(TVM_WHEEL_VARIANT_PROPERTIES "x86_64 :: level :: v4")
# Runtime sources compiled with -march=x86-64-v4 (the thread pool, the CPU device)
set(TVM_WHEEL_PROBE_SOURCES "tvm/src/runtime/threading_backend.cc;tvm/src/runtime/cpu_device_api.cc")

