# runtime — deployment wheel: libtvm_runtime (+ runtime extras), no compiler,
# no LLVM. Loads and runs modules exported by any 0.26 wheel; cannot compile.
include(${CMAKE_CURRENT_LIST_DIR}/cpu.cmake)

set(TVM_WHEEL_LABEL "runtime")
set(TVM_WHEEL_SUMMARY "TVM runtime only: load and run exported modules, no compiler")
set(TVM_WHEEL_ARCHS "x86_64")
set(TVM_WHEEL_COMPILER OFF)
set(TVM_WHEEL_HOST_TARGET "")
set(TVM_WHEEL_HOST_MATTR "")
set(TVM_WHEEL_TUNING_DB "")               # no compiler, nothing to schedule

set(USE_LLVM OFF)
