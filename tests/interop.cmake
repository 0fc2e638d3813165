# Interop checks (issue 18): the Slurm job array of docs/sweeps.md on a real single-node Slurm
# (skipped, exit 77, where Slurm cannot start) and the Kubernetes Indexed Job manifest of the same page.
add_test(NAME interop.slurm_sweep_array
         COMMAND ${PROJECT_SOURCE_DIR}/scripts/slurm_sweep_test.sh $<TARGET_FILE:hetsim>)
set_tests_properties(interop.slurm_sweep_array PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900 RUN_SERIAL TRUE)
if(HETSIM_SANITIZE)
  # The cancel-and-resume grid sized for seconds per task at the sanitized build's speed.
  set_tests_properties(interop.slurm_sweep_array PROPERTIES ENVIRONMENT FINE_STEP=0.02)
endif()
add_test(NAME interop.k8s_manifest COMMAND python3 ${PROJECT_SOURCE_DIR}/scripts/check_k8s_manifest.py
         ${PROJECT_SOURCE_DIR}/docs/sweeps.md)
# torchtitan's Python configs (its format since 2026-02), rendered as TOML by scripts/torchtitan_config.py and imported.
add_test(NAME interop.torchtitan_python_configs
         COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/service/interop/torchtitan_python_configs.py $<TARGET_FILE:hetsim>
                 ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/torchtitan_python_configs)
