# Run by cpack (CPACK_PROJECT_CONFIG_FILE, cmake/KfPackage.cmake): the .deb's Depends are the
# Debian packages of the shared libraries the packaged programs link, as dpkg-shlibdeps finds
# them, so the list cannot drift from what the build links. Libraries in no Debian package
# (LibTorch, CUDA: found at run time, docs/packaging.md) are left out.
# Inputs: KF_DEB_ELF_FILES, KF_DEB_PRIVATE_DIRS (KfDebDependsInputs.cmake, written at configure).
if(NOT CPACK_GENERATOR STREQUAL "DEB")
  return()
endif()
find_program(KF_DPKG_SHLIBDEPS dpkg-shlibdeps)
if(NOT KF_DPKG_SHLIBDEPS)
  message(FATAL_ERROR "dpkg-shlibdeps not found: it computes the package's Depends; apt-get install dpkg-dev")
endif()
# dpkg-shlibdeps wants a debian/control to read; a minimal one in a folder of its own.
set(work "${CPACK_PACKAGE_DIRECTORY}/kf-shlibdeps")
file(MAKE_DIRECTORY "${work}/debian")
file(WRITE "${work}/debian/control" "Source: kernelforge\n\nPackage: kernelforge\nArchitecture: any\n")
set(args -O --ignore-missing-info)
foreach(dir IN LISTS KF_DEB_PRIVATE_DIRS)
  if(dir)
    list(APPEND args "-l${dir}")
  endif()
endforeach()
execute_process(COMMAND ${KF_DPKG_SHLIBDEPS} ${args} ${KF_DEB_ELF_FILES}
                WORKING_DIRECTORY "${work}" OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "dpkg-shlibdeps failed (${rc}) on ${KF_DEB_ELF_FILES}:\n${err}")
endif()
string(REGEX MATCH "shlibs:Depends=([^\n]*)" _ "${out}")
set(deps "${CMAKE_MATCH_1}")
if(NOT deps MATCHES "libqt6widgets6")
  message(FATAL_ERROR "dpkg-shlibdeps gave no Qt 6 package for kernelforge; its output was: ${out}\n${err}")
endif()
set(CPACK_DEBIAN_PACKAGE_DEPENDS "${deps}")
message(STATUS "kernelforge.deb Depends: ${deps}")
