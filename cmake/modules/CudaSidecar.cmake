# A CUDA variant's wheel = the cpu variant's build + a CUDA "sidecar".
#
# TVM's CUDA.cmake adds the CUDA include directory to every target of a build
# (include_directories), so USE_CUDA in the main build would change all ~600
# compile lines and no cpu object could come from ccache. The main build keeps
# the cpu variant's TVM options exactly (its objects are the cpu build's), and a
# second configure of this same project, in sidecar mode (TVM_WHEELS_SIDECAR=cuda),
# builds TVM runtime-only with CUDA on: libtvm_runtime_cuda (device API, CUDA
# module loader) and, with TVM_WHEEL_CUTLASS, the CUTLASS kernel libraries. Its
# libraries join the main build's in tvm/lib. Upstream ships its CUDA runtime the
# same way (TVM_PACKAGE_EXTRA_LIBS).
#
#   tvm_wheels_cuda_toolkit()        both modes: find the toolkit, check the arch list
#   tvm_wheels_sidecar_options()     sidecar, before add_subdirectory(tvm): TVM's CUDA options
#   tvm_wheels_sidecar_targets()     sidecar, after it: the libraries the wheel takes
#   tvm_wheels_add_cuda_sidecar()    main build: the sidecar as an ExternalProject, installed;
#                                    with CUTLASS, its compiler side (relax.ext.cutlass) too
#   tvm_wheels_add_cuda_runtime()    main build of a variant without nvcc (TVM_WHEEL_CUDA_BUILD
#                                    "runtime"): libtvm_runtime_cuda only, no sidecar

include(CudaToolkit)

# The libraries the sidecar adds to the wheel (tvm/lib): the CUDA runtime, and with
# TVM_WHEEL_CUTLASS the CUTLASS kernel libraries. Sets <out>.
function(_tvm_wheels_sidecar_libs out)
  set(_libs tvm_runtime_cuda)
  if(TVM_WHEEL_CUTLASS)
    list(APPEND _libs fpA_intB_gemm flash_attn tvm_wheels_cutlass)
  endif()
  set(${out} ${_libs} PARENT_SCOPE)
endfunction()

macro(tvm_wheels_cuda_toolkit)
  if(NOT DEFINED TVM_WHEELS_CUDA)
    set(TVM_WHEELS_CUDA "$ENV{TVM_WHEELS_CUDA}")  # pip (default) | system | /path/to/cuda
  endif()
  if(CMAKE_CROSSCOMPILING AND NOT TVM_WHEELS_CUDA MATCHES "/" AND NOT TVM_WHEELS_CUDA_ROOT)
    message(FATAL_ERROR "tvm-wheels: a cross build for ${CMAKE_SYSTEM_PROCESSOR} links libcudart for "
      "${CMAKE_SYSTEM_PROCESSOR}, so it needs a CUDA ${TVM_WHEEL_CUDA} toolkit root of that architecture; "
      "TVM_WHEELS_CUDA is '${TVM_WHEELS_CUDA}'.\n"
      "Fix, one of:\n"
      "  python tools/wheelhouse.py build --variant ${TVM_WHEEL_VARIANT}   (provisions ${TVM_WHEEL_CUDA_PIP} for ${CMAKE_SYSTEM_PROCESSOR})\n"
      "  TVM_WHEELS_CUDA=/path/to/cuda pip wheel ./   (include/ and lib/libcudart.so.*)")
  endif()
  # The arch list: the preset's, unless the user names one (-C cmake.define... or the environment).
  if(DEFINED CACHE{TVM_WHEEL_CUDA_ARCHS})
    set(TVM_WHEEL_CUDA_ARCHS "$CACHE{TVM_WHEEL_CUDA_ARCHS}")
  elseif(NOT "$ENV{TVM_WHEELS_CUDA_ARCHS}" STREQUAL "")
    set(TVM_WHEEL_CUDA_ARCHS "$ENV{TVM_WHEELS_CUDA_ARCHS}")
  endif()
  if(TVM_WHEELS_CUDA_ROOT)  # the sidecar gets the main build's toolkit
    tvm_wheels_find_cuda("${TVM_WHEELS_CUDA_ROOT}" "" "${TVM_WHEEL_CUDA}" "${TVM_WHEEL_CUDA_PIP}")
  else()
    tvm_wheels_find_cuda("${TVM_WHEELS_CUDA}" "${Python_EXECUTABLE}" "${TVM_WHEEL_CUDA}" "${TVM_WHEEL_CUDA_PIP}")
  endif()
  if(NOT TVM_WHEEL_CUDA_BUILD STREQUAL "runtime")  # without nvcc no GPU code is compiled here
    tvm_wheels_check_cuda_archs("${TVM_WHEELS_CUDA_ROOT}/bin/nvcc" "${TVM_WHEEL_CUDA_ARCHS}")
  endif()
  message(STATUS "tvm-wheels: CUDA ${TVM_WHEELS_CUDA_VERSION} from ${TVM_WHEELS_CUDA_SOURCE}: "
    "${TVM_WHEELS_CUDA_ROOT}, archs ${TVM_WHEEL_CUDA_ARCHS}")
