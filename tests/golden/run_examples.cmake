# cmake -DHETSIM=<binary> -DSOURCE_DIR=<repo> -DOUT_DIR=<dir> [-DUPDATE=ON] -P tests/golden/run_examples.cmake
# Runs every example of tests/golden/examples.txt with `hetsim run ... --no-wall-time` and compares the
# SHA-256 of its report and trace with tests/golden/examples.sha256 (UPDATE=ON rewrites that file).
cmake_minimum_required(VERSION 3.25)
set(list_file ${SOURCE_DIR}/tests/golden/examples.txt)
set(digest_file ${SOURCE_DIR}/tests/golden/examples.sha256)
file(STRINGS ${list_file} entries REGEX "^[^#]")
file(REMOVE_RECURSE ${OUT_DIR})
file(MAKE_DIRECTORY ${OUT_DIR})
set(actual "")
foreach(entry ${entries})
  string(REPLACE " " ";" pair "${entry}")
  list(GET pair 0 plan)
  list(GET pair 1 cluster)
  execute_process(COMMAND ${HETSIM} run ${SOURCE_DIR}/examples/plan-${plan}.pbtxt
                          --cluster ${SOURCE_DIR}/examples/cluster-${cluster}.pbtxt
                          --report ${OUT_DIR}/${plan}.report.json --trace ${OUT_DIR}/${plan}.trace.json
                          --no-wall-time --quiet
                  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "hetsim run plan-${plan} (cluster-${cluster}) exited ${rc}: ${err}")
  endif()
  foreach(kind report trace)
    file(SHA256 ${OUT_DIR}/${plan}.${kind}.json digest)
    string(APPEND actual "${digest}  ${plan}.${kind}.json\n")
  endforeach()
endforeach()

if(UPDATE)
  file(WRITE ${digest_file} "${actual}")
  message(STATUS "wrote ${digest_file}")
  return()
endif()
file(READ ${digest_file} expected)
if(NOT actual STREQUAL expected)
  message(FATAL_ERROR "reports or traces differ from tests/golden/examples.sha256 (outputs in ${OUT_DIR}).\n"
                      "expected:\n${expected}actual:\n${actual}"
                      "If the cost model changed on purpose, run scripts/update-goldens.sh and say why in the commit.")
endif()
message(STATUS "golden: every example's report and trace is byte-identical")
