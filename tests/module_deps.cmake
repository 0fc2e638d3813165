# Every module links exactly the modules it includes, in dependency order (cmake/module_deps.cmake).
add_test(NAME module_deps COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
         -P ${PROJECT_SOURCE_DIR}/cmake/check_module_deps.cmake)
# docs/architecture.md's tables name every top-level folder and every module directory, and no other.
add_test(NAME architecture_doc COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
         -P ${PROJECT_SOURCE_DIR}/cmake/check_architecture_doc.cmake)
# base/, base/spec/, topology/ and sim/ include no proto/ header and no *.pb.h, and name no v1::.
add_test(NAME message_free COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
         -P ${PROJECT_SOURCE_DIR}/cmake/check_message_free.cmake)
