# The toolchain phase's build rules: embeds the iris device headers
# (templates/include/iris) into irisc_lib, so that NVRTC compiles need no source
# tree. Regenerated whenever a header changes (and on reconfigure when one is added).
file(GLOB_RECURSE IRISC_DEVICE_HEADERS CONFIGURE_DEPENDS
     ${PROJECT_SOURCE_DIR}/templates/include/iris/*)
set(IRISC_DEVICE_HEADERS_CPP ${CMAKE_CURRENT_BINARY_DIR}/toolchain/device_headers_embedded.cpp)
add_custom_command(
  OUTPUT ${IRISC_DEVICE_HEADERS_CPP}
  COMMAND ${CMAKE_COMMAND} -DHEADER_ROOT=${PROJECT_SOURCE_DIR}/templates/include
          -DOUTPUT=${IRISC_DEVICE_HEADERS_CPP} -P ${CMAKE_CURRENT_LIST_DIR}/embed_headers.cmake
  DEPENDS ${IRISC_DEVICE_HEADERS} ${CMAKE_CURRENT_LIST_DIR}/embed_headers.cmake
  COMMENT "Embedding the iris device headers"
  VERBATIM)
target_sources(irisc_lib PRIVATE ${IRISC_DEVICE_HEADERS_CPP})