endmacro()

# Link directory of the sidecar: the driver stub and an unversioned libcudart.so (NVIDIA's
# wheels have only libcudart.so.<major>). Neither goes into the wheel.
function(_tvm_wheels_cuda_link_dir out)
  set(_dir "${CMAKE_CURRENT_BINARY_DIR}/cuda-link")
  tvm_wheels_make_cuda_stub("${CMAKE_C_COMPILER}" "${TVM_WHEELS_CUDA_ROOT}/include" "${_dir}" _stub)
  file(CREATE_LINK "${TVM_WHEELS_CUDART}" "${_dir}/libcudart.so" SYMBOLIC)
  set(${out} "${_dir}" PARENT_SCOPE)
endfunction()

macro(tvm_wheels_sidecar_options)
  _tvm_wheels_cuda_link_dir(_link_dir)
  set(USE_CUDA "${TVM_WHEELS_CUDA_ROOT}")   # TVM's find_cuda: a toolkit root
  set(USE_CUTLASS ${TVM_WHEEL_CUTLASS})
  set(CMAKE_CUDA_COMPILER "${TVM_WHEELS_CUDA_ROOT}/bin/nvcc")
  set(CMAKE_CUDA_ARCHITECTURES "${TVM_WHEEL_CUDA_ARCHS}")
  set(CMAKE_CUDA_RUNTIME_LIBRARY Shared)    # libcudart.so.<major> from the user's system or nvidia-cuda-runtime
  set(CUDA_CUDA_LIBRARY "${_link_dir}/libcuda.so" CACHE FILEPATH "libcuda link stub (tvm-wheels)" FORCE)
  set(CUDA_CUDART_LIBRARY "${_link_dir}/libcudart.so" CACHE FILEPATH "libcudart (tvm-wheels)" FORCE)
  # nvcc's own link and CMake's compiler check look in lib64/ (a system layout); NVIDIA's
  # wheels have lib/ (libcudadevrt.a, libcudart_static.a).
  string(APPEND CMAKE_CUDA_FLAGS " -L${_link_dir} -L${TVM_WHEELS_CUDA_ROOT}/lib")
  # nvcc takes host-compiler options through -Xcompiler only; TVM's sources are mapped as
  # in the main build (no build-machine path in the binaries).
  string(APPEND CMAKE_CUDA_FLAGS " -Xcompiler=-ffile-prefix-map=${CMAKE_CURRENT_SOURCE_DIR}/="
    " -Xcompiler=-ffile-prefix-map=${CMAKE_CURRENT_BINARY_DIR}/=build/")
  if(TVM_WHEELS_CUDA_JOBS)
    set_property(GLOBAL APPEND PROPERTY JOB_POOLS tvm_wheels_cuda=${TVM_WHEELS_CUDA_JOBS})
  endif()
endmacro()

