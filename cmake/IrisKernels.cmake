# iris_add_kernels(<target> FILES <a.iris>... [GPU_TARGET sm_90a] [DEFINES NAME=VALUE...])
#
# Compiles .iris files with irisc at build time. For each <stem>.iris:
#   - <stem>.iris.hpp on <target>'s include path: the cubin, the host code object and a
#     typed launcher class (iris_kernels::<stem>::Kernels) -- the embedded path;
#   - <stem>.cubin next to <target>'s binary (what `irisc file.iris` makes), <stem>.host
#     there (`irisc --target=host`, for the host backend) and a copy of <stem>.iris
#     there (what the JIT compiles at run time).
# irisc is the target iris::irisc: the one this project builds (an alias), or the
# installed one when this file comes from the Iris package (find_package(Iris)).
function(iris_add_kernels target)
  cmake_parse_arguments(ARG "" "GPU_TARGET" "FILES;DEFINES" ${ARGN})
  if(NOT ARG_GPU_TARGET)
    set(ARG_GPU_TARGET sm_90a)
  endif()
  set(defs)
  foreach(d IN LISTS ARG_DEFINES)
    list(APPEND defs -D${d})
  endforeach()
  get_target_property(outdir ${target} RUNTIME_OUTPUT_DIRECTORY)
  if(NOT outdir)
    set(outdir ${CMAKE_CURRENT_BINARY_DIR})
  endif()
  set(gen ${CMAKE_CURRENT_BINARY_DIR}/${target}_iris)
  set(outs)
  foreach(f IN LISTS ARG_FILES)
    get_filename_component(abs ${f} ABSOLUTE)
    get_filename_component(stem ${f} NAME_WE)
    set(hdr ${gen}/${stem}.iris.hpp)
    set(cubin ${outdir}/${stem}.cubin)
    set(host ${outdir}/${stem}.host)
    set(copy ${outdir}/${stem}.iris)
    add_custom_command(
      OUTPUT ${hdr} ${cubin} ${host} ${copy}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${gen}
      COMMAND iris::irisc ${abs} --emit=header --target=${ARG_GPU_TARGET} ${defs} -o ${hdr}
      COMMAND iris::irisc ${abs} --target=${ARG_GPU_TARGET} ${defs} -o ${cubin}
      COMMAND iris::irisc ${abs} --target=host ${defs} -o ${host}
      COMMAND ${CMAKE_COMMAND} -E copy ${abs} ${copy}
      DEPENDS ${abs} iris::irisc
      COMMENT "irisc ${f}"
      VERBATIM)
    list(APPEND outs ${hdr} ${cubin} ${host} ${copy})
  endforeach()
  add_custom_target(${target}_iris_kernels DEPENDS ${outs})
  add_dependencies(${target} ${target}_iris_kernels)
  target_include_directories(${target} PRIVATE ${gen})
endfunction()
