# The module table: one place that says which modules exist, where their sources live and which
# other modules each may use. hetsim_module() links exactly these, and the ctest test
# "module_deps" (cmake/check_module_deps.cmake) fails when a module's sources include a header of a
# module not listed here, list one they never include, or name one that comes later in
# HETSIM_MODULES (the list is in dependency order: a module uses only modules before it).
# docs/architecture.md draws the same graph.

set(HETSIM_MODULES base spec proto engine topology network collectives workload pipeline faults executor
    traces planner driver chakra sweep calibrate report interop evaluation fidelity planning app_lib api)

set(HETSIM_MODULE_DIR_base base)
set(HETSIM_MODULE_DIR_spec base/spec)
set(HETSIM_MODULE_DIR_proto proto)
set(HETSIM_MODULE_DIR_engine sim/engine)
set(HETSIM_MODULE_DIR_topology topology)
set(HETSIM_MODULE_DIR_network sim/network)
set(HETSIM_MODULE_DIR_collectives sim/collectives)
set(HETSIM_MODULE_DIR_workload sim/workload)
set(HETSIM_MODULE_DIR_pipeline sim/pipeline)
set(HETSIM_MODULE_DIR_faults sim/faults)
set(HETSIM_MODULE_DIR_executor sim/executor)
set(HETSIM_MODULE_DIR_traces traces)
set(HETSIM_MODULE_DIR_chakra service/chakra)
set(HETSIM_MODULE_DIR_planner planner)
set(HETSIM_MODULE_DIR_driver service/driver)
set(HETSIM_MODULE_DIR_sweep service/sweep)
set(HETSIM_MODULE_DIR_calibrate service/calibrate)
set(HETSIM_MODULE_DIR_report traces/html)
set(HETSIM_MODULE_DIR_interop service/interop)
set(HETSIM_MODULE_DIR_evaluation service/evaluation)
set(HETSIM_MODULE_DIR_fidelity service/fidelity)
set(HETSIM_MODULE_DIR_planning service/planning)
set(HETSIM_MODULE_DIR_app_lib app/cli)
set(HETSIM_MODULE_DIR_api app/api)

# Modules each module includes (and so links), besides itself.
set(HETSIM_MODULE_DEPS_base)
set(HETSIM_MODULE_DEPS_spec base)
set(HETSIM_MODULE_DEPS_proto base spec)  # proto/CMakeLists.txt links hetsim_base and hetsim_spec
set(HETSIM_MODULE_DEPS_engine base)
set(HETSIM_MODULE_DEPS_topology base spec)
set(HETSIM_MODULE_DEPS_network base engine)
set(HETSIM_MODULE_DEPS_collectives base engine network topology)
set(HETSIM_MODULE_DEPS_workload base spec)
set(HETSIM_MODULE_DEPS_pipeline base spec)
set(HETSIM_MODULE_DEPS_faults base engine network spec)
set(HETSIM_MODULE_DEPS_executor base collectives engine faults network pipeline spec topology workload)
set(HETSIM_MODULE_DEPS_traces base executor faults pipeline proto spec)
set(HETSIM_MODULE_DEPS_chakra base collectives driver engine executor network pipeline proto spec topology workload)
set(HETSIM_MODULE_DEPS_planner base collectives pipeline spec topology workload)
set(HETSIM_MODULE_DEPS_driver base collectives executor faults network pipeline planner proto spec topology traces)
set(HETSIM_MODULE_DEPS_sweep base driver executor planner proto)
set(HETSIM_MODULE_DEPS_calibrate base collectives driver proto topology workload)
set(HETSIM_MODULE_DEPS_report base executor pipeline proto topology traces)
set(HETSIM_MODULE_DEPS_interop base proto spec)
set(HETSIM_MODULE_DEPS_evaluation base driver executor pipeline planner proto report workload)
set(HETSIM_MODULE_DEPS_fidelity base calibrate collectives driver evaluation proto traces workload)
set(HETSIM_MODULE_DEPS_planning base driver evaluation planner proto spec topology)
set(HETSIM_MODULE_DEPS_app_lib base calibrate chakra collectives driver evaluation executor faults fidelity interop network
    planner planning proto report sweep topology traces)
set(HETSIM_MODULE_DEPS_api app_lib base calibrate chakra collectives driver evaluation fidelity interop network planner planning proto
    sweep)

# Third-party targets each module uses directly (Abseil, Boost, threads).
set(HETSIM_MODULE_LIBS_base Threads::Threads absl::status absl::statusor absl::str_format absl::strings)
set(HETSIM_MODULE_LIBS_spec absl::str_format)
set(HETSIM_MODULE_LIBS_engine)
set(HETSIM_MODULE_LIBS_topology Boost::graph absl::flat_hash_map absl::status absl::statusor absl::str_format)
set(HETSIM_MODULE_LIBS_network absl::inlined_vector absl::status absl::statusor absl::str_format)
set(HETSIM_MODULE_LIBS_collectives absl::flat_hash_map absl::flat_hash_set absl::status absl::statusor
    absl::str_format)
set(HETSIM_MODULE_LIBS_workload absl::status absl::statusor absl::str_format absl::strings)
set(HETSIM_MODULE_LIBS_pipeline Boost::graph absl::status absl::statusor absl::str_format absl::strings)
set(HETSIM_MODULE_LIBS_faults absl::flat_hash_map absl::status absl::statusor absl::str_format)
set(HETSIM_MODULE_LIBS_executor absl::flat_hash_map absl::status absl::statusor absl::str_format)
set(HETSIM_MODULE_LIBS_traces absl::flat_hash_map absl::inlined_vector absl::status absl::statusor absl::str_format absl::strings)
set(HETSIM_MODULE_LIBS_chakra absl::flat_hash_map absl::status absl::statusor absl::str_format absl::strings)
set(HETSIM_MODULE_LIBS_planner Threads::Threads absl::flat_hash_map absl::status absl::statusor absl::str_format
    absl::strings)
set(HETSIM_MODULE_LIBS_driver absl::status absl::statusor absl::str_format absl::strings)
set(HETSIM_MODULE_LIBS_sweep absl::flat_hash_map absl::status absl::statusor absl::str_format absl::strings absl::time)
set(HETSIM_MODULE_LIBS_calibrate absl::flat_hash_map absl::status absl::statusor absl::str_format absl::strings)
set(HETSIM_MODULE_LIBS_report absl::str_format absl::strings)
set(HETSIM_MODULE_LIBS_interop hetsim_toml yaml-cpp absl::flat_hash_map absl::flat_hash_set absl::status absl::statusor absl::str_format absl::strings)
set(HETSIM_MODULE_LIBS_evaluation absl::status absl::statusor absl::str_format absl::strings)
set(HETSIM_MODULE_LIBS_fidelity absl::flat_hash_map absl::status absl::statusor absl::str_format absl::strings)
set(HETSIM_MODULE_LIBS_planning absl::cord absl::status absl::statusor absl::str_format absl::strings)
set(HETSIM_MODULE_LIBS_app_lib Boost::program_options absl::flat_hash_map absl::status absl::statusor
    absl::str_format absl::strings absl::time)
set(HETSIM_MODULE_LIBS_api absl::status absl::statusor absl::str_format absl::strings)
