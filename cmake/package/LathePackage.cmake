# Installation and the CMake package: `cmake --install <build>
# --prefix P` installs P/bin/lathe, the C++ API (P/lib/liblathe_api.so.*,
# its headers in P/include/lathe/api/) and P/lib/cmake/Lathe/, so that a
# project can find_package(Lathe), call lathe_add_kernels
# (LatheKernels.cmake) and link Lathe::api.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(LATHE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Lathe)
install(TARGETS lathe EXPORT LatheTargets RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS lathe_api_shared EXPORT LatheTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/lathe)
# The API's public headers: lathe.h and what it includes of Lathe's.
install(FILES ${PROJECT_SOURCE_DIR}/api/lathe.h ${PROJECT_SOURCE_DIR}/api/kernel_origin.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/lathe/api)
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
