# irisc_stdlib_source(<out.cpp>): a build rule writing <out.cpp>, which defines
# irisc::stdlib_files() with every .iris file under dsl/ (the standard library `import`
# finds), regenerated whenever one changes and on reconfigure when one is added. The
# script is compiler/driver/embed_stdlib.cmake.
function(irisc_stdlib_source out)
  file(GLOB_RECURSE inputs CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/dsl/*.iris)
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DDSL_ROOT=${PROJECT_SOURCE_DIR}/dsl -DOUTPUT=${out}
            -P ${PROJECT_SOURCE_DIR}/compiler/driver/embed_stdlib.cmake
    DEPENDS ${inputs} ${PROJECT_SOURCE_DIR}/compiler/driver/embed_stdlib.cmake
    COMMENT "Embedding the .iris standard library (dsl/)"
    VERBATIM)
endfunction()
