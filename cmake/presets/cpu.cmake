# cpu — the default wheel: TVM's compiler (LLVM inside) and runtime, for any
# x86-64 CPU. TVM's own code is built for the architecture's baseline so the
# wheel runs everywhere; the code TVM *generates* targets the host at compile
# time (see TVM_WHEEL_HOST_TARGET).
#
# Presets are data: only set(NAME value) and include(other.cmake) lines.
# CMake includes them; python/tvm_wheels/variants.py reads the same lines.

set(TVM_WHEEL_LABEL "cpu")                # local version label: 0.26.0+cpu
set(TVM_WHEEL_SUMMARY "TVM compiler + runtime, LLVM inside, any x86-64 CPU")
set(TVM_WHEEL_ARCHS "x86_64")             # machines the wheel is built for
set(TVM_WHEEL_STATUS "supported")         # supported | planned
set(TVM_WHEEL_COMPILER ON)                # libtvm_compiler + LLVM, or runtime only
set(TVM_WHEEL_MARCH "")                   # -march for TVM's runtime libraries ("" = toolchain default)
set(TVM_WHEEL_CPU_FEATURES "")            # CPUID features the host must have (import guard)
# Default host target of tvm_wheels.target.host(), an LLVM mcpu or one found where it runs:
# "x86-64-level" = the highest x86-64 level (x86-64-v2, v3 with AVX2/FMA, v4 with AVX-512) of the
# CPU running it, from numpy's CPUID table, as the import guard reads it. A few targets, each
# with a tuning database, where "native" (the CPU's model) would be one target per model.
set(TVM_WHEEL_HOST_TARGET "x86-64-level")
# LLVM target features added to it: 256-bit vectors on v4, as cpu-avx512 (its database is shared);
# no-op on v3 and v2, whose widest vectors are 256 and 128 bits.
set(TVM_WHEEL_HOST_MATTR "-prefer-256-bit")
# Tuning databases shipped for the default targets: tuning/<id>/, made by tools/tune_db.py
# (--mcpu for a level other than the tuning machine's); <id> is tvm_wheels.compiler.records.target_id of
# a host target; one per level (v2 and v3 tuned here for their targets: their code runs on v4).
set(TVM_WHEEL_TUNING_DB "llvm-x86-64-v4--prefer-256-bit;llvm-x86-64-v3--prefer-256-bit;llvm-x86-64-v2--prefer-256-bit")
set(TVM_WHEEL_VARIANT_PROPERTIES "")      # PEP 825 properties (namespace :: feature :: value)
set(TVM_WHEEL_DEPENDENCIES "")            # run-time needs beyond every variant's (pyproject.toml)
# Shared libraries the wheel needs but must not bundle (auditwheel repair --exclude):
# libtvm_ffi comes from the apache-tvm-ffi wheel it depends on.
set(TVM_WHEEL_REPAIR_EXCLUDE "libtvm_ffi.so")
# CI tier of this wheel (README: Tests and CI tiers): 1 = built and tested by .ci/run on
# every submission; 2 = a heavy variant (hours of compile on 2 cores), built and tested by
# `.ci/run --full` only, with a build probe in tier 1.
set(TVM_WHEEL_CI_TIER 1)
# The build probe: sources (relative to the project root) of what makes this variant's build
# different. `tools/wheelhouse.py probe` configures the variant and compiles exactly
# these, so a broken toolchain or flag fails tier 1 in minutes, not after hours.
set(TVM_WHEEL_PROBE_SOURCES "")

# TVM config.cmake options
set(USE_LLVM ON)                          # resolved to "<llvm-config> --link-static" by the wrapper
set(USE_OPENMP none)
set(USE_RPC ON)
set(USE_THREADS ON)
set(USE_SORT ON)
set(USE_RANDOM ON)
set(USE_CUDA OFF)
set(USE_CUTLASS OFF)
set(USE_Z3 OFF)                           # z3 is an optional prover; keeps the build self-contained
set(USE_GTEST OFF)
set(USE_CCACHE OFF)                       # the wrapper sets the compiler launcher itself
set(USE_ALTERNATIVE_LINKER OFF)           # same linker everywhere, for reproducible wheels
set(HIDE_PRIVATE_SYMBOLS ON)              # keeps static LLVM's symbols private to libtvm_compiler
set(BUILD_TESTING OFF)
set(SUMMARIZE OFF)
