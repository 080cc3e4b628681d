# iris_add_fatbin(<target> SYMBOL <c_symbol> SOURCES <file.cu> [ARCHS 90 80]
#                 [FORMAT fatbin|cubin|ptx])
#
# Compiles a CUDA source with nvcc into a code object, embeds it as a byte array and
# links it into <target>. The default fatbin holds SASS for each arch plus PTX of the
# oldest (so newer GPUs still load it); cubin is SASS for the first arch; ptx is
# the first arch's PTX text. The bytes are reachable as `iris::embedded::<c_symbol>()` (a std::span)
# declared in <iris/embedded.hpp>; load them with iris::Context::load_module.
set(IRIS_DEFAULT_CUDA_ARCHS 90 80 CACHE STRING "SASS targets of embedded fatbins")

function(iris_add_fatbin target)
  cmake_parse_arguments(ARG "" "SYMBOL;FORMAT" "SOURCES;ARCHS;INCLUDES" ${ARGN})
  if(NOT ARG_FORMAT)
    set(ARG_FORMAT fatbin)
  endif()
  if(NOT ARG_ARCHS)
    set(ARG_ARCHS ${IRIS_DEFAULT_CUDA_ARCHS})
  endif()
  set(gencode)
  foreach(arch IN LISTS ARG_ARCHS)
    list(APPEND gencode -gencode arch=compute_${arch},code=sm_${arch})
  endforeach()
  list(GET ARG_ARCHS -1 oldest)
  list(APPEND gencode -gencode arch=compute_${oldest},code=compute_${oldest})
  list(GET ARG_ARCHS 0 first)
  if(ARG_FORMAT STREQUAL "cubin")
    set(gencode -arch=sm_${first})
  elseif(ARG_FORMAT STREQUAL "ptx")
    set(gencode -arch=compute_${first})
  elseif(NOT ARG_FORMAT STREQUAL "fatbin")
    message(FATAL_ERROR "iris_add_fatbin: FORMAT must be fatbin, cubin or ptx (got ${ARG_FORMAT})")
  endif()
  set(incs -I${PROJECT_SOURCE_DIR}/templates/include)
  foreach(inc IN LISTS ARG_INCLUDES)
    list(APPEND incs -I${inc})
  endforeach()

  file(GLOB_RECURSE hdrs CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/templates/include/*.hpp)
  set(objs)
  foreach(src IN LISTS ARG_SOURCES)
    get_filename_component(abs ${src} ABSOLUTE)
    get_filename_component(stem ${src} NAME_WE)
    set(out ${CMAKE_CURRENT_BINARY_DIR}/${target}_${ARG_SYMBOL}_${stem}.${ARG_FORMAT})
    add_custom_command(
      OUTPUT ${out}
      COMMAND ${CUDAToolkit_NVCC_EXECUTABLE} -${ARG_FORMAT} -std=c++17 -O3 -lineinfo
              ${gencode} ${incs} -o ${out} ${abs}
      DEPENDS ${abs} ${hdrs}
      COMMENT "nvcc -${ARG_FORMAT} ${src}"
      VERBATIM)
    list(APPEND objs ${out})
  endforeach()
  list(LENGTH objs n)
  if(NOT n EQUAL 1)
    message(FATAL_ERROR "iris_add_fatbin: one source per SYMBOL (got ${n})")
  endif()
  set(cpp ${CMAKE_CURRENT_BINARY_DIR}/${target}_${ARG_SYMBOL}_embedded.cpp)
  add_custom_command(
    OUTPUT ${cpp}
    COMMAND iris_embed ${objs} ${ARG_SYMBOL} ${cpp}
    DEPENDS ${objs} iris_embed
    COMMENT "embed ${ARG_SYMBOL}"
    VERBATIM)
  target_sources(${target} PRIVATE ${cpp})
endfunction()
