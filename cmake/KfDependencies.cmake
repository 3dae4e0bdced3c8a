# Every external dependency is found here, through its CMake package where one exists.
# A dependency that is missing fails the configure step with a sentence saying how to get it.

if(KF_THIRD_PARTY_DIR)
  list(PREPEND CMAKE_PREFIX_PATH ${KF_THIRD_PARTY_DIR})
  # The copied headers must win everywhere: the GPU server has another nlohmann/json (3.11.3, one
  # template parameter more) in /usr/include, which targets would otherwise mix with ours.
  include_directories(BEFORE ${KF_THIRD_PARTY_DIR})
endif()
# Header locations found in one KF_THIRD_PARTY_DIR must not outlive a change of it (or the
# folder): search again whenever it changes.
if(NOT "${KF_THIRD_PARTY_DIR}" STREQUAL "${_KF_THIRD_PARTY_DIR_SEARCHED}")
  unset(KF_NLOHMANN_INCLUDE CACHE)
  unset(KF_CLI11_INCLUDE CACHE)
  unset(KF_XXHASH_INCLUDE CACHE)
  unset(KF_DTL_INCLUDE CACHE)
  set(_KF_THIRD_PARTY_DIR_SEARCHED "${KF_THIRD_PARTY_DIR}" CACHE INTERNAL "")
endif()

# kf_require_header(<var> <header> <what> <package>): the folder with <header> in <var> (a cache
# variable; KF_THIRD_PARTY_DIR first), or a configure error saying how to get it.
function(kf_require_header var header what package)
  find_path(${var} ${header} HINTS ${KF_THIRD_PARTY_DIR} ${KF_THIRD_PARTY_DIR}/include)
  if(NOT ${var})
    message(FATAL_ERROR "${what} not found: install ${package} "
                        "or pass -DKF_THIRD_PARTY_DIR=<folder with ${header}>")
  endif()
endfunction()

# kf_require_library(<target> <prefix> <header> <library> <what> <package>): an interface target for a
# library with its headers (in <prefix>_INCLUDE and <prefix>_LIBRARY, KF_THIRD_PARTY_DIR first), or
# a configure error saying how to get it.
function(kf_require_library target prefix header library what package)
  find_path(${prefix}_INCLUDE ${header} HINTS ${KF_THIRD_PARTY_DIR}/include ${KF_THIRD_PARTY_DIR})
  find_library(${prefix}_LIBRARY NAMES ${library} HINTS ${KF_THIRD_PARTY_DIR}/lib)
  if(NOT ${prefix}_INCLUDE OR NOT ${prefix}_LIBRARY)
    message(FATAL_ERROR "${what} not found: install ${package} (packaging/setup.sh does) "
                        "or pass -DKF_THIRD_PARTY_DIR=<folder with include/${header} and lib/lib${library}.so>")
  endif()
  add_library(${target} INTERFACE)
  target_include_directories(${target} SYSTEM INTERFACE ${${prefix}_INCLUDE})
  target_link_libraries(${target} INTERFACE ${${prefix}_LIBRARY})
endfunction()

# nlohmann puts its version in an inline ABI namespace (json_abi_v3_11_2 vs _v3_11_3). A GPU server
# can see a second copy through LibTorch's or the system's include paths, and translation units
# would then disagree on symbol names; 3.11 patch releases are layout-compatible, so drop it.
add_compile_definitions(NLOHMANN_JSON_NAMESPACE_NO_VERSION=1)
find_package(nlohmann_json 3.10 QUIET)
if(NOT nlohmann_json_FOUND)
  kf_require_header(KF_NLOHMANN_INCLUDE nlohmann/json.hpp nlohmann/json "nlohmann-json3-dev (packaging/setup.sh does)")
  add_library(nlohmann_json::nlohmann_json INTERFACE IMPORTED)
  target_include_directories(nlohmann_json::nlohmann_json INTERFACE ${KF_NLOHMANN_INCLUDE})
endif()

find_package(CLI11 2.1 QUIET CONFIG)
if(NOT CLI11_FOUND)
  kf_require_header(KF_CLI11_INCLUDE CLI/CLI.hpp CLI11 "libcli11-dev (packaging/setup.sh does)")
  add_library(CLI11::CLI11 INTERFACE IMPORTED)
  target_include_directories(CLI11::CLI11 INTERFACE ${KF_CLI11_INCLUDE})
endif()

# xxHash is used header-only (XXH_INLINE_ALL), so a copied xxhash.h is enough on a GPU server.
kf_require_header(KF_XXHASH_INCLUDE xxhash.h xxhash.h "libxxhash-dev (packaging/setup.sh does)")
add_library(kf_xxhash INTERFACE)
target_include_directories(kf_xxhash SYSTEM INTERFACE ${KF_XXHASH_INCLUDE})
target_compile_definitions(kf_xxhash INTERFACE XXH_INLINE_ALL)

# libzip reads and writes .cast packages (engine/cast). Debian's libzip-dev; on the GPU server a
# copy of that library and its two headers in KF_THIRD_PARTY_DIR (packaging/vendor-third-party.sh).
kf_require_library(kf_libzip KF_LIBZIP zip.h zip libzip libzip-dev)

# yaml-cpp reads YAML: skill front matter (resources/skills) and GPU MODE task.yml files
# (engine/agent). Debian's libyaml-cpp-dev; on the GPU server a copy of its headers and library in
# KF_THIRD_PARTY_DIR (packaging/vendor-third-party.sh). Only kf_engine_agent links it.
kf_require_library(kf_yaml KF_YAMLCPP yaml-cpp/yaml.h yaml-cpp yaml-cpp libyaml-cpp-dev)

