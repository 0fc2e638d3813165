# `hetsim validate` on the bundled naive-model example and `hetsim import/export megatron` end to end.
set(hetsim_eval_out ${CMAKE_CURRENT_BINARY_DIR}/evaluation_cli)
file(MAKE_DIRECTORY ${hetsim_eval_out})
add_test(NAME evaluation_cli.validate_naive_example
         COMMAND $<TARGET_FILE:hetsim> validate --plans ${PROJECT_SOURCE_DIR}/examples/validate-naive/plans.txt
                 --cluster ${PROJECT_SOURCE_DIR}/examples/cluster-hapt-case.pbtxt
                 --report ${hetsim_eval_out}/naive.json --chart ${hetsim_eval_out}/naive.svg)
# The naive model misranks some of these plans and says which term flips each pair.
set_tests_properties(evaluation_cli.validate_naive_example PROPERTIES
                     PASS_REGULAR_EXPRESSION "misranked pairs:[^\n]*\n[^\n]* before [^\n]*flips it")
add_test(NAME evaluation_cli.validate_folder
         COMMAND $<TARGET_FILE:hetsim> validate --plans ${PROJECT_SOURCE_DIR}/examples/validate-naive
                 --cluster ${PROJECT_SOURCE_DIR}/examples/cluster-hapt-case.pbtxt)
set_tests_properties(evaluation_cli.validate_folder PROPERTIES PASS_REGULAR_EXPRESSION "Spearman rho")
add_test(NAME evaluation_cli.import_megatron
         COMMAND $<TARGET_FILE:hetsim> import megatron ${CMAKE_CURRENT_SOURCE_DIR}/megatron_data/gpt3_175b.sh
                 --cluster ${PROJECT_SOURCE_DIR}/examples/cluster-a100-512.pbtxt --out ${hetsim_eval_out}/gpt3.pbtxt)
set_tests_properties(evaluation_cli.import_megatron PROPERTIES FIXTURES_SETUP megatron_plan
                     PASS_REGULAR_EXPRESSION "16 pipeline stages x TP 8 x DP 1.*not modelled \\(ignored\\): --rampup-batch-size")
add_test(NAME evaluation_cli.export_megatron
         COMMAND $<TARGET_FILE:hetsim> export megatron ${hetsim_eval_out}/gpt3.pbtxt
                 --cluster ${PROJECT_SOURCE_DIR}/examples/cluster-a100-512.pbtxt)
set_tests_properties(evaluation_cli.export_megatron PROPERTIES FIXTURES_REQUIRED megatron_plan
                     PASS_REGULAR_EXPRESSION "--nnodes 16 pretrain_gpt.py.*--pipeline-model-parallel-size 16")
# `hetsim export deepspeed`: the config and its Megatron-DeepSpeed line, read back by `import megatron`.
add_test(NAME evaluation_cli.export_deepspeed
         COMMAND $<TARGET_FILE:hetsim> export deepspeed ${PROJECT_SOURCE_DIR}/examples/plan-megatron-39b.pbtxt
                 --cluster ${PROJECT_SOURCE_DIR}/examples/cluster-a100-512.pbtxt --out ${hetsim_eval_out}/ds39b.json)
set_tests_properties(evaluation_cli.export_deepspeed PROPERTIES FIXTURES_SETUP deepspeed_export
                     PASS_REGULAR_EXPRESSION "wrote [^\n]*ds39b.json and [^\n]*ds39b.sh\ndeepspeed --num_nodes 64 --num_gpus 8 pretrain_gpt.py")
add_test(NAME evaluation_cli.import_deepspeed_export
         COMMAND $<TARGET_FILE:hetsim> import megatron ${hetsim_eval_out}/ds39b.sh
                 --cluster ${PROJECT_SOURCE_DIR}/examples/cluster-a100-512.pbtxt)
set_tests_properties(evaluation_cli.import_deepspeed_export PROPERTIES FIXTURES_REQUIRED deepspeed_export
                     PASS_REGULAR_EXPRESSION "2 pipeline stages x TP 8 x DP 32 [^\n]*ONE_F_ONE_B, micro-batch 4 per replica, global batch 1536.*DeepSpeed config [^\n]*ds39b.json read")