# The CUDA kernel libraries compile one source at a time, in their own job pool sized by
# nvcc's memory. Not in unity batches: their .cu files define the same templates and helpers
# (fpA_intB's kernel launchers, dispatch_stages) and clash when batched; and one kernel source
# already takes minutes and GBs, so a batch would only serialize them.
function(_tvm_wheels_cuda_kernels)
  foreach(_t IN ITEMS ${ARGN})
    if(TARGET ${_t})
      set_property(TARGET ${_t} PROPERTY UNITY_BUILD OFF)
      if(TVM_WHEELS_CUDA_JOBS)
        set_property(TARGET ${_t} PROPERTY JOB_POOL_COMPILE tvm_wheels_cuda)
      endif()
    endif()
  endforeach()
endfunction()

function(tvm_wheels_sidecar_targets)
  if(TVM_WHEEL_CUTLASS)
    # The fpA_intB binding of TVM's 3rdparty tree is written against the pre-tvm-ffi API and
    # does not compile with TVM v0.26.0: the project's own (sidecar/) takes its place.
    set_property(TARGET fpA_intB_gemm_tvm PROPERTY SOURCES
      "${CMAKE_CURRENT_SOURCE_DIR}/sidecar/fpA_intB_gemm_tvm_binding.cu")
    # What upstream links into libtvm_runtime_extra with CUDA on goes into a library of its
    # own, so that the main build's libtvm_runtime_extra stays the cpu one and never needs
    # libcuda (TVM's autoload would drop it silently on a machine without a driver).
    set(_objs fpA_intB_gemm_tvm fpA_intB_cutlass_objs)
    if(TARGET tvm_cutlass_objs)
      get_target_property(_srcs tvm_cutlass_objs SOURCES)
      foreach(_skip IN LISTS TVM_WHEEL_CUTLASS_SKIP)
        list(FILTER _srcs EXCLUDE REGEX "(^|/)${_skip}$")
      endforeach()
      set_property(TARGET tvm_cutlass_objs PROPERTY SOURCES ${_srcs})
      list(APPEND _objs tvm_cutlass_objs)
    endif()
    list(TRANSFORM _objs REPLACE "(.+)" "$<TARGET_OBJECTS:\\1>" OUTPUT_VARIABLE _obj_files)
    # Without libtvm_runtime_cuda (and so without libcuda): it loads, and registers its
    # functions, on a machine with no driver; a call then fails in the CUDA runtime, by name.
    add_library(tvm_wheels_cutlass SHARED ${_obj_files})
    target_link_libraries(tvm_wheels_cutlass PRIVATE tvm_runtime tvm_ffi_shared fpA_intB_gemm flash_attn
      "${CUDA_CUDART_LIBRARY}")
    set_target_properties(tvm_wheels_cutlass PROPERTIES LINKER_LANGUAGE CXX LINK_OPTIONS "-Wl,--no-undefined")
    _tvm_wheels_cuda_kernels(fpA_intB_gemm flash_attn fpA_intB_gemm_tvm fpA_intB_cutlass_objs tvm_cutlass_objs)
  endif()
  _tvm_wheels_sidecar_libs(_libs)
  # Next to libtvm_runtime in site-packages/tvm/lib; libcudart from the nvidia-cuda-runtime
  # wheel (site-packages/nvidia/cu<major>/lib) when it is installed, else from the system.
  string(REGEX MATCH "^[0-9]+" _major "${TVM_WHEEL_CUDA}")
  foreach(_t IN LISTS _libs)
    set_target_properties(${_t} PROPERTIES
      LIBRARY_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/lib"
      INSTALL_RPATH "\$ORIGIN:\$ORIGIN/../../nvidia/cu${_major}/lib"
      BUILD_WITH_INSTALL_RPATH ON)
  endforeach()
  add_custom_target(tvm_wheels_sidecar_libs ALL)
  add_dependencies(tvm_wheels_sidecar_libs ${_libs})
endfunction()

