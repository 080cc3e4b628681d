# irisc_build_id_source(<out.cpp> <label>): a build rule writing <out.cpp>, which defines
# irisc::compiler_build_id() as a hash of the compiler's and the templates' sources (and
# the host compiler, with <label>), regenerated whenever one of them changes and on
# reconfigure when one is added. The script is compiler/driver/build_id.cmake.
function(irisc_build_id_source out label)
  file(GLOB_RECURSE inputs CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/compiler/* ${PROJECT_SOURCE_DIR}/templates/* ${PROJECT_SOURCE_DIR}/dsl/*)
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DSOURCE_ROOT=${PROJECT_SOURCE_DIR} -DOUTPUT=${out}
            "-DTOOLCHAIN=${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION} ${label}"
            -P ${PROJECT_SOURCE_DIR}/compiler/driver/build_id.cmake
    DEPENDS ${inputs} ${PROJECT_SOURCE_DIR}/compiler/driver/build_id.cmake
    COMMENT "Computing irisc's build id (${label})"
    VERBATIM)
endfunction()
