# Which wheel variant this build makes. One selector: the TVM_WHEEL_VARIANT
# environment variable (pip passes the environment to the build; the version
# label is computed from the same variable by python/tvm_wheels_build/metadata.py).

set(TVM_WHEELS_PRESET_DIR "${CMAKE_CURRENT_LIST_DIR}/../presets")
cmake_path(NORMAL_PATH TVM_WHEELS_PRESET_DIR)

function(tvm_wheels_known_variants out)
  file(GLOB _presets RELATIVE "${TVM_WHEELS_PRESET_DIR}" "${TVM_WHEELS_PRESET_DIR}/*.cmake")
  list(TRANSFORM _presets REPLACE "\\.cmake$" "")
  list(SORT _presets)
  set(${out} "${_presets}" PARENT_SCOPE)
endfunction()

# <out>: the variant's name: the environment variable, else a TVM_WHEEL_VARIANT already set
# (the CUDA sidecar's -D), else cpu. Not checked here (tvm_wheels_select_variant does that).
function(tvm_wheels_variant_name out)
  if(DEFINED ENV{TVM_WHEEL_VARIANT} AND NOT "$ENV{TVM_WHEEL_VARIANT}" STREQUAL "")
    set(${out} "$ENV{TVM_WHEEL_VARIANT}" PARENT_SCOPE)
  elseif(DEFINED TVM_WHEEL_VARIANT)
    set(${out} "${TVM_WHEEL_VARIANT}" PARENT_SCOPE)
  else()
    set(${out} "cpu" PARENT_SCOPE)
  endif()
endfunction()

# Sets TVM_WHEEL_VARIANT and includes its preset (into the caller's scope:
# a macro, so the preset's set() calls land where TVM will see them).
macro(tvm_wheels_select_variant)
  tvm_wheels_variant_name(TVM_WHEEL_VARIANT)
  tvm_wheels_known_variants(_known)
  if(NOT TVM_WHEEL_VARIANT IN_LIST _known)
    list(JOIN _known ", " _known_text)
    message(FATAL_ERROR
      "tvm-wheels: unknown variant '${TVM_WHEEL_VARIANT}'. Valid variants: ${_known_text}.\n"
      "Fix: TVM_WHEEL_VARIANT=<one of those> pip install ./")
  endif()
  include("${TVM_WHEELS_PRESET_DIR}/${TVM_WHEEL_VARIANT}.cmake")
  # A build probe (tools/wheelhouse.py probe) compiles a few objects and makes no wheel: it
  # guards a planned variant's toolchain while the variant is being built up.
  if(NOT TVM_WHEEL_STATUS STREQUAL "supported" AND NOT TVM_WHEELS_PROBE)
    message(FATAL_ERROR
      "tvm-wheels: variant '${TVM_WHEEL_VARIANT}' is ${TVM_WHEEL_STATUS}: its preset "
      "(cmake/presets/${TVM_WHEEL_VARIANT}.cmake) is written but this project does not build "
      "it yet. Fix: pick a supported variant (tvm-wheels variants).")
  endif()
  if(NOT CMAKE_SYSTEM_PROCESSOR IN_LIST TVM_WHEEL_ARCHS)
    message(FATAL_ERROR
      "tvm-wheels: variant '${TVM_WHEEL_VARIANT}' is built for ${TVM_WHEEL_ARCHS}, "
      "not ${CMAKE_SYSTEM_PROCESSOR}. Fix: pick a variant for this machine (tvm-wheels select).")
  endif()
  # The wheel's version label comes from the same variable; a variant passed
  # some other way (-C cmake.define...) would give a wheel whose name lies.
  if(DEFINED SKBUILD_PROJECT_VERSION_FULL)
    if(NOT SKBUILD_PROJECT_VERSION_FULL MATCHES "\\+${TVM_WHEEL_LABEL}$")
      message(FATAL_ERROR
        "tvm-wheels: the wheel version is ${SKBUILD_PROJECT_VERSION_FULL} but CMake was asked for "
        "variant '${TVM_WHEEL_VARIANT}' (label ${TVM_WHEEL_LABEL}). Choose the variant with the "
        "environment variable only: TVM_WHEEL_VARIANT=${TVM_WHEEL_VARIANT} pip install ./")
    endif()
  endif()
endmacro()
