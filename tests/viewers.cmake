# ctest "viewers.*": what real viewers make of hetsim's outputs (tests/viewers/, node + npm packages
# installed by scripts/setup.sh with npm ci; skipped with the reason when node, the packages or
# Chromium are missing):
#   viewers.devtools.<plan>    the Chrome trace in the DevTools Performance panel's trace engine: no
#                              warning, no slice dropped, every flow arrow bound
#   viewers.speedscope.<plan>  the Chrome trace imported into speedscope: no warning, every thread
#   viewers.report.<plan>      the --html report in headless Chromium: no console message, the stage rows
#                              and microbatch blocks expected, zoom works; screenshot in the test's dir
# "report.html.*" check the report files themselves: deterministic bytes and size.
# They check what viewers draw, not memory safety, and run the 512-GPU example several times: the
# sanitizer build leaves them out (the HTML code runs under the sanitizers in report_html_test.cc).
if(HETSIM_SANITIZE)
  return()
endif()
set(HETSIM_VIEWERS_OUT ${CMAKE_CURRENT_BINARY_DIR}/viewers)
foreach(entry "512gpu;512gpu" "hapt-case;hapt-case" "megatron-39b;a100-512")
  list(GET entry 0 plan)
  list(GET entry 1 cluster)
  foreach(kind devtools speedscope)
    add_test(NAME viewers.${kind}.${plan}
             COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/viewers/run_check.sh ${kind} $<TARGET_FILE:hetsim> ${HETSIM_VIEWERS_OUT}/${kind}
                     ${PROJECT_SOURCE_DIR}/examples/plan-${plan}.pbtxt ${PROJECT_SOURCE_DIR}/examples/cluster-${cluster}.pbtxt)
    set_tests_properties(viewers.${kind}.${plan} PROPERTIES SKIP_RETURN_CODE 77 LABELS viewers TIMEOUT 600)
  endforeach()
endforeach()
foreach(entry "hapt-case;hapt-case" "512gpu;512gpu")
  list(GET entry 0 plan)
  list(GET entry 1 cluster)
  add_test(NAME viewers.report.${plan}
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/viewers/run_check.sh report $<TARGET_FILE:hetsim> ${HETSIM_VIEWERS_OUT}/report
                   ${PROJECT_SOURCE_DIR}/examples/plan-${plan}.pbtxt ${PROJECT_SOURCE_DIR}/examples/cluster-${cluster}.pbtxt)
  set_tests_properties(viewers.report.${plan} PROPERTIES SKIP_RETURN_CODE 77 LABELS viewers TIMEOUT 600)
endforeach()
add_test(NAME report.html.examples
         COMMAND ${CMAKE_COMMAND} -DHETSIM=$<TARGET_FILE:hetsim> -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
                 -DOUT_DIR=${CMAKE_CURRENT_BINARY_DIR}/report_html -P ${CMAKE_CURRENT_SOURCE_DIR}/viewers/html_files.cmake)
