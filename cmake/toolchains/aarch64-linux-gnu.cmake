# Cross toolchain for the aarch64 variants, built on x86_64 (cmake/modules/Toolchain.cmake picks
# it when the variant's arch is not the build machine's). Debian/Ubuntu: apt-get install
# g++-aarch64-linux-gnu qemu-user. The compilers carry their own sysroot (/usr/aarch64-linux-gnu),
# which qemu-user also takes to run the aarch64 tools the build needs (LLVM's llvm-config).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
find_program(TVM_WHEELS_CROSS_CXX aarch64-linux-gnu-g++)
if(NOT TVM_WHEELS_CROSS_CXX)
  message(FATAL_ERROR "tvm-wheels: this cross build for aarch64 needs the aarch64-linux-gnu cross compiler, "
    "which is not on PATH. Fix: apt-get install g++-aarch64-linux-gnu qemu-user (Debian/Ubuntu)")
endif()
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(TVM_WHEELS_CROSS_SYSROOT /usr/aarch64-linux-gnu)
# binfmt_misc is not always mounted (containers, CI sandboxes): aarch64 programs run through
# qemu explicitly, never by relying on the kernel to pick an interpreter.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L ${TVM_WHEELS_CROSS_SYSROOT})
set(CMAKE_FIND_ROOT_PATH ${TVM_WHEELS_CROSS_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)   # build tools (patch, git, ccache) are the host's
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
