# Runs the bundled examples several times and compares the output files byte for byte:
# - hetsim sweep: sweep-bandwidth with --jobs 1 twice, --jobs 2 and --jobs 3, CSV and JSON Lines;
#   sweep-add-h100 (plans every point) with --jobs 1 and 2;
# - hetsim run (report and trace, --no-wall-time) on both example plans, twice, and on the 512-GPU plan
#   with faults-straggler (seeded jitter), twice.
# (The planner's own thread determinism is a unit test in planner_search_test.cc.)
# cmake -DHETSIM=... -DEXAMPLES=... -DOUT_DIR=... -P reliability/determinism_run.cmake
file(REMOVE_RECURSE "${OUT_DIR}")
file(MAKE_DIRECTORY "${OUT_DIR}")

function(hetsim_run)
  execute_process(COMMAND "${HETSIM}" ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "hetsim ${ARGN}: exit code ${rc}\n${err}")
  endif()
endfunction()

function(expect_same a b)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${a}" "${b}" RESULT_VARIABLE differ)
  if(differ)
    message(FATAL_ERROR "not byte-identical: ${a} and ${b}")
  endif()
endfunction()

foreach(sweep sweep-bandwidth)
  foreach(ext csv jsonl)
    set(base "${OUT_DIR}/${sweep}")
    hetsim_run(sweep "${EXAMPLES}/${sweep}.pbtxt" -o "${base}.j1.${ext}" --jobs 1)
    hetsim_run(sweep "${EXAMPLES}/${sweep}.pbtxt" -o "${base}.j1again.${ext}" --jobs 1)
    hetsim_run(sweep "${EXAMPLES}/${sweep}.pbtxt" -o "${base}.j2.${ext}" --jobs 2)
    hetsim_run(sweep "${EXAMPLES}/${sweep}.pbtxt" -o "${base}.j3.${ext}" --jobs 3)
    expect_same("${base}.j1.${ext}" "${base}.j1again.${ext}")
    expect_same("${base}.j1.${ext}" "${base}.j2.${ext}")
    expect_same("${base}.j1.${ext}" "${base}.j3.${ext}")
  endforeach()
endforeach()

# The sweep that plans every point (about 8 s): CSV, --jobs 1 against --jobs 2.
hetsim_run(sweep "${EXAMPLES}/sweep-add-h100.pbtxt" -o "${OUT_DIR}/add-h100.j1.csv" --jobs 1)
hetsim_run(sweep "${EXAMPLES}/sweep-add-h100.pbtxt" -o "${OUT_DIR}/add-h100.j2.csv" --jobs 2)
expect_same("${OUT_DIR}/add-h100.j1.csv" "${OUT_DIR}/add-h100.j2.csv")

foreach(pair "plan-hapt-case;cluster-hapt-case" "plan-512gpu;cluster-512gpu")
  list(GET pair 0 plan)
  list(GET pair 1 cluster)
  foreach(i 1 2)
    hetsim_run(run "${EXAMPLES}/${plan}.pbtxt" --cluster "${EXAMPLES}/${cluster}.pbtxt" --no-wall-time --quiet
               --report "${OUT_DIR}/${plan}.${i}.report.json" --trace "${OUT_DIR}/${plan}.${i}.trace.json")
  endforeach()
  expect_same("${OUT_DIR}/${plan}.1.report.json" "${OUT_DIR}/${plan}.2.report.json")
  expect_same("${OUT_DIR}/${plan}.1.trace.json" "${OUT_DIR}/${plan}.2.trace.json")
endforeach()

# What-if faults with seeded compute jitter: the same seed gives the same bytes.
foreach(i 1 2)
  hetsim_run(run "${EXAMPLES}/plan-512gpu.pbtxt" --cluster "${EXAMPLES}/cluster-512gpu.pbtxt" --no-wall-time
             --quiet --faults "${EXAMPLES}/faults-straggler.pbtxt"
             --report "${OUT_DIR}/faults.${i}.report.json" --trace "${OUT_DIR}/faults.${i}.trace.json")
endforeach()
expect_same("${OUT_DIR}/faults.1.report.json" "${OUT_DIR}/faults.2.report.json")
expect_same("${OUT_DIR}/faults.1.trace.json" "${OUT_DIR}/faults.2.trace.json")

file(REMOVE_RECURSE "${OUT_DIR}")
