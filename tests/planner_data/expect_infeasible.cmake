# cmake -DHETSIM=... -DMODEL=... -DCLUSTER=... -DOUT=... -P expect_infeasible.cmake
# `hetsim plan` on a model that cannot fit must fail as bad input (exit 2, not 1 for an internal
# error), say what is missing, and leave no plan file behind.
file(REMOVE "${OUT}")
execute_process(COMMAND "${HETSIM}" plan --model "${MODEL}" --cluster "${CLUSTER}" --out "${OUT}"
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "exit code ${rc}, expected 2\nstderr:\n${err}")
endif()
foreach(expect "hapt: no plan fits" "GiB of weights, gradients and Adam states" "GiB missing before any activation")
  string(FIND "${err}" "${expect}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "stderr lacks \"${expect}\"\nstderr:\n${err}")
  endif()
endforeach()
if(EXISTS "${OUT}")
  message(FATAL_ERROR "a plan file was written: ${OUT}")
endif()
