# SPDX-License-Identifier: Apache-2.0
# Build settings and helpers shared by every CMakeLists.txt of lcpsim. They act on lcpsim's own
# targets only (no add_compile_options), so a project that adds lcpsim with add_subdirectory()
# keeps its own flags.

# lcp_target_defaults(TARGET): C17 without extensions, the POSIX interfaces the sources use,
# warnings, -ffp-contract=off and, when asked, -Werror and the sanitizers.
function(lcp_target_defaults target)
  set_target_properties(${target} PROPERTIES
    C_STANDARD 17
    C_STANDARD_REQUIRED ON
    C_EXTENSIONS OFF)
  # POSIX interfaces (clock_gettime, posix_memalign, readlink) under strict C17.
  target_compile_definitions(${target} PRIVATE _POSIX_C_SOURCE=200809L)
  if(CMAKE_C_COMPILER_ID MATCHES "GNU|Clang")
    # Bitwise determinism: a run repeated, a world restored from a snapshot and the daemon's
    # world against the same world stepped in-process must give identical bits. A fused
    # multiply-add rounds once where a*b + c rounds twice, so a compiler free to contract
    # (GCC's default outside ISO mode, Clang's default "on", and either wherever FMA is
    # enabled, as on the solver's AVX2 path) would make the results depend on the compiler,
    # the flags and the inlining. Every target gets it: the engine, the model (inertia
    # merging), the daemon's world and the tests and benches that compare results.
    # -Wno-psabi: the solver's AVX2 path passes 32-byte vectors to static, always-inlined
    # helpers; GCC notes that this ABI changed in GCC 4.6 and Clang that it differs without
    # AVX enabled, neither of which concerns an interface here.
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-psabi -ffp-contract=off)
    if(LCP_WERROR)
      target_compile_options(${target} PRIVATE -Werror)
    endif()
  endif()
  if(LCP_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=address,undefined -fno-omit-frame-pointer
                                             -fno-sanitize-recover=all)
    target_link_options(${target} PRIVATE -fsanitize=address,undefined)
  endif()
endfunction()

# lcp_library_defaults(TARGET EXPORT_NAME): a library that is installed: hidden symbols but the
# public API (LCP_API_BEGIN/LCP_API_END in lcpsim/export.h), a version on shared builds, and the
# name it has in the lcpsim:: namespace, both in the build tree (an ALIAS, for projects that use
# add_subdirectory) and installed.
function(lcp_library_defaults target export_name)
  lcp_target_defaults(${target})
  set_target_properties(${target} PROPERTIES
    C_VISIBILITY_PRESET hidden
    EXPORT_NAME ${export_name}
    VERSION ${PROJECT_VERSION}
    # Before 1.0 every minor version may change the ABI.
    SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
  add_library(lcpsim::${export_name} ALIAS ${target})
endfunction()

# lcp_install_libraries(TARGET...): installs libraries into the exported set lcpsim::. The
# component "runtime" has what programs need to run (shared libraries, executables, robots),
# "development" what building against lcpsim needs (headers, archives, CMake and pkg-config files).
function(lcp_install_libraries)
  install(TARGETS ${ARGN} EXPORT lcpsimTargets
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime
            NAMELINK_COMPONENT development
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT development)
endfunction()

# lcp_pkg_config(NAME LIBRARY DESCRIPTION [REQUIRES ...] [REQUIRES_PRIVATE ...]
#                [LIBS_PRIVATE ...] [VARIABLES ...]): writes NAME.pc for the library and installs it.
# The prefix is found from the file's own place (${pcfiledir}), so an installed tree may be
# moved. With static libraries the private dependencies are public ones: a program linking
# liblcpsim_model.a needs libxml2 even without `pkg-config --static`.
function(lcp_pkg_config name)
  cmake_parse_arguments(PARSE_ARGV 1 PC "" "LIBRARY;DESCRIPTION"
                        "REQUIRES;REQUIRES_PRIVATE;LIBS_PRIVATE;VARIABLES")
  if(NOT BUILD_SHARED_LIBS)
    list(APPEND PC_REQUIRES ${PC_REQUIRES_PRIVATE})
    set(PC_REQUIRES_PRIVATE "")
    set(PC_LIBS ${PC_LIBS_PRIVATE})
    set(PC_LIBS_PRIVATE "")
  endif()
  # Fields and variables only when they have something to say.
  set(LCP_PC_DEPENDENCIES "")
  if(PC_REQUIRES)
    list(JOIN PC_REQUIRES " " value)
    string(APPEND LCP_PC_DEPENDENCIES "Requires: ${value}\n")
  endif()
  if(PC_REQUIRES_PRIVATE)
    list(JOIN PC_REQUIRES_PRIVATE " " value)
    string(APPEND LCP_PC_DEPENDENCIES "Requires.private: ${value}\n")
  endif()
  list(JOIN PC_LIBS " " LCP_PC_LIBS)
  if(LCP_PC_LIBS)
    set(LCP_PC_LIBS " ${LCP_PC_LIBS}")
  endif()
  set(LCP_PC_LIBS_PRIVATE "")
  if(PC_LIBS_PRIVATE)
    list(JOIN PC_LIBS_PRIVATE " " LCP_PC_LIBS_PRIVATE)
    set(LCP_PC_LIBS_PRIVATE "Libs.private: ${LCP_PC_LIBS_PRIVATE}")
  endif()
  set(LCP_PC_VARIABLES "")
  foreach(variable ${PC_VARIABLES})
    string(APPEND LCP_PC_VARIABLES "${variable}\n")
  endforeach()
  set(LCP_PC_NAME ${name})
  set(LCP_PC_LIBRARY ${PC_LIBRARY})
  set(LCP_PC_DESCRIPTION ${PC_DESCRIPTION})
  set(pc_dir ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig)
  file(RELATIVE_PATH LCP_PC_PREFIX_FROM_PCFILEDIR ${pc_dir} ${CMAKE_INSTALL_PREFIX})
  string(REGEX REPLACE "/$" "" LCP_PC_PREFIX_FROM_PCFILEDIR "${LCP_PC_PREFIX_FROM_PCFILEDIR}")
  foreach(dir LIBDIR INCLUDEDIR DATADIR)
    if(IS_ABSOLUTE "${CMAKE_INSTALL_${dir}}")
      set(LCP_PC_${dir} "${CMAKE_INSTALL_${dir}}")
    else()
      set(LCP_PC_${dir} "\${prefix}/${CMAKE_INSTALL_${dir}}")
    endif()
  endforeach()
  configure_file(${PROJECT_SOURCE_DIR}/cmake/lcpsim-library.pc.in
                 ${PROJECT_BINARY_DIR}/pkgconfig/${name}.pc @ONLY)
  if(LCP_INSTALL)
    install(FILES ${PROJECT_BINARY_DIR}/pkgconfig/${name}.pc
            DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT development)
  endif()
endfunction()

# lcp_export_pkg_dependency(PREFIX MODULE): the exported targets name PkgConfig::PREFIX, which
# lcpsimConfig.cmake then finds with pkg-config as this build did.
function(lcp_export_pkg_dependency prefix module)
  set_property(GLOBAL APPEND PROPERTY LCP_EXPORTED_PKG_DEPENDENCIES "${prefix}=${module}")
endfunction()
