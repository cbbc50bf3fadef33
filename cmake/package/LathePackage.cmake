# Installation and the CMake package: `cmake --install <build>
# --prefix P` installs P/bin/lathe and P/lib/cmake/Lathe/, so that a project
# can find_package(Lathe) and call lathe_add_kernels (LatheKernels.cmake).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(LATHE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Lathe)
install(TARGETS lathe EXPORT LatheTargets RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT LatheTargets NAMESPACE Lathe:: DESTINATION ${LATHE_CMAKE_DIR})
configure_package_config_file(
  ${CMAKE_CURRENT_LIST_DIR}/LatheConfig.cmake.in
  ${CMAKE_BINARY_DIR}/cmake/LatheConfig.cmake
  INSTALL_DESTINATION ${LATHE_CMAKE_DIR})
write_basic_package_version_file(
  ${CMAKE_BINARY_DIR}/cmake/LatheConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${CMAKE_BINARY_DIR}/cmake/LatheConfig.cmake
  ${CMAKE_BINARY_DIR}/cmake/LatheConfigVersion.cmake
  ${CMAKE_CURRENT_LIST_DIR}/LatheKernels.cmake
  DESTINATION ${LATHE_CMAKE_DIR})
