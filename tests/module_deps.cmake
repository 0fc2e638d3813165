# Every module links exactly the modules it includes, in dependency order (cmake/module_deps.cmake).
add_test(NAME module_deps COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
         -P ${PROJECT_SOURCE_DIR}/cmake/check_module_deps.cmake)