# CUTLASS's compiler side, the BYOC code generator relax.ext.cutlass: TVM builds it into
# libtvm_compiler only with USE_CUDA and USE_CUTLASS on, though it includes no CUDA header
# (it writes CUDA source as text). It joins the main build's libtvm_compiler, compiled alone:
# the unity batches, and with them every other object, stay the cpu build's.
function(_tvm_wheels_cutlass_codegen)
  set(_src "${TVM_SOURCE_DIR}/src/relax/backend/contrib/cutlass/codegen.cc")
  target_sources(tvm_objs PRIVATE "${_src}")
  set_property(SOURCE "${_src}" DIRECTORY "${TVM_SOURCE_DIR}" PROPERTY SKIP_UNITY_BUILD_INCLUSION ON)
endfunction()

# The headers TVM's CUTLASS BYOC (tvm.contrib.cutlass) compiles the kernels it generates
# against, with nvcc, when a model is built: it looks for them in tvm/3rdparty/ next to the
# installed package (contrib/cutlass/build.py: _get_cutlass_path). Headers only; the fpA_intB
# tree's own copy of CUTLASS is left out (the kernels include the main one).
function(_tvm_wheels_cutlass_headers)
  set(_3rd "${TVM_SOURCE_DIR}/3rdparty")
  foreach(_dir IN ITEMS cutlass/include cutlass/tools/util/include libflash_attn/include)
    install(DIRECTORY "${_3rd}/${_dir}/" DESTINATION "tvm/3rdparty/${_dir}" COMPONENT wheel
      FILES_MATCHING PATTERN "*.h" PATTERN "*.hpp" PATTERN "*.inl" PATTERN "*.cuh")
  endforeach()
  install(DIRECTORY "${_3rd}/cutlass_fpA_intB_gemm/" DESTINATION tvm/3rdparty/cutlass_fpA_intB_gemm
    COMPONENT wheel FILES_MATCHING PATTERN "*.h" PATTERN "*.hpp" PATTERN "*.cuh"
    PATTERN "cutlass_fpA_intB_gemm/cutlass" EXCLUDE)
endfunction()

# Main build: configure and build the sidecar (after the main libraries, so the two builds
# never compete for cores and memory) and install its libraries into tvm/lib.
function(tvm_wheels_add_cuda_sidecar)
  if(TVM_WHEEL_CUTLASS)
    _tvm_wheels_cutlass_codegen()
    _tvm_wheels_cutlass_headers()
  endif()
  include(ExternalProject)
  set(_dir "${CMAKE_CURRENT_BINARY_DIR}/cuda-sidecar")
  _tvm_wheels_sidecar_libs(_libs)
  list(TRANSFORM _libs REPLACE "(.+)" "${_dir}/lib/lib\\1.so" OUTPUT_VARIABLE _files)
  list(JOIN TVM_WHEEL_CUDA_ARCHS "$<SEMICOLON>" _archs)
  ExternalProject_Add(tvm_wheels_cuda_sidecar
    SOURCE_DIR "${CMAKE_CURRENT_SOURCE_DIR}"
    BINARY_DIR "${_dir}"
    CMAKE_GENERATOR "${CMAKE_GENERATOR}"
    CMAKE_ARGS
      -DTVM_WHEELS_SIDECAR=cuda
      -DTVM_WHEEL_VARIANT=${TVM_WHEEL_VARIANT}
      -DTVM_WHEELS_CUDA_ROOT=${TVM_WHEELS_CUDA_ROOT}
      -DTVM_WHEEL_CUDA_ARCHS=${_archs}
      -DTVM_WHEELS_JOBS=${TVM_WHEELS_PLANNED_JOBS}
      -DTVM_WHEELS_CUDA_JOBS=${TVM_WHEELS_CUDA_JOBS}
      -DCMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE}
      -DCMAKE_C_COMPILER=${CMAKE_C_COMPILER}
      -DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER}
      -DCMAKE_MAKE_PROGRAM=${CMAKE_MAKE_PROGRAM}
      -DPython_EXECUTABLE=${Python_EXECUTABLE}
    BUILD_COMMAND "${CMAKE_COMMAND}" --build "${_dir}" --target tvm_wheels_sidecar_libs
    BUILD_ALWAYS ON              # its own ninja decides what is out of date
    BUILD_BYPRODUCTS ${_files}
    INSTALL_COMMAND ""
    USES_TERMINAL_BUILD ON
    DEPENDS tvm_wheel_libs)
  install(FILES ${_files} DESTINATION tvm/lib COMPONENT wheel)
  set(TVM_WHEELS_SIDECAR_INSTALLED "${_libs}" PARENT_SCOPE)  # build info (Install.cmake)
