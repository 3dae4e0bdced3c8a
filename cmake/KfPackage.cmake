# Installing KernelForge under a prefix and the Debian package built from that (docs/packaging.md).
# Included last by the top-level CMakeLists.txt, so these rules run after every target's own.
#
#   <prefix>/bin                        kernelforge, kforge
#   <prefix>/libexec/kernelforge        kforge-runner, kforge-cast: launchers that find LibTorch,
#                                       then exec the real programs kforge-runner.bin, kforge-cast.bin
#   <prefix>/share/kernelforge          examples, templates, skills, prelude, Python harnesses
#   <prefix>/share/{applications,metainfo,icons,man}   the desktop integration and kforge.1
#
# The programs find these relative to themselves (engine/core/InstallLayout.h).
include(GNUInstallDirs)

install(TARGETS kforge RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET kernelforge)
  install(TARGETS kernelforge RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

# The LibTorch programs: installed under their own name (stripped, no RUNPATH: LibTorch is
# wherever the user put it), renamed to <name>.bin, and the launcher takes the name.
set(KF_LIBEXEC ${CMAKE_INSTALL_LIBEXECDIR}/kernelforge)
foreach(program kforge-runner kforge-cast)
  if(NOT TARGET ${program})
    continue()
  endif()
  set_target_properties(${program} PROPERTIES INSTALL_RPATH "" INSTALL_RPATH_USE_LINK_PATH FALSE)
  install(TARGETS ${program} RUNTIME DESTINATION ${KF_LIBEXEC})
  install(CODE "file(RENAME \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${KF_LIBEXEC}/${program}\"
                            \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${KF_LIBEXEC}/${program}.bin\")")
  install(PROGRAMS ${PROJECT_SOURCE_DIR}/packaging/deb/libtorch-launcher.sh DESTINATION ${KF_LIBEXEC} RENAME ${program})
endforeach()
install(PROGRAMS ${PROJECT_SOURCE_DIR}/packaging/deb/kernelforge-setup-libtorch DESTINATION ${CMAKE_INSTALL_SBINDIR})

set(KF_DATA ${CMAKE_INSTALL_DATADIR}/kernelforge)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/resources/examples ${PROJECT_SOURCE_DIR}/resources/templates
                  ${PROJECT_SOURCE_DIR}/resources/skills ${PROJECT_SOURCE_DIR}/resources/prelude
        DESTINATION ${KF_DATA} PATTERN "__pycache__" EXCLUDE)
# The sanitizer view's fixture report, opened by `kernelforge --screenshot` on a machine without a GPU.
install(FILES ${PROJECT_SOURCE_DIR}/resources/screenshots/vector_add-oob.fixture.json DESTINATION ${KF_DATA}/screenshots)
# The Python harnesses kforge and the workbench start (torch.compile baseline, .cast runtime,
# problem importer), one folder each for PYTHONPATH; the pins kernelforge-setup-libtorch installs.
foreach(harness cast:kernelforge_cast baseline:kernelforge_baseline agent:kernelforge_import)
  string(REPLACE ":" ";" harness "${harness}")
  list(GET harness 0 folder)
  list(GET harness 1 module)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/device/${folder}/python/${module} DESTINATION ${KF_DATA}/python/${folder}
          PATTERN "__pycache__" EXCLUDE)
endforeach()
install(FILES ${PROJECT_SOURCE_DIR}/packaging/python-requirements.txt DESTINATION ${KF_DATA})

# Desktop integration (resources/desktop): one id everywhere.
set(KF_APP_ID dev.kernelforge.KernelForge)
install(FILES ${PROJECT_SOURCE_DIR}/resources/desktop/${KF_APP_ID}.desktop DESTINATION ${CMAKE_INSTALL_DATADIR}/applications)
install(FILES ${PROJECT_SOURCE_DIR}/resources/desktop/${KF_APP_ID}.metainfo.xml DESTINATION ${CMAKE_INSTALL_DATADIR}/metainfo)
install(FILES ${PROJECT_SOURCE_DIR}/resources/desktop/${KF_APP_ID}.svg
        DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps)

