# Applies cmake/compile.cmake (the measured build-cost levers) to TVM's targets:
#   tvm_wheels_compile_settings()  before add_subdirectory(tvm): unity batches, -O level
#   tvm_wheels_compile_fixups()    after it: drops the definitions a release build must
#                                  not carry, keeps the listed sources out of unity batches
# Nothing under tvm/ is edited: both act on CMake variables and properties.

include("${CMAKE_CURRENT_LIST_DIR}/../compile.cmake")

macro(tvm_wheels_compile_settings)
  foreach(_v TVM_WHEELS_UNITY_BATCH TVM_WHEELS_OPT_LEVEL)
    if(DEFINED CACHE{${_v}})  # -C cmake.define.NAME=VALUE wins over the data file
      set(${_v} "$CACHE{${_v}}")
    endif()
  endforeach()
  if(NOT TVM_WHEELS_UNITY_BATCH MATCHES "^[0-9]+$")
    message(FATAL_ERROR "tvm-wheels: TVM_WHEELS_UNITY_BATCH='${TVM_WHEELS_UNITY_BATCH}' is not a number of "
      "sources. Fix: -C cmake.define.TVM_WHEELS_UNITY_BATCH=16 (or 0: no unity build)")
  endif()
  if(TVM_WHEELS_UNITY_BATCH GREATER 0)
    set(CMAKE_UNITY_BUILD ON)
    set(CMAKE_UNITY_BUILD_BATCH_SIZE ${TVM_WHEELS_UNITY_BATCH})
    # CMake >= 4.0: the generated unity files #include TVM's sources by relative
    # path, so two clones in different directories produce identical files (and
    # share ccache entries) as they do without unity builds.
    set(CMAKE_UNITY_BUILD_RELOCATABLE ON)
  endif()
  foreach(_lang C CXX)
    string(REGEX REPLACE "(^| )-O[0-9s]( |$)" "\\1${TVM_WHEELS_OPT_LEVEL}\\2"
      CMAKE_${_lang}_FLAGS_RELEASE "${CMAKE_${_lang}_FLAGS_RELEASE}")
  endforeach()
  message(STATUS "tvm-wheels: unity batch ${TVM_WHEELS_UNITY_BATCH}, ${TVM_WHEELS_OPT_LEVEL}, "
    "without ${TVM_WHEELS_DROP_DEFINITIONS}")
endmacro()

# COMPILE_DEFINITIONS of a directory and of every directory below it.
function(_tvm_wheels_drop_directory_definitions dir)
  get_property(_defs DIRECTORY "${dir}" PROPERTY COMPILE_DEFINITIONS)
  if(_defs)
    list(REMOVE_ITEM _defs ${TVM_WHEELS_DROP_DEFINITIONS})
    set_property(DIRECTORY "${dir}" PROPERTY COMPILE_DEFINITIONS "${_defs}")
  endif()
  get_property(_targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
  foreach(_t IN LISTS _targets)
    foreach(_p COMPILE_DEFINITIONS INTERFACE_COMPILE_DEFINITIONS COMPILE_OPTIONS INTERFACE_COMPILE_OPTIONS)
      get_property(_vals TARGET ${_t} PROPERTY ${_p})
      if(_vals)
        foreach(_d IN LISTS TVM_WHEELS_DROP_DEFINITIONS)
          list(REMOVE_ITEM _vals "${_d}" "-D${_d}")
        endforeach()
        set_property(TARGET ${_t} PROPERTY ${_p} "${_vals}")
      endif()
    endforeach()
  endforeach()
  get_property(_subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(_sub IN LISTS _subdirs)
    _tvm_wheels_drop_directory_definitions("${_sub}")
  endforeach()
endfunction()

function(tvm_wheels_compile_fixups tvm_dir)
  _tvm_wheels_drop_directory_definitions("${tvm_dir}")
  if(TVM_WHEELS_UNITY_SKIP)
    list(TRANSFORM TVM_WHEELS_UNITY_SKIP PREPEND "${tvm_dir}/" OUTPUT_VARIABLE _skip)
    set_property(SOURCE ${_skip} DIRECTORY "${tvm_dir}" PROPERTY SKIP_UNITY_BUILD_INCLUSION ON)
  endif()
endfunction()
