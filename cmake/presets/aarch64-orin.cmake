# aarch64-orin — Jetson AGX Orin (aarch64, CUDA sm_87). Planned: not built by
# this project yet (its own issue); selecting it fails at configure time.
include(${CMAKE_CURRENT_LIST_DIR}/cuda-cutlass.cmake)

set(TVM_WHEEL_LABEL "orin")
set(TVM_WHEEL_SUMMARY "aarch64 Jetson Orin: cpu + CUDA sm_87 (planned)")
set(TVM_WHEEL_STATUS "planned")
set(TVM_WHEEL_ARCHS "aarch64")
set(TVM_WHEEL_MARCH "armv8.2-a")
# JetPack 6: CUDA 12.6, and no CUDA 12 nvcc on the registries, so no prebuilt CUTLASS kernels
set(TVM_WHEEL_CUDA "12.6")
set(TVM_WHEEL_CUDA_PIP "")
set(TVM_WHEEL_CUDA_ARCHS "87")
set(TVM_WHEEL_CUTLASS OFF)
set(TVM_WHEEL_PROBE_BUILD "main")
set(TVM_WHEEL_PROBE_SOURCES "")
set(TVM_WHEEL_DEPENDENCIES "")            # JetPack provides CUDA on the board
set(TVM_WHEEL_VARIANT_PROPERTIES "nvidia :: sm_arch :: 87")