# kforge.1 from the CLI's own help (help2man), so the page cannot drift from the program.
find_program(KF_HELP2MAN help2man)
if(KF_HELP2MAN)
  set(KF_MAN ${CMAKE_CURRENT_BINARY_DIR}/man/kforge.1)
  add_custom_command(OUTPUT ${KF_MAN}.gz
    COMMAND ${CMAKE_COMMAND} -DKFORGE=$<TARGET_FILE:kforge> -DHELP2MAN=${KF_HELP2MAN} -DOUT=${KF_MAN}
            -DINCLUDE=${PROJECT_SOURCE_DIR}/packaging/deb/kforge.h2m -P ${PROJECT_SOURCE_DIR}/cmake/KfManPage.cmake
    DEPENDS kforge ${PROJECT_SOURCE_DIR}/cmake/KfManPage.cmake ${PROJECT_SOURCE_DIR}/packaging/deb/kforge.h2m
    COMMENT "kforge.1 from kforge --help" VERBATIM)
  add_custom_target(kforge-man ALL DEPENDS ${KF_MAN}.gz)
  install(FILES ${KF_MAN}.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
elseif(KF_PACKAGE)
  message(FATAL_ERROR "help2man not found: the package's man page kforge.1 is made with it; "
                      "install help2man (packaging/setup.sh does)")
endif()

if(NOT KF_PACKAGE)
  return()
endif()
foreach(target kernelforge kforge-runner kforge-cast kf_cast)
  if(NOT TARGET ${target})
    message(FATAL_ERROR "KF_PACKAGE: the package needs ${target}; it is not built here "
                        "(kernelforge needs Qt 6 and QScintilla, the others LibTorch: run packaging/setup.sh)")
  endif()
endforeach()

# libkf_cast.so as packaged finds LibTorch the way the launchers do (LD_LIBRARY_PATH), never
# through the build machine's venv (device/cast/cpp/CMakeLists.txt sets that RPATH for a
# developer's own install).
set_target_properties(kf_cast PROPERTIES INSTALL_RPATH "" INSTALL_RPATH_USE_LINK_PATH FALSE)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME kernelforge)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "KernelForge")
set(CPACK_PACKAGE_CONTACT "KernelForge maintainers <maintainers@kernelforge.dev>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "workbench for CUDA kernels proven correct and proven fast")
# The body only: CPack puts the summary on the Description line, indents every line and turns
# an empty line into " .".
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
  "KernelForge edits, compiles (NVRTC), verifies against LibTorch, benchmarks and profiles CUDA kernels. It ships the Qt workbench (kernelforge), the command line (kforge) and the GPU runner.

LibTorch is not part of this package: run kernelforge-setup-libtorch as root to install the pinned PyTorch wheel, or name a LibTorch folder in /etc/kernelforge/libtorch or $KF_LIBTORCH_DIR. The CUDA driver, NVRTC and CUPTI are loaded at run time when present.")
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://kernelforge.dev")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3, python3-venv")
set(CPACK_STRIP_FILES TRUE)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${PROJECT_SOURCE_DIR}/packaging/deb/postinst
                                       ${PROJECT_SOURCE_DIR}/packaging/deb/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION TRUE)
# libkf_cast.so lands in the loader's path: the package registers it (shlibs, ldconfig trigger).
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
# Depends: computed when cpack runs, from what the built programs link (KfDebDepends.cmake).
set(KF_DEB_ELF_FILES $<TARGET_FILE:kernelforge> $<TARGET_FILE:kforge> $<TARGET_FILE:kforge-runner>
                     $<TARGET_FILE:kforge-cast> $<TARGET_FILE:kf_cast>)
set(KF_DEB_PRIVATE_DIRS ${TORCH_INSTALL_PREFIX}/lib ${CUDAToolkit_LIBRARY_DIR} $<TARGET_FILE_DIR:kf_cast>)
file(GENERATE OUTPUT ${PROJECT_BINARY_DIR}/KfDebDependsInputs.cmake CONTENT
  "set(KF_DEB_ELF_FILES \"${KF_DEB_ELF_FILES}\")\nset(KF_DEB_PRIVATE_DIRS \"${KF_DEB_PRIVATE_DIRS}\")\n")
set(CPACK_PROJECT_CONFIG_FILE ${PROJECT_BINARY_DIR}/KfCPackProject.cmake)
file(WRITE ${CPACK_PROJECT_CONFIG_FILE}
  "include(\"${PROJECT_BINARY_DIR}/KfDebDependsInputs.cmake\")\ninclude(\"${PROJECT_SOURCE_DIR}/cmake/KfDebDepends.cmake\")\n")
include(CPack)
