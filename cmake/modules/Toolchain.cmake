# Cross builds: a variant for another architecture than the build machine's (aarch64-orin on
# x86_64) is compiled with the toolchain file its preset names (TVM_WHEEL_TOOLCHAIN). Include
# before project(), which reads CMAKE_TOOLCHAIN_FILE. On a machine of the variant's own
# architecture the build is native and the file is not used; a toolchain the user passes wins.

include(Variant)

function(tvm_wheels_cross_toolchain)
  if(DEFINED CMAKE_TOOLCHAIN_FILE OR DEFINED ENV{CMAKE_TOOLCHAIN_FILE})
    return()
  endif()
  tvm_wheels_variant_name(_variant)
  if(NOT EXISTS "${TVM_WHEELS_PRESET_DIR}/${_variant}.cmake")
    return()  # an unknown name stops after project(), listing the valid ones
  endif()
  include("${TVM_WHEELS_PRESET_DIR}/${_variant}.cmake")  # into this function's scope only
  cmake_host_system_information(RESULT _host QUERY OS_PLATFORM)  # uname -m; before project() too
  if(NOT TVM_WHEEL_TOOLCHAIN OR _host IN_LIST TVM_WHEEL_ARCHS)
    return()
  endif()
  cmake_path(ABSOLUTE_PATH TVM_WHEEL_TOOLCHAIN BASE_DIRECTORY "${TVM_WHEELS_PRESET_DIR}/../.." NORMALIZE
    OUTPUT_VARIABLE _file)
  set(CMAKE_TOOLCHAIN_FILE "${_file}" CACHE FILEPATH "cross toolchain of the variant (tvm-wheels)")
  message(STATUS "tvm-wheels: cross build for ${TVM_WHEEL_ARCHS} on ${_host}: ${CMAKE_TOOLCHAIN_FILE}")
endfunction()
