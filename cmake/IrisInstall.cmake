# cmake --install <build> --prefix <p> installs libiris for projects outside this
# repository:
#   include/iris/*.hpp, include/iris/device*   the runtime's and the device library's headers
#   include/compiler/contract/                  the launch contract iris/program.hpp includes
#   lib/libiris.a, lib/libirisc_lib.a           the runtime, and irisc as a library (its JIT)
#   bin/irisc, bin/iris-run, bin/iris-bench
#   lib/cmake/Iris/                             the package: IrisConfig.cmake, its version
#                                               file, the exported targets, iris_add_kernels
# A project then writes find_package(Iris), links iris::iris (which carries irisc_lib,
# the device headers, Threads and dl with it) and calls iris_add_kernels, which runs the
# installed irisc (iris::irisc). No MPI is linked: libiris dlopens OpenMPI under mpirun.
include(CMakePackageConfigHelpers)

set(IRIS_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/Iris)

# Installed headers all sit under include/; in the build tree they sit in source folders.
# compiler/ and templates/ declare their include folders for the build tree only, so
# wrap them here: each becomes $<BUILD_INTERFACE:...>, and include/ is added for the
# install tree.
function(iris_install_include_interface target)
  get_target_property(dirs ${target} INTERFACE_INCLUDE_DIRECTORIES)
  set(wrapped)
  foreach(dir IN LISTS dirs)
    if(dir MATCHES "^\\$<")
      list(APPEND wrapped "${dir}")
    else()
      list(APPEND wrapped "$<BUILD_INTERFACE:${dir}>")
    endif()
  endforeach()
  list(APPEND wrapped "$<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>")
  set_property(TARGET ${target} PROPERTY INTERFACE_INCLUDE_DIRECTORIES "${wrapped}")
endfunction()
iris_install_include_interface(irisc_lib)
iris_install_include_interface(iris_templates)
set_target_properties(iris_templates PROPERTIES EXPORT_NAME templates)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/runtime/include/iris ${PROJECT_SOURCE_DIR}/templates/include/iris
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

# Every static library iris::iris links is in the export set, so linking iris::iris
# alone brings them all.
install(TARGETS iris irisc_lib iris_templates irisc
        EXPORT IrisTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS iris-run iris-bench RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT IrisTargets NAMESPACE iris:: DESTINATION ${IRIS_INSTALL_CMAKEDIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/IrisConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/IrisConfig.cmake INSTALL_DESTINATION ${IRIS_INSTALL_CMAKEDIR})
# 0.x: a minor version may change the API.
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/IrisConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/IrisConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/IrisConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/IrisKernels.cmake
        DESTINATION ${IRIS_INSTALL_CMAKEDIR})
