# Finds the CUDA toolkit that compiles a CUDA variant's sidecar (see CudaSidecar.cmake)
# and checks it against the variant's preset (TVM_WHEEL_CUDA, TVM_WHEEL_CUDA_ARCHS).
#
# TVM_WHEELS_CUDA (environment variable or -D) says where it comes from:
#   unset / "pip"   the NVIDIA wheels that pip installs into the build environment
#                   (the preset's TVM_WHEEL_CUDA_PIP): site-packages/nvidia/cu<major>
#   "system"        $CUDA_HOME, $CUDA_PATH, nvcc on PATH, /usr/local/cuda, in that order
#   /path           exactly that toolkit root (the directory holding bin/nvcc), or nvcc itself
# A toolkit is usable when nvcc runs, its major is the preset's, its minor is at
# least the preset's, and it has cuda_runtime.h and libcudart.so.<major>. A variant whose
# TVM_WHEEL_CUDA_BUILD is "runtime" compiles no CUDA code: it needs no nvcc, and the version
# comes from the runtime's header (CUDART_VERSION).
# The functions take their inputs as arguments so that tests/unit/test_cuda_toolkit.py
# drives them with fake toolkits in `cmake -P` script mode.

# Sets <out_ok> TRUE/FALSE, <out_version> and <out_why> (the reason when not usable).
function(tvm_wheels_probe_cuda root wanted out_ok out_version out_why)
  set(${out_ok} FALSE PARENT_SCOPE)
  set(${out_version} "" PARENT_SCOPE)
  if(TVM_WHEEL_CUDA_BUILD STREQUAL "runtime")
    set(_header "${root}/include/cuda_runtime_api.h")
    if(EXISTS "${_header}")
      file(STRINGS "${_header}" _def REGEX "^#define CUDART_VERSION +[0-9]+")
    endif()
    if(NOT _def MATCHES "([0-9]+)$")
      set(${out_why} "no include/cuda_runtime_api.h with CUDART_VERSION" PARENT_SCOPE)
      return()
    endif()
    math(EXPR _major "${CMAKE_MATCH_1} / 1000")
    math(EXPR _minor "${CMAKE_MATCH_1} % 1000 / 10")
    set(_version "${_major}.${_minor}")
    # Its target (Jetson) has no CUDA minor-version compatibility: headers newer than the
    # board's CUDA would reference runtime entry points it lacks.
    if(_version VERSION_GREATER wanted)
      set(${out_why} "CUDA ${_version}, newer than the CUDA ${wanted} this variant's boards have" PARENT_SCOPE)
      set(${out_version} "${_version}" PARENT_SCOPE)
      return()
    endif()
  else()
    if(NOT EXISTS "${root}/bin/nvcc")
      set(${out_why} "no bin/nvcc" PARENT_SCOPE)
      return()
    endif()
    execute_process(COMMAND "${root}/bin/nvcc" --version
      RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_QUIET)
    if(NOT _rc EQUAL 0 OR NOT _out MATCHES "release ([0-9]+)\\.([0-9]+)")
      set(${out_why} "bin/nvcc does not run (${_rc})" PARENT_SCOPE)
      return()
    endif()
    set(_major ${CMAKE_MATCH_1})
    set(_version "${CMAKE_MATCH_1}.${CMAKE_MATCH_2}")
  endif()
  set(${out_version} "${_version}" PARENT_SCOPE)
  string(REGEX MATCH "^[0-9]+" _want_major "${wanted}")
  if(NOT _major EQUAL _want_major OR _version VERSION_LESS wanted)
    set(${out_why} "CUDA ${_version}, but this variant is built with CUDA ${_want_major}.x, at least ${wanted}" PARENT_SCOPE)
    return()
  endif()
  tvm_wheels_cuda_runtime_library("${root}" ${_major} _cudart)
  if(NOT EXISTS "${root}/include/cuda_runtime.h" OR NOT _cudart)
    set(${out_why} "CUDA ${_version} without the runtime's headers or libcudart.so.${_major} (pip install nvidia-cuda-runtime)" PARENT_SCOPE)
    return()
  endif()
  set(${out_ok} TRUE PARENT_SCOPE)
  set(${out_why} "" PARENT_SCOPE)
endfunction()

# libcudart.so.<major> of a toolkit root ("" when it has none): a system toolkit keeps it in
# lib64/ or targets/<arch>-linux/lib/, NVIDIA's wheels in lib/, without the unversioned name.
function(tvm_wheels_cuda_runtime_library root major out)
  file(GLOB _found "${root}/lib/libcudart.so.${major}" "${root}/lib64/libcudart.so.${major}"
    "${root}/targets/*-linux/lib/libcudart.so.${major}")
  list(SORT _found)
  list(LENGTH _found _n)
  if(_n GREATER 0)
    list(GET _found 0 _found)
  endif()
  set(${out} "${_found}" PARENT_SCOPE)