# pugixml reads compute-sanitizer's XML reports (engine/sanitize). Debian's libpugixml-dev; on the
# GPU server a copy of its two headers and its library in KF_THIRD_PARTY_DIR
# (packaging/vendor-third-party.sh). Only kf_engine_sanitize links it.
kf_require_library(kf_pugixml KF_PUGIXML pugixml.hpp pugixml pugixml libpugixml-dev)

# libcurl talks to language models over HTTP(S) (engine/synth). Debian's libcurl4-openssl-dev; the
# GPU server has libcurl's headers and library of its own. Only kf_engine_synth links it.
find_package(CURL 7.80 REQUIRED)
add_library(kf_curl INTERFACE)
target_link_libraries(kf_curl INTERFACE CURL::libcurl)

# Only headers of the toolkit are used at build time (nvrtc.h, cuda.h, cupti, cuda_occupancy.h):
# the libraries are loaded at run time, so binaries start on machines without a driver.
find_package(CUDAToolkit 12.4 REQUIRED)
add_library(kf_cuda_headers INTERFACE)
target_include_directories(kf_cuda_headers SYSTEM INTERFACE ${CUDAToolkit_INCLUDE_DIRS})
target_compile_definitions(kf_cuda_headers INTERFACE
  KF_CUDA_TOOLKIT_ROOT="${CUDAToolkit_LIBRARY_ROOT}")
# CUPTI's headers live beside the toolkit's, or under extras/CUPTI in some installs.
find_path(KF_CUPTI_INCLUDE cupti_range_profiler.h
  HINTS ${CUDAToolkit_INCLUDE_DIRS} ${CUDAToolkit_LIBRARY_ROOT}/extras/CUPTI/include
        ${CUDAToolkit_LIBRARY_ROOT}/include)
if(KF_WITH_CUPTI AND NOT KF_CUPTI_INCLUDE)
  message(FATAL_ERROR "CUPTI headers (cupti_range_profiler.h, CUDA 12.6 or newer) not found next to the CUDA "
                      "toolkit: install the toolkit's CUPTI, or configure with -DKF_WITH_CUPTI=OFF (no counters)")
endif()
if(KF_WITH_CUPTI)
  target_include_directories(kf_cuda_headers SYSTEM INTERFACE ${KF_CUPTI_INCLUDE})
endif()

if(KF_BUILD_GUI)
  find_package(Qt6 6.4 REQUIRED COMPONENTS Core Gui Widgets Concurrent Charts Test DBus)
  find_package(QScintilla REQUIRED)
  # dtl (header-only) diffs two kernel versions in the registry browser.
  kf_require_header(KF_DTL_INCLUDE dtl/dtl.hpp "dtl (diff template library)" libdtl-dev)
elseif(KF_BUILD_TESTS)
  # Unit tests are Qt Test; without Qt only the CLI-driven GPU suite is built.
  find_package(Qt6 6.4 QUIET COMPONENTS Core Test)
endif()

# LibTorch (the runner's inputs, reference and baseline). The pinned PyTorch wheel carries the
# CMake package; packaging/setup.sh installs it into .venv. Without it the runner is not built
# and the configure step says so.
option(KF_WITH_TORCH "Build kforge-runner against LibTorch" ON)
if(KF_WITH_TORCH)
  if(NOT Torch_DIR)
    foreach(_py ${PROJECT_SOURCE_DIR}/.venv/bin/python3 python3)
      execute_process(COMMAND ${_py} -c "import torch.utils; print(torch.utils.cmake_prefix_path)"
                      OUTPUT_VARIABLE _kf_torch_prefix OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET
                      RESULT_VARIABLE _kf_torch_rc)
      if(_kf_torch_rc EQUAL 0 AND EXISTS "${_kf_torch_prefix}")
        list(APPEND CMAKE_PREFIX_PATH "${_kf_torch_prefix}")
        break()
      endif()
    endforeach()
  endif()
  # The Python that imports this PyTorch: the .cast runtime's tests run under it.
  foreach(_py ${PROJECT_SOURCE_DIR}/.venv/bin/python3 python3)
    execute_process(COMMAND ${_py} -c "import torch" RESULT_VARIABLE _kf_py_rc OUTPUT_QUIET ERROR_QUIET)
    if(_kf_py_rc EQUAL 0)
      set(KF_TORCH_PYTHON ${_py})
      break()
    endif()
  endforeach()
  # LibTorch's package enables CUDA with CMAKE_CUDA_STANDARD = CMAKE_CXX_STANDARD (20), for which
  # CMake 3.25 (Debian 12) knows no nvcc flag, and probes for GPUs with a try_run unless
  # TORCH_CUDA_ARCH_LIST is set. We compile no .cu with nvcc (kernels go through NVRTC), so pin
  # both to harmless values; either can still be overridden.
  if(NOT DEFINED CMAKE_CUDA_STANDARD)
    set(CMAKE_CUDA_STANDARD 17)
  endif()
  if(NOT DEFINED TORCH_CUDA_ARCH_LIST AND NOT DEFINED ENV{TORCH_CUDA_ARCH_LIST})
    set(TORCH_CUDA_ARCH_LIST "9.0")
  endif()
  find_package(Torch QUIET)
  if(Torch_FOUND)
    message(STATUS "KernelForge: LibTorch ${Torch_VERSION} found; building kforge-runner")
  else()
    message(WARNING "KernelForge: LibTorch not found, so kforge-runner (verify, bench) is not built. "
                    "Run packaging/setup.sh (installs the pinned torch wheel into .venv) or pass "
                    "-DCMAKE_PREFIX_PATH=$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)')")
  endif()
endif()
