# Compiler launcher, warnings and sanitizers shared by every target.
find_program(KF_CCACHE ccache)
if(KF_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  set(CMAKE_C_COMPILER_LAUNCHER   ${KF_CCACHE})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${KF_CCACHE})
  message(STATUS "KernelForge: using ccache (${KF_CCACHE})")
endif()

add_library(kf_warnings INTERFACE)
target_compile_options(kf_warnings INTERFACE -Wall -Wextra -Wpedantic -Wno-missing-field-initializers)

if(KF_SANITIZE)
  string(REPLACE ";" "," _kf_san "${KF_SANITIZE}")
  add_compile_options(-fsanitize=${_kf_san} -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${_kf_san})
endif()
