# Configure-time checks that stop a build before compilation, each naming the
# fix. Thresholds come from cmake/requirements.cmake. The functions take their
# inputs as arguments so tests (tests/unit/test_cmake_checks.py) drive them
# with fake values in `cmake -P` script mode.

include("${CMAKE_CURRENT_LIST_DIR}/../requirements.cmake")

function(tvm_wheels_check_compiler id version path)
  if(id STREQUAL "GNU")
    set(_min ${TVM_WHEELS_GCC_MIN})
    set(_rec ${TVM_WHEELS_GCC_RECOMMENDED})
    set(_name GCC)
  elseif(id MATCHES "Clang")
    set(_min ${TVM_WHEELS_CLANG_MIN})
    set(_rec ${TVM_WHEELS_CLANG_RECOMMENDED})
    set(_name Clang)
  else()
    message(WARNING "tvm-wheels: compiler ${id} ${version} (${path}) is untested; GCC ${TVM_WHEELS_GCC_RECOMMENDED}+ is recommended.")
    return()
  endif()
  if(version VERSION_LESS _min)
    message(FATAL_ERROR
      "tvm-wheels: ${_name} ${version} (${path}) is too old: TVM needs C++17, "
      "${_name} >= ${_min} (${_rec}+ recommended).\n"
      "Fix: install a newer compiler (Debian/Ubuntu: apt-get install g++-12) and select it: "
      "CXX=g++-12 CC=gcc-12 pip install ./")
  elseif(version VERSION_LESS _rec)
    message(WARNING "tvm-wheels: ${_name} ${version} works, but ${_name} ${_rec}+ is recommended.")
  endif()
endfunction()

function(tvm_wheels_check_sources tvm_dir)
  set(_missing "")
  foreach(f IN LISTS TVM_WHEELS_SOURCE_FILES)
    if(NOT EXISTS "${tvm_dir}/${f}")
      list(APPEND _missing "${f}")
    endif()
  endforeach()
  if(_missing)
    list(JOIN _missing "\n  " _text)
    message(FATAL_ERROR
      "tvm-wheels: the TVM sources in ${tvm_dir} are incomplete; missing:\n  ${_text}\n"
      "Fix: git submodule update --init --recursive\n"
      "(no network? populate the submodules from an offline source kit, see README).")
  endif()
endfunction()

# Picks the number of parallel compile jobs from cores and memory, or checks
# the user's choice (TVM_WHEELS_JOBS) against memory. Sets <out_jobs>.
function(tvm_wheels_plan_jobs cores mem_mb requested out_jobs)
  math(EXPR _fit "${mem_mb} / ${TVM_WHEELS_MB_PER_JOB}")
  if(_fit LESS 1)
    message(FATAL_ERROR
      "tvm-wheels: ${mem_mb} MB of memory is available, and one TVM compile job needs about "
      "${TVM_WHEELS_MB_PER_JOB} MB (linking: ${TVM_WHEELS_MB_LINK} MB).\n"
      "Fix: add swap (e.g. fallocate -l 4G /swapfile && chmod 600 /swapfile && mkswap /swapfile "
      "&& swapon /swapfile), or close other programs, then build again.")
  endif()
  if(NOT requested STREQUAL "")
    if(NOT requested MATCHES "^[1-9][0-9]*$")
      message(FATAL_ERROR "tvm-wheels: TVM_WHEELS_JOBS='${requested}' is not a positive number.")
    endif()
    if(requested GREATER _fit)
      math(EXPR _need "${requested} * ${TVM_WHEELS_MB_PER_JOB}")
      message(FATAL_ERROR
        "tvm-wheels: TVM_WHEELS_JOBS=${requested} needs about ${_need} MB of memory but "
        "${mem_mb} MB is available; the build would be killed for memory.\n"
        "Fix: TVM_WHEELS_JOBS=${_fit} pip install ./ (or unset it to let the build choose), or add swap.")
    endif()
    set(${out_jobs} ${requested} PARENT_SCOPE)
    return()
  endif()
  if(cores LESS _fit)
    set(${out_jobs} ${cores} PARENT_SCOPE)
  else()
    set(${out_jobs} ${_fit} PARENT_SCOPE)
  endif()
endfunction()

# CUDA kernel compiles (CUTLASS templates through nvcc) take several times a C++ job's memory:
# they get their own, smaller job pool, at most the C++ jobs and at least one. Sets <out_jobs>.
function(tvm_wheels_plan_cuda_jobs cxx_jobs mem_mb out_jobs)
  math(EXPR _fit "${mem_mb} / ${TVM_WHEELS_MB_PER_NVCC_JOB}")
  if(_fit LESS 1)
    set(_fit 1)
  endif()
  if(cxx_jobs LESS _fit)
    set(_fit ${cxx_jobs})
  endif()
  set(${out_jobs} ${_fit} PARENT_SCOPE)
endfunction()
