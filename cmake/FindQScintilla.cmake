# FindQScintilla
# --------------
# Debian ships QScintilla for Qt 6 (libqscintilla2-qt6-dev) without a CMake package, so this
# module finds its header and library and provides the imported target QScintilla::QScintilla.
#
# Result variables: QScintilla_FOUND, QScintilla_INCLUDE_DIR, QScintilla_LIBRARY, QScintilla_VERSION.

find_path(QScintilla_INCLUDE_DIR
  NAMES Qsci/qsciscintilla.h
  HINTS ${QT6_INSTALL_PREFIX}/include ${Qt6_DIR}/../../../include
  PATH_SUFFIXES qt6 x86_64-linux-gnu/qt6 aarch64-linux-gnu/qt6)

find_library(QScintilla_LIBRARY
  NAMES qscintilla2_qt6 qscintilla2-qt6
  HINTS ${QT6_INSTALL_PREFIX}/lib)

if(QScintilla_INCLUDE_DIR AND EXISTS "${QScintilla_INCLUDE_DIR}/Qsci/qsciglobal.h")
  file(STRINGS "${QScintilla_INCLUDE_DIR}/Qsci/qsciglobal.h" _qsci_ver
       REGEX "^#define QSCINTILLA_VERSION_STR")
  string(REGEX REPLACE ".*\"([^\"]+)\".*" "\\1" QScintilla_VERSION "${_qsci_ver}")
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(QScintilla
  REQUIRED_VARS QScintilla_LIBRARY QScintilla_INCLUDE_DIR
  VERSION_VAR QScintilla_VERSION
  FAIL_MESSAGE "QScintilla for Qt 6 not found: install libqscintilla2-qt6-dev (packaging/setup.sh does), or configure with -DKF_BUILD_GUI=OFF for a headless build")

if(QScintilla_FOUND AND NOT TARGET QScintilla::QScintilla)
  add_library(QScintilla::QScintilla UNKNOWN IMPORTED)
  set_target_properties(QScintilla::QScintilla PROPERTIES
    IMPORTED_LOCATION "${QScintilla_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${QScintilla_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES "Qt6::Widgets;Qt6::PrintSupport")
  find_package(Qt6 REQUIRED COMPONENTS PrintSupport)
endif()
mark_as_advanced(QScintilla_INCLUDE_DIR QScintilla_LIBRARY)