endfunction()

# The toolkit root of NVIDIA's wheels next to <python>, or "": nvidia/cu<major> (CUDA 13's
# wheels) with nvcc; for a "runtime" build also nvidia/cuda_runtime (CUDA 12's runtime wheel).
function(tvm_wheels_pip_cuda_root python major out)
  set(${out} "" PARENT_SCOPE)
  if(NOT python)
    return()
  endif()
  execute_process(
    COMMAND "${python}" -c "import importlib.util as u, os; s = u.find_spec('nvidia'); print('\\n'.join(os.path.join(p, d) for p in (s.submodule_search_locations if s else []) for d in ('cu${major}', 'cuda_runtime')))"
    OUTPUT_VARIABLE _roots ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
  string(REPLACE "\n" ";" _roots "${_roots}")
  foreach(_r IN LISTS _roots)
    if(EXISTS "${_r}/bin/nvcc" OR (TVM_WHEEL_CUDA_BUILD STREQUAL "runtime" AND EXISTS "${_r}/include/cuda_runtime.h"))
      set(${out} "${_r}" PARENT_SCOPE)
      return()
    endif()
  endforeach()
endfunction()

function(tvm_wheels_system_cuda_roots out)
  set(_found "")
  foreach(_var CUDA_HOME CUDA_PATH)
    if(DEFINED ENV{${_var}} AND NOT "$ENV{${_var}}" STREQUAL "")
      list(APPEND _found "$ENV{${_var}}")
    endif()
  endforeach()
  find_program(_nvcc nvcc NO_CACHE NO_CMAKE_PATH NO_CMAKE_SYSTEM_PATH)
  if(_nvcc)
    file(REAL_PATH "${_nvcc}" _nvcc)
    cmake_path(GET _nvcc PARENT_PATH _bin)
    cmake_path(GET _bin PARENT_PATH _root)
    list(APPEND _found "${_root}")
  endif()
  list(APPEND _found "/usr/local/cuda")
  list(REMOVE_DUPLICATES _found)
  set(${out} "${_found}" PARENT_SCOPE)
endfunction()

# Sets TVM_WHEELS_CUDA_ROOT, TVM_WHEELS_CUDA_VERSION, TVM_WHEELS_CUDA_SOURCE and
# TVM_WHEELS_CUDART (libcudart.so.<major>) in the caller's scope, or stops with the fix.
# wanted: the preset's TVM_WHEEL_CUDA ("13.0"); pip_reqs: its TVM_WHEEL_CUDA_PIP.
function(tvm_wheels_find_cuda choice python wanted pip_reqs)
  string(REGEX MATCH "^[0-9]+" _major "${wanted}")
  list(JOIN pip_reqs " " _pip_text)
  set(_fix_text
    "Fix, one of:\n"
    "  pip install ./                      (default: pip provisions CUDA: ${_pip_text})\n"
    "  TVM_WHEELS_CUDA=system pip install ./        (CUDA_HOME, nvcc on PATH or /usr/local/cuda; CUDA ${_major}.x >= ${wanted})\n"
    "  TVM_WHEELS_CUDA=/path/to/cuda pip install ./ (a toolkit root with bin/nvcc)")
  if(choice MATCHES "/")
    set(_root "${choice}")
    if(_root MATCHES "/bin/nvcc$")
      cmake_path(GET _root PARENT_PATH _root)
      cmake_path(GET _root PARENT_PATH _root)
    endif()
    tvm_wheels_probe_cuda("${_root}" "${wanted}" _ok _ver _why)
    if(NOT _ok)
      message(FATAL_ERROR "tvm-wheels: TVM_WHEELS_CUDA=${choice}: ${_why}.\n" ${_fix_text})
    endif()
    set(_source "user (TVM_WHEELS_CUDA)")
  else()
    if(NOT choice STREQUAL "" AND NOT choice STREQUAL "pip" AND NOT choice STREQUAL "system")
      message(FATAL_ERROR "tvm-wheels: TVM_WHEELS_CUDA='${choice}' is not 'pip', 'system' or a path to a CUDA toolkit.\n" ${_fix_text})
    endif()
    set(_candidates "")
    set(_pip "")
    if(NOT choice STREQUAL "system")
      tvm_wheels_pip_cuda_root("${python}" ${_major} _pip)
      if(_pip)
        list(APPEND _candidates "${_pip}")
      endif()
    endif()
    if(NOT choice STREQUAL "pip" OR NOT _pip)  # pip (the default) falls back to the system's
      tvm_wheels_system_cuda_roots(_system)
      list(APPEND _candidates ${_system})
    endif()
    set(_root "")
    set(_rejected "")
    foreach(_c IN LISTS _candidates)
      tvm_wheels_probe_cuda("${_c}" "${wanted}" _ok _ver _why)
      if(_ok)
        set(_root "${_c}")
        break()
      endif()
      list(APPEND _rejected "  ${_c}: ${_why}")
    endforeach()
    if(NOT _root)
      list(JOIN _rejected "\n" _rejected_text)
      message(FATAL_ERROR "tvm-wheels: no usable CUDA ${_major} toolkit. Looked at:\n${_rejected_text}\n" ${_fix_text})
    endif()
    if(_root STREQUAL _pip)
      set(_source "pip (${_pip_text})")
    else()
      set(_source "system")
    endif()
  endif()
  tvm_wheels_cuda_runtime_library("${_root}" ${_major} _cudart)
  set(TVM_WHEELS_CUDA_ROOT "${_root}" PARENT_SCOPE)
  set(TVM_WHEELS_CUDA_VERSION "${_ver}" PARENT_SCOPE)
  set(TVM_WHEELS_CUDA_SOURCE "${_source}" PARENT_SCOPE)
  set(TVM_WHEELS_CUDART "${_cudart}" PARENT_SCOPE)
endfunction()

# Stops unless every entry of <archs> (CMake's CUDA_ARCHITECTURES: 80, 90a, 100f, ...) is
# a GPU code that <nvcc> can emit (nvcc --list-gpu-code, which names the base sm_NN only).
function(tvm_wheels_check_cuda_archs nvcc archs)
  execute_process(COMMAND "${nvcc}" --list-gpu-code OUTPUT_VARIABLE _codes ERROR_QUIET
    OUTPUT_STRIP_TRAILING_WHITESPACE)
  string(REGEX MATCHALL "sm_[0-9]+" _codes "${_codes}")
  string(REPLACE "sm_" "" _known "${_codes}")
  set(_bad "")
  foreach(_a IN LISTS archs)
    set(_at -1)
    if(_a MATCHES "^([0-9]+)([af]?)$")
      list(FIND _known "${CMAKE_MATCH_1}" _at)
    endif()
    if(_at LESS 0)
      list(APPEND _bad "${_a}")
    endif()
  endforeach()
  if(NOT archs)
    set(_bad "(empty)")
  endif()
  if(_bad)
    list(JOIN _bad ", " _bad_text)
    list(JOIN _known ";" _known_text)
    message(FATAL_ERROR "tvm-wheels: CUDA arch ${_bad_text} cannot be built by ${nvcc}, which targets ${_known_text} "
      "(90 and up also with an 'a' suffix: 90a).\n"
      "Fix: TVM_WHEELS_CUDA_ARCHS=\"<archs from that list>\" pip install ./  (or -C cmake.define.TVM_WHEEL_CUDA_ARCHS=...)")
  endif()
endfunction()

# A link-time stand-in for the driver library: libcuda.so with SONAME libcuda.so.1 that
# defines (as empty functions) every cu* function the toolkit's cuda.h declares, so that
# libtvm_runtime_cuda records NEEDED libcuda.so.1 and resolves against the real driver on
# the user's machine. NVIDIA's wheels carry no stub. It is made in the build tree and never
# installed (the repair step also excludes libcuda.so.*). Sets <out> to its path.
function(tvm_wheels_make_cuda_stub cc include_dir dir out)
  execute_process(COMMAND "${cc}" -E -P -x c "${include_dir}/cuda.h" "-I${include_dir}"
    RESULT_VARIABLE _rc OUTPUT_VARIABLE _decls ERROR_VARIABLE _err)
  string(REGEX MATCHALL "[ *]cu[A-Z][A-Za-z0-9_]*[ ]*\\(" _names "${_decls}")
  list(TRANSFORM _names REPLACE "[ *(]" "")
  list(REMOVE_DUPLICATES _names)
  list(LENGTH _names _count)
  if(NOT _rc EQUAL 0 OR _count LESS 100)
    message(FATAL_ERROR "tvm-wheels: cannot read the driver API from ${include_dir}/cuda.h (${_rc}, ${_count} functions): ${_err}"
      "Fix: a complete CUDA toolkit (pip install nvidia-cuda-runtime), see TVM_WHEELS_CUDA")
  endif()
  list(SORT _names)
  list(TRANSFORM _names REPLACE "(.+)" "void \\1(void) {}")
  list(JOIN _names "\n" _body)
  file(MAKE_DIRECTORY "${dir}")
  file(CONFIGURE OUTPUT "${dir}/cuda_stub.c" CONTENT "/* generated by tvm-wheels from cuda.h: link-time stub, never shipped */\n${_body}\n" @ONLY)
  execute_process(COMMAND "${cc}" -shared -fPIC -o "${dir}/libcuda.so" "-Wl,-soname,libcuda.so.1" "${dir}/cuda_stub.c"
    RESULT_VARIABLE _rc ERROR_VARIABLE _err)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "tvm-wheels: cannot build the libcuda link stub: ${_err}")
  endif()
  set(${out} "${dir}/libcuda.so" PARENT_SCOPE)
endfunction()
