# `hetsim plan` and `hetsim validate` end to end on HAPT's case-study cluster: a plan is written and
# passes `hetsim check`; validate simulates it; a model that cannot fit fails with what is missing.
set(hetsim_planner_out ${CMAKE_CURRENT_BINARY_DIR})
set(hetsim_case_cluster ${PROJECT_SOURCE_DIR}/examples/cluster-hapt-case.pbtxt)
add_test(NAME planner_cli.plan_case_study
         COMMAND $<TARGET_FILE:hetsim> plan --model ${CMAKE_CURRENT_SOURCE_DIR}/planner_data/gpt-hapt-case.pbtxt
                 --cluster ${hetsim_case_cluster} --micro-batch 1 --out ${hetsim_planner_out}/planner_cli_plan.pbtxt)
set_tests_properties(planner_cli.plan_case_study PROPERTIES FIXTURES_SETUP planner_plan)
add_test(NAME planner_cli.check_written_plan
         COMMAND $<TARGET_FILE:hetsim> check ${hetsim_planner_out}/planner_cli_plan.pbtxt --cluster ${hetsim_case_cluster})
set_tests_properties(planner_cli.check_written_plan PROPERTIES FIXTURES_REQUIRED planner_plan)
add_test(NAME planner_cli.validate_written_plan
         COMMAND $<TARGET_FILE:hetsim> validate ${hetsim_planner_out}/planner_cli_plan.pbtxt --cluster ${hetsim_case_cluster})
set_tests_properties(planner_cli.validate_written_plan PROPERTIES FIXTURES_REQUIRED planner_plan
                     PASS_REGULAR_EXPRESSION "every c_i <= t_max")
# Exit code 2 and the message, not WILL_FAIL (which an internal error, exit 1, would pass too).
add_test(NAME planner_cli.infeasible_model
         COMMAND ${CMAKE_COMMAND} -DHETSIM=$<TARGET_FILE:hetsim>
                 -DMODEL=${CMAKE_CURRENT_SOURCE_DIR}/planner_data/gpt-too-big.pbtxt -DCLUSTER=${hetsim_case_cluster}
                 -DOUT=${hetsim_planner_out}/planner_cli_infeasible.pbtxt
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/planner_data/expect_infeasible.cmake)
# An MoE model: the table shows each stage's experts' layout (EP x ETP), and the written plan runs.
add_test(NAME planner_cli.plan_moe_prints_expert_layout
         COMMAND $<TARGET_FILE:hetsim> plan --model ${CMAKE_CURRENT_SOURCE_DIR}/planner_data/moe-hapt-case.pbtxt
                 --cluster ${hetsim_case_cluster} --micro-batch 1 --out ${hetsim_planner_out}/planner_cli_moe.pbtxt)
set_tests_properties(planner_cli.plan_moe_prints_expert_layout PROPERTIES FIXTURES_SETUP planner_moe_plan
                     PASS_REGULAR_EXPRESSION "DP EPxETP ZeRO.*\n0 [^\n]* [248]x1 ")
add_test(NAME planner_cli.run_moe_plan
         COMMAND $<TARGET_FILE:hetsim> run ${hetsim_planner_out}/planner_cli_moe.pbtxt --cluster ${hetsim_case_cluster})
set_tests_properties(planner_cli.run_moe_plan PROPERTIES FIXTURES_REQUIRED planner_moe_plan)