endfunction()

# A CUDA variant without nvcc (TVM_WHEEL_CUDA_BUILD "runtime", aarch64-orin): TVM's CUDA.cmake
# cannot be used (it calls enable_language(CUDA), which needs a CUDA compiler, though its
# runtime sources are C++), so the main build compiles those same sources (TVM's globs) into
# libtvm_runtime_cuda itself, as TVM's CUDA.cmake would: TVM's directory-wide include paths,
# definitions and options, the toolkit's headers on these sources only (every other object
# stays the cpu build's), libtvm_runtime, libcudart and the driver stub. No GPU code is
# compiled: TVM generates it for the board and compiles it there (NVRTC).
function(tvm_wheels_add_cuda_runtime)
  _tvm_wheels_cuda_link_dir(_link_dir)
  file(GLOB _srcs "${TVM_SOURCE_DIR}/src/backend/cuda/runtime/*.cc" "${TVM_SOURCE_DIR}/src/runtime/vm/cuda/*.cc")
  # cuda_module.cc needs CUDA 12.8's cuda.h unless patched (patches/0003-*.patch); the copy's
  # relative includes resolve from its original directory.
  include(Patches)
  set(_module "src/backend/cuda/runtime/cuda_module.cc")
  tvm_wheels_patched_copy("${_module}" _patched)
  list(TRANSFORM _srcs REPLACE "^${TVM_SOURCE_DIR}/${_module}$" "${_patched}")
  add_library(tvm_runtime_cuda SHARED ${_srcs})
  target_include_directories(tvm_runtime_cuda PRIVATE "${TVM_SOURCE_DIR}/src/backend/cuda/runtime")
  foreach(_p INCLUDE_DIRECTORIES COMPILE_DEFINITIONS COMPILE_OPTIONS)
    get_property(_v DIRECTORY "${TVM_SOURCE_DIR}" PROPERTY ${_p})
    set_property(TARGET tvm_runtime_cuda APPEND PROPERTY ${_p} ${_v})
  endforeach()
  target_include_directories(tvm_runtime_cuda SYSTEM PRIVATE "${TVM_WHEELS_CUDA_ROOT}/include")
  if(EXISTS "${TVM_WHEELS_CUDA_ROOT}/../cuda_nvcc/include/crt")  # CUDA 12's wheels: crt/ beside
    target_include_directories(tvm_runtime_cuda SYSTEM PRIVATE "${TVM_WHEELS_CUDA_ROOT}/../cuda_nvcc/include")
  endif()
  target_compile_definitions(tvm_runtime_cuda PRIVATE TVM_RUNTIME_EXPORTS TVM_FFI_EXPORTS)
  if(HIDE_PRIVATE_SYMBOLS)
    target_compile_options(tvm_runtime_cuda PRIVATE -fvisibility=hidden)
  endif()
  target_link_libraries(tvm_runtime_cuda PRIVATE tvm_runtime "${_link_dir}/libcudart.so" "${_link_dir}/libcuda.so")
  # libcudart from the board's CUDA (JetPack), or NVIDIA's runtime wheel in site-packages
  set_target_properties(tvm_runtime_cuda PROPERTIES
    LIBRARY_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/lib"
    INSTALL_RPATH "\$ORIGIN:\$ORIGIN/../../nvidia/cuda_runtime/lib"
    BUILD_WITH_INSTALL_RPATH ON
    LINK_OPTIONS "-Wl,--no-undefined")
  add_dependencies(tvm_wheel_libs tvm_runtime_cuda)
  install(TARGETS tvm_runtime_cuda LIBRARY DESTINATION tvm/lib COMPONENT wheel)
  set(TVM_WHEELS_SIDECAR_INSTALLED tvm_runtime_cuda PARENT_SCOPE)  # build info (Install.cmake)
endfunction()
