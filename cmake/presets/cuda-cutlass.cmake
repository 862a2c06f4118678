# cuda-cutlass — cpu plus the CUDA runtime and codegen, with CUTLASS kernels.
# Planned: not built by this project yet (its own issue); selecting it fails
# at configure time with that message rather than pretending to work.
include(${CMAKE_CURRENT_LIST_DIR}/cpu.cmake)

set(TVM_WHEEL_LABEL "cu130")
set(TVM_WHEEL_SUMMARY "cpu + CUDA 13.0 runtime/codegen + CUTLASS (planned)")
set(TVM_WHEEL_STATUS "planned")
set(TVM_WHEEL_CI_TIER 2)                  # its wheel: .ci/run --full; its probe: tier 1, once supported
set(TVM_WHEEL_CUDA_ARCHS "80;86;89;90")
set(TVM_WHEEL_VARIANT_PROPERTIES "nvidia :: cuda_version_lower_bound :: 13.0")

# The driver and toolkit come from the user's system or the nvidia-* wheels, never from ours.
set(TVM_WHEEL_REPAIR_EXCLUDE "libtvm_ffi.so;libcuda.so.*;libcudart.so.*;libnvrtc.so.*;libnvrtc-builtins.so.*")

set(USE_CUDA ON)
set(USE_CUTLASS ON)
