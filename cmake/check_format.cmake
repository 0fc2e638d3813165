# Fails when a tracked C++ file differs from what clang-format (.clang-format) makes of it; prints
# the files. cmake -DSOURCE_DIR=... -DCLANG_FORMAT=... -P check_format.cmake
execute_process(COMMAND git ls-files "*.cc" "*.h" WORKING_DIRECTORY ${SOURCE_DIR}
                OUTPUT_VARIABLE files RESULT_VARIABLE git_result OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT git_result EQUAL 0)
  # Not a git checkout (a source tarball): every C++ file under the modules.
  file(GLOB_RECURSE files RELATIVE ${SOURCE_DIR} ${SOURCE_DIR}/*.cc ${SOURCE_DIR}/*.h)
  list(FILTER files EXCLUDE REGEX "^(build|node_modules)|/node_modules/")
else()
  string(REPLACE "\n" ";" files "${files}")
endif()
execute_process(COMMAND ${CLANG_FORMAT} --dry-run --Werror ${files} WORKING_DIRECTORY ${SOURCE_DIR}
                RESULT_VARIABLE result ERROR_VARIABLE errors)
if(NOT result EQUAL 0)
  string(REGEX MATCHALL "[^\n:]+:[0-9]+:[0-9]+: error: code should be clang-formatted" lines "${errors}")
  set(bad)
  foreach(line IN LISTS lines)
    string(REGEX REPLACE ":[0-9]+:[0-9]+: error.*" "" f "${line}")
    list(APPEND bad "${f}")
  endforeach()
  list(REMOVE_DUPLICATES bad)
  string(REPLACE ";" "\n" bad "${bad}")
  message(FATAL_ERROR "not formatted by .clang-format (run clang-format -i on them):\n${bad}")
endif()
list(LENGTH files n)
message(STATUS "${n} files formatted")
