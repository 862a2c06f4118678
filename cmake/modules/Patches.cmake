# The project's patches to TVM (patches/NNNN-*.patch, each with its reason at its top) are
# applied to copies in the build tree; the tvm/ submodule itself is never modified. A patch
# names the file it changes on its "+++ b/<path under tvm/>" line.

# <out>: the paths under tvm/, starting with <prefix>, that patches change, in patch order.
function(tvm_wheels_patched_files prefix out)
  file(GLOB _patches CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/patches/*.patch")
  list(SORT _patches)
  set(_found)
  foreach(_patch IN LISTS _patches)
    file(STRINGS "${_patch}" _target REGEX "^\\+\\+\\+ b/" LIMIT_COUNT 1)
    string(REGEX REPLACE "^\\+\\+\\+ b/" "" _rel "${_target}")
    string(FIND "${_rel}" "${prefix}" _at)
    if(_at EQUAL 0)
      list(APPEND _found "${_rel}")
    endif()
  endforeach()
  list(REMOVE_DUPLICATES _found)
  set(${out} "${_found}" PARENT_SCOPE)
endfunction()

# <out>: a copy of tvm/<rel> in the build tree with every patch for it applied, in order.
# Stops, naming the patch, when one does not apply (tvm/ is not the pinned release).
function(tvm_wheels_patched_copy rel out)
  find_program(TVM_WHEELS_PATCH patch REQUIRED)
  file(GLOB _patches CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/patches/*.patch")  # a new patch re-configures
  list(SORT _patches)
  set(_copy "${CMAKE_CURRENT_BINARY_DIR}/tvm_wheels_patched/${rel}")
  cmake_path(GET _copy PARENT_PATH _dir)
  file(MAKE_DIRECTORY "${_dir}")
  file(COPY_FILE "${TVM_SOURCE_DIR}/${rel}" "${_copy}")
  foreach(_patch IN LISTS _patches)
    file(STRINGS "${_patch}" _target REGEX "^\\+\\+\\+ b/" LIMIT_COUNT 1)
    if(NOT _target STREQUAL "+++ b/${rel}")
      continue()
    endif()
    execute_process(
      COMMAND "${TVM_WHEELS_PATCH}" --quiet --forward --no-backup-if-mismatch -r - "${_copy}" "${_patch}"
      RESULT_VARIABLE _rc)
    if(NOT _rc EQUAL 0)
      message(FATAL_ERROR "tvm-wheels: ${_patch} does not apply to tvm/${rel}; "
        "the tvm/ submodule is not at v${TVM_WHEELS_TVM_VERSION}. Fix: git submodule update --init --recursive")
    endif()
  endforeach()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_patches} "${TVM_SOURCE_DIR}/${rel}")
  set(${out} "${_copy}" PARENT_SCOPE)
endfunction()
