# SPDX-License-Identifier: Apache-2.0
# The installed package: headers, the CMake package config (sedpack::sedpack and
# one sedpack::<module> target per module, built by sedpack_module in
# src/CMakeLists.txt) and sedpack.pc. Included from src/CMakeLists.txt; the work
# runs at the end of the top-level directory so that it sees every module, wherever
# it was added.

# sedpack_link_order_(<out> <target>...): the sedpack module libraries reachable
# from <target>... through their link dependencies, each before the libraries it
# depends on (the order a static link line needs).
function(sedpack_link_order_ out)
  set(_seen "")
  set(_post "")
  foreach(_t IN LISTS ARGN)
    sedpack_visit_(${_t})
  endforeach()
  list(REVERSE _post)
  set(${out} ${_post} PARENT_SCOPE)
endfunction()

function(sedpack_visit_ target)
  get_target_property(_real ${target} ALIASED_TARGET)
  if(_real)
    set(target ${_real})
  endif()
  if(target IN_LIST _seen)
    return()
  endif()
  list(APPEND _seen ${target})
  get_target_property(_type ${target} TYPE)
  if(_type STREQUAL "INTERFACE_LIBRARY")
    get_target_property(_deps ${target} INTERFACE_LINK_LIBRARIES)
  else()
    get_target_property(_deps ${target} LINK_LIBRARIES)
  endif()
  foreach(_d IN LISTS _deps)
    if(TARGET ${_d} AND _d MATCHES "^sedpack")
      sedpack_visit_(${_d})
    endif()
  endforeach()
  if(_type STREQUAL "STATIC_LIBRARY")
    list(APPEND _post ${target})
  endif()
  set(_seen ${_seen} PARENT_SCOPE)
  set(_post ${_post} PARENT_SCOPE)
endfunction()

function(sedpack_write_package_)
  include(CMakePackageConfigHelpers)
  include(GNUInstallDirs)
  set(SEDPACK_CMAKE_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/sedpack)
  get_property(_modules GLOBAL PROPERTY SEDPACK_MODULES)
  # Every module made with sedpack_module is a component (mpi and hdf5 only when
  # they were built).
  set(SEDPACK_PACKAGE_COMPONENTS ${_modules})

  # ---- headers: the public API, and the generated build configuration
  set(_exclude "")
  if(NOT "hdf5" IN_LIST _modules)
    list(APPEND _exclude PATTERN hdf5 EXCLUDE)
  endif()
  if(NOT "mpi" IN_LIST _modules)
    list(APPEND _exclude PATTERN mpi_comm.h EXCLUDE)
  endif()
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/sedpack
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} ${_exclude})
  install(FILES ${PROJECT_BINARY_DIR}/generated/sedpack/config.h
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/sedpack)

  # ---- CMake package
  install(EXPORT sedpackTargets NAMESPACE sedpack:: DESTINATION ${SEDPACK_CMAKE_INSTALL_DIR})
  configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/sedpackConfig.cmake.in
    ${PROJECT_BINARY_DIR}/package/sedpackConfig.cmake
    INSTALL_DESTINATION ${SEDPACK_CMAKE_INSTALL_DIR})
  write_basic_package_version_file(${PROJECT_BINARY_DIR}/package/sedpackConfigVersion.cmake
    VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
  install(FILES ${PROJECT_BINARY_DIR}/package/sedpackConfig.cmake
                ${PROJECT_BINARY_DIR}/package/sedpackConfigVersion.cmake
          DESTINATION ${SEDPACK_CMAKE_INSTALL_DIR})

  # ---- pkg-config: sedpack.pc describes sedpack::sedpack. The libraries are
  # static, so Libs lists every module in link order and Requires every
  # third-party library they use (pkg-config --libs then emits them all).
  sedpack_link_order_(_libs sedpack)
  set(SEDPACK_PC_LIBS "")
  foreach(_l IN LISTS _libs)
    get_target_property(_name ${_l} OUTPUT_NAME)
    if(NOT _name)
      set(_name ${_l})
    endif()
    string(APPEND SEDPACK_PC_LIBS " -l${_name}")
  endforeach()
  set(SEDPACK_PC_REQUIRES "zlib liblzma liblz4 libzstd libxxhash libcrypto protobuf-lite simdjson")
  if(SEDPACK_HAVE_ISAL)
    string(APPEND SEDPACK_PC_REQUIRES " libisal")
  endif()
  # Debian ships no bzip2.pc; other systems do.
  pkg_check_modules(SEDPACK_PC_BZIP2 QUIET bzip2)
  if(SEDPACK_PC_BZIP2_FOUND)
    string(APPEND SEDPACK_PC_REQUIRES " bzip2")
  else()
    string(APPEND SEDPACK_PC_LIBS " -lbz2")
  endif()
  string(APPEND SEDPACK_PC_LIBS " -pthread")
  foreach(_opt IN LISTS SEDPACK_SANITIZER_LINK_OPTIONS)
    string(APPEND SEDPACK_PC_LIBS " ${_opt}")
  endforeach()
  string(STRIP "${SEDPACK_PC_LIBS}" SEDPACK_PC_LIBS)
  file(RELATIVE_PATH SEDPACK_PC_PREFIX_FROM_PCDIR
       /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
  string(REGEX REPLACE "/$" "" SEDPACK_PC_PREFIX_FROM_PCDIR "${SEDPACK_PC_PREFIX_FROM_PCDIR}")
  configure_file(${PROJECT_SOURCE_DIR}/cmake/sedpack.pc.in ${PROJECT_BINARY_DIR}/package/sedpack.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/package/sedpack.pc
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endfunction()

cmake_language(DEFER DIRECTORY ${PROJECT_SOURCE_DIR} CALL sedpack_write_package_)
