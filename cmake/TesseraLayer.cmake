# tessera_add_layer(<layer> [HEADER_ONLY] [SOURCES <file>...] [INTERNAL <header>...]
#                   [PUBLIC <target>...] [PRIVATE <target>...])
#
# Defines one layer of the library: the folder src/tessera/<layer> becomes the target
# tessera_<layer> (alias tessera::<layer>, exported as tessera::<layer>).
#   - A static library, position-independent (a Python extension module links it), from the
#     folder's *.cc (tests excluded) plus SOURCES; HEADER_ONLY makes an INTERFACE target instead.
#   - Its headers, src/tessera/<layer>/*.h (test helpers live in tests/cpp_support), form the
#     target's HEADERS file set: installed as include/tessera/<layer>/*.h, so the
#     `#include "tessera/<layer>/x.h"` spelling is the same in the tree and in an install.
#   - INTERNAL: headers of the folder (names, e.g. compresso_format.h) that only the library's own
#     sources include: not in the file set, so not installed (tests/packaging/check_installed_headers.sh
#     checks that no installed header includes one).
#   - PUBLIC: layers (and packages) its headers include; PRIVATE: those only its sources use.
#     For a static library a private dependency is still linked by consumers ($<LINK_ONLY:...>
#     in the exported targets), so tesseraConfig.cmake has to find every one of them.
# Every layer is appended to the global property TESSERA_LAYERS (install and the umbrella).
function(tessera_add_layer layer)
  cmake_parse_arguments(PARSE_ARGV 1 arg "HEADER_ONLY" "" "SOURCES;INTERNAL;PUBLIC;PRIVATE")
  set(target tessera_${layer})
  set(src_root ${PROJECT_SOURCE_DIR}/src)
  set(dir ${src_root}/tessera/${layer})

  file(GLOB headers CONFIGURE_DEPENDS ${dir}/*.h)
  foreach(internal ${arg_INTERNAL})
    if(NOT EXISTS ${dir}/${internal})
      message(FATAL_ERROR "tessera_add_layer(${layer}): INTERNAL names ${internal}, which is not in ${dir}")
    endif()
    list(REMOVE_ITEM headers ${dir}/${internal})
  endforeach()

  if(arg_HEADER_ONLY)
    add_library(${target} INTERFACE)
    set(scope INTERFACE)
  else()
    file(GLOB sources CONFIGURE_DEPENDS ${dir}/*.cc)
    list(FILTER sources EXCLUDE REGEX "_test\\.cc$")
    add_library(${target} STATIC ${sources} ${arg_SOURCES})
    set(scope PUBLIC)
    set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wno-unused-parameter>)
    if(arg_PRIVATE)
      target_link_libraries(${target} PRIVATE ${arg_PRIVATE})
    endif()
  endif()
  add_library(tessera::${layer} ALIAS ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${layer})

  target_sources(${target} ${scope} FILE_SET HEADERS BASE_DIRS ${src_root} FILES ${headers})
  target_include_directories(${target} ${scope}
    $<BUILD_INTERFACE:${src_root}> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_compile_features(${target} ${scope} cxx_std_20)
  if(arg_PUBLIC)
    target_link_libraries(${target} ${scope} ${arg_PUBLIC})
  endif()
  set_property(GLOBAL APPEND PROPERTY TESSERA_LAYERS ${target})
endfunction()
