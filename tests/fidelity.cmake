# The calibration set with its bounds (validation/megatron-sc21.pbtxt: MAPE <= 2.5%, every case within
# 4.5%, since session 43): `hetsim fidelity --check` exits 1 when the predictions break them. Issue 14's acceptance test.
# It simulates 16 iterations of up to 3072 GPUs (7 s of CPU in Release), a check of the model's
# numbers rather than of memory safety: the sanitizer build (-O1, ASan) would take minutes, so it is
# left out there; the fidelity command's code runs under the sanitizers in app_fidelity_test.cc.
if(NOT HETSIM_SANITIZE)
  add_test(NAME fidelity.megatron_sc21_bounds
           COMMAND $<TARGET_FILE:hetsim> fidelity --check ${PROJECT_SOURCE_DIR}/validation/megatron-sc21.pbtxt)
  set_tests_properties(fidelity.megatron_sc21_bounds PROPERTIES TIMEOUT 900)
  # The held-out set (docs/validation.md): bounds that guard against regressions, not a fit.
  add_test(NAME fidelity.megatron_mlsys23_bounds
           COMMAND $<TARGET_FILE:hetsim> fidelity --check ${PROJECT_SOURCE_DIR}/validation/megatron-mlsys23.pbtxt)
  set_tests_properties(fidelity.megatron_mlsys23_bounds PROPERTIES TIMEOUT 900)
  add_test(NAME fidelity.nemo_h100_fp8_bounds
           COMMAND $<TARGET_FILE:hetsim> fidelity --check ${PROJECT_SOURCE_DIR}/validation/nemo-h100-fp8.pbtxt)
  set_tests_properties(fidelity.nemo_h100_fp8_bounds PROPERTIES TIMEOUT 900)
  add_test(NAME fidelity.nemo_h100_fp8_405b_bounds
           COMMAND $<TARGET_FILE:hetsim> fidelity --check ${PROJECT_SOURCE_DIR}/validation/nemo-h100-fp8-405b.pbtxt)
  set_tests_properties(fidelity.nemo_h100_fp8_405b_bounds PROPERTIES TIMEOUT 900)
  add_test(NAME fidelity.nemo_b200_fp8_bounds
           COMMAND $<TARGET_FILE:hetsim> fidelity --check ${PROJECT_SOURCE_DIR}/validation/nemo-b200-fp8.pbtxt)
  set_tests_properties(fidelity.nemo_b200_fp8_bounds PROPERTIES TIMEOUT 900)
  add_test(NAME fidelity.moe_folding_h100_bounds
           COMMAND $<TARGET_FILE:hetsim> fidelity --check ${PROJECT_SOURCE_DIR}/validation/moe-folding-h100.pbtxt)
  set_tests_properties(fidelity.moe_folding_h100_bounds PROPERTIES TIMEOUT 900)
  # DeepSpeed's pipeline engine on AWS T4 and V100 + T4 (AMP's artifact, issue 40): today's level as a
  # regression guard, and the ranking bounds (the fastest cluster and plan picked right).
  foreach(amp_set cloud mixed-vs-homo choice)
    add_test(NAME fidelity.deepspeed_amp_${amp_set}_bounds
             COMMAND $<TARGET_FILE:hetsim> fidelity --check ${PROJECT_SOURCE_DIR}/validation/deepspeed-amp-${amp_set}.pbtxt)
    set_tests_properties(fidelity.deepspeed_amp_${amp_set}_bounds PROPERTIES TIMEOUT 900)
  endforeach()
  # Sailor's runs on a lab of RTX 3090, TITAN RTX and RTX 2080 Ti nodes (session 34, issues 39 and 40): every
  # stage's replicas on different GPU types; session 36's level (10.41%, max 17.3%, k = 3 11.78%) plus a
  # margin, the bounds in the set file.
  add_test(NAME fidelity.sailor_mit_lab_bounds
           COMMAND $<TARGET_FILE:hetsim> fidelity --check ${PROJECT_SOURCE_DIR}/validation/sailor-mit-lab.pbtxt)
  set_tests_properties(fidelity.sailor_mit_lab_bounds PROPERTIES TIMEOUT 900)
  # torchtitan on H100 (session 25): a regression guard at today's figures, not issue 40's 8% target.
  add_test(NAME fidelity.torchtitan_h100_bounds
           COMMAND $<TARGET_FILE:hetsim> fidelity --check ${PROJECT_SOURCE_DIR}/validation/torchtitan-h100.pbtxt)
  set_tests_properties(fidelity.torchtitan_h100_bounds PROPERTIES TIMEOUT 900)
  # NeMo Megatron 2022 on DGX A100 (session 34, issue 40's held-out Megatron regimes): GPT-3 5B data
  # parallel over 1 to 32 nodes, 175B at PP 8 and DP 2 to 16; today's figures plus a margin.
  add_test(NAME fidelity.megatron_nemo_a100_bounds
           COMMAND $<TARGET_FILE:hetsim> fidelity --check ${PROJECT_SOURCE_DIR}/validation/megatron-nemo-a100.pbtxt)
  set_tests_properties(fidelity.megatron_nemo_a100_bounds PROPERTIES TIMEOUT 900)
  # Sailor's homogeneous runs on CSCS Clariden (session 36, issue 40's held-out regimes: DeepSpeed's
  # pipeline engine, a small model at micro-batch 1 to 8, GH200 nodes on Slingshot); today's level.
  add_test(NAME fidelity.sailor_clariden_gh200_bounds
           COMMAND $<TARGET_FILE:hetsim> fidelity --check ${PROJECT_SOURCE_DIR}/validation/sailor-clariden-gh200.pbtxt)
  set_tests_properties(fidelity.sailor_clariden_gh200_bounds PROPERTIES TIMEOUT 900)
  # BigScience's 3D-layout benchmarks of a 181B GPT on 48 Jean Zay nodes (session 40, issue 40's held-out
  # Megatron-DeepSpeed regime: high DP, deep pipelines, Omni-Path); today's level.
  add_test(NAME fidelity.bigscience_jeanzay_a100_bounds
           COMMAND $<TARGET_FILE:hetsim> fidelity --check ${PROJECT_SOURCE_DIR}/validation/bigscience-jeanzay-a100.pbtxt)
  set_tests_properties(fidelity.bigscience_jeanzay_a100_bounds PROPERTIES TIMEOUT 900)
  # MosaicML's MPT runs with Composer FSDP on one node of 8 A100 80GB / 8 H100 80GB (session 36, issue 40's
  # PyTorch-native held-out regime); today's level.
  foreach(gpu a100 h100)
    add_test(NAME fidelity.mpt_composer_fsdp_${gpu}_bounds
             COMMAND $<TARGET_FILE:hetsim> fidelity --check ${PROJECT_SOURCE_DIR}/validation/mpt-composer-fsdp-${gpu}.pbtxt)
    set_tests_properties(fidelity.mpt_composer_fsdp_${gpu}_bounds PROPERTIES TIMEOUT 900)
  endforeach()
endif()
