# aarch64-orin — Jetson AGX Orin (aarch64, CUDA sm_87). Planned: not built by
# this project yet (its own issue); selecting it fails at configure time.
include(${CMAKE_CURRENT_LIST_DIR}/cuda-cutlass.cmake)

set(TVM_WHEEL_LABEL "orin")
set(TVM_WHEEL_SUMMARY "aarch64 Jetson Orin: cpu + CUDA sm_87 (planned)")
set(TVM_WHEEL_ARCHS "aarch64")
set(TVM_WHEEL_MARCH "armv8.2-a")
set(TVM_WHEEL_CUDA_ARCHS "87")
set(TVM_WHEEL_VARIANT_PROPERTIES "nvidia :: sm_arch :: 87")
