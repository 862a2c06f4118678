# Cross builds: a variant for another architecture than the build machine's (aarch64-orin on
# x86_64) is compiled with the toolchain file its preset names (TVM_WHEEL_TOOLCHAIN). Include
# before project(), which reads CMAKE_TOOLCHAIN_FILE. On a machine of the variant's own
# architecture the build is native and the file is not used; a toolchain the user passes wins.

function(_tvm_wheels_preset_value name out)  # one value of the selected variant's preset
  set(_variant "$ENV{TVM_WHEEL_VARIANT}")
  if(_variant STREQUAL "")
    set(_variant "${TVM_WHEEL_VARIANT}")
  endif()
  set(_preset "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../presets/${_variant}.cmake")
  set(${out} "" PARENT_SCOPE)
  if(_variant AND EXISTS "${_preset}")  # an unknown name stops later, listing the valid ones
    include("${_preset}")
    set(${out} "${${name}}" PARENT_SCOPE)
  endif()
endfunction()

function(tvm_wheels_cross_toolchain)
  if(DEFINED CMAKE_TOOLCHAIN_FILE OR DEFINED ENV{CMAKE_TOOLCHAIN_FILE})
    return()
  endif()
  _tvm_wheels_preset_value(TVM_WHEEL_TOOLCHAIN _file)
  _tvm_wheels_preset_value(TVM_WHEEL_ARCHS _archs)
  cmake_host_system_information(RESULT _host QUERY OS_PLATFORM)  # uname -m; before project() too
  if(NOT _file OR _host IN_LIST _archs)
    return()
  endif()
  cmake_path(ABSOLUTE_PATH _file BASE_DIRECTORY "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../.." NORMALIZE)
  set(CMAKE_TOOLCHAIN_FILE "${_file}" CACHE FILEPATH
    "cross toolchain of the variant (tvm-wheels)")
  message(STATUS "tvm-wheels: cross build for ${_archs} on ${_host}: ${CMAKE_TOOLCHAIN_FILE}")
endfunction()
