# Compiler launcher, warnings and sanitizers shared by every target.
find_program(KF_CCACHE ccache)
if(KF_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  set(CMAKE_C_COMPILER_LAUNCHER   ${KF_CCACHE})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${KF_CCACHE})
  message(STATUS "KernelForge: using ccache (${KF_CCACHE})")
endif()

# The linker: LLVM's lld where the compiler can use it (about four times faster than GNU ld on our
# test executables, which link Qt and LibTorch: most of a warm build's wall time is linking,
# docs/test-loop.md). KF_LINKER=default keeps the toolchain's own; a machine without lld (the GPU
# server) keeps it too.
set(KF_LINKER "lld" CACHE STRING "Linker for -fuse-ld (lld, gold, mold) or 'default'")
if(NOT KF_LINKER STREQUAL "default")
  include(CheckLinkerFlag)
  check_linker_flag(CXX "-fuse-ld=${KF_LINKER}" KF_HAVE_LINKER_${KF_LINKER})
  if(KF_HAVE_LINKER_${KF_LINKER})
    add_link_options(-fuse-ld=${KF_LINKER})
    message(STATUS "KernelForge: linking with ${KF_LINKER}")
  else()
    message(STATUS "KernelForge: ${KF_LINKER} is not usable here; linking with the toolchain's default linker")
  endif()
endif()

add_library(kf_warnings INTERFACE)
target_compile_options(kf_warnings INTERFACE -Wall -Wextra -Wpedantic -Wno-missing-field-initializers)
# GCC 13 flags every `const T& x = f(arg, temporary)` as dangling even when f returns a reference
# into `arg` (our JSON readers do exactly that); the warning is a known false positive there.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 13)
  target_compile_options(kf_warnings INTERFACE -Wno-dangling-reference)
endif()

if(KF_SANITIZE)
  string(REPLACE ";" "," _kf_san "${KF_SANITIZE}")
  add_compile_options(-fsanitize=${_kf_san} -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${_kf_san})
endif()
