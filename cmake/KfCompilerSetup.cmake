# Compiler launcher, warnings and sanitizers shared by every target.
find_program(KF_CCACHE ccache)
if(KF_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  set(CMAKE_C_COMPILER_LAUNCHER   ${KF_CCACHE})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${KF_CCACHE})
  message(STATUS "KernelForge: using ccache (${KF_CCACHE})")
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
