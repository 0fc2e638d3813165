"""pytest tests of the Python package (run by ctest as python.pytest, tests/python.cmake): the same
numbers as the CLI on the bundled examples, messages in and out, errors with field paths, wrong types,
threads, and the search-loop example."""
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

import pytest
from google.protobuf import json_format, text_format

import hetsim
from hetsim import hetsim_pb2

SOURCE = os.environ.get("HETSIM_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..", ".."))
BINARY = os.environ.get("HETSIM_BINARY", os.path.join(SOURCE, "build", "hetsim"))
EX = os.path.join(SOURCE, "examples")
HAPT_PLAN = os.path.join(EX, "plan-hapt-case.pbtxt")
HAPT_CLUSTER = os.path.join(EX, "cluster-hapt-case.pbtxt")
NAIVE = os.path.join(EX, "validate-naive")


def cli(*args):
    r = subprocess.run([BINARY, *args], capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


def cli_message(message_type, *args):
    """Runs the CLI with an output file (the last argument names the flag) and reads the message back."""
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "out.json")
        code, _, err = cli(*args, out)
        assert code == 0, err
        return json_format.Parse(open(out).read(), message_type())


def text(path, message_type):
    return text_format.Parse(open(path).read(), message_type())


def test_run_gives_the_cli_report():
    expected = cli_message(hetsim_pb2.Report, "run", HAPT_PLAN, "--cluster", HAPT_CLUSTER, "--no-wall-time",
                           "--quiet", "--report")
    assert hetsim.run(HAPT_PLAN, HAPT_CLUSTER) == expected


def test_run_chooses_the_fidelity_as_the_cli_does():
    # Small: exact either way, the report without a fidelity note. The 16K example: approximated by
    # default, named in the report (docs/performance.md "Fast by default"); exact=True is --exact.
    assert hetsim.run(HAPT_PLAN, HAPT_CLUSTER) == hetsim.run(HAPT_PLAN, HAPT_CLUSTER, exact=True)
    big = hetsim.run(os.path.join(EX, "plan-llama3-405b.pbtxt"), os.path.join(EX, "cluster-16k-h100.pbtxt"))
    assert big.HasField("approximation_choice")
    assert len(big.approximations) == 2


def test_messages_in_give_the_same_report_as_paths():
    plan, cluster = text(HAPT_PLAN, hetsim_pb2.Plan), text(HAPT_CLUSTER, hetsim_pb2.Cluster)
    from_messages = hetsim.run(plan, cluster)
    assert from_messages == hetsim.run(HAPT_PLAN, HAPT_CLUSTER)
    assert from_messages.iteration_time_ms > 0
    assert len(from_messages.stages) == len(plan.stages)


def test_validate_gives_the_cli_report():
    plans = [os.path.join(NAIVE, line.strip()) for line in open(os.path.join(NAIVE, "plans.txt"))
             if line.strip() and not line.startswith("#")]
    expected = cli_message(hetsim_pb2.PlanValidationReport, "validate", "--plans", os.path.join(NAIVE, "plans.txt"),
                           "--cluster", HAPT_CLUSTER, "--report")
    got = hetsim.validate(plans, HAPT_CLUSTER)
    assert [p.simulated_iteration_ms for p in got.plans] == [p.simulated_iteration_ms for p in expected.plans]
    assert got.kendall_tau == expected.kendall_tau
    assert got.spearman_rho == expected.spearman_rho
    assert got.predicted_best == expected.predicted_best
    chart = hetsim.validate(plans, HAPT_CLUSTER, chart=True).chart_svg
    assert chart.startswith("<svg")


def test_fidelity_gives_the_cli_report():
    sets = [os.path.join(SOURCE, "validation", "nemo-b200-fp8.pbtxt")]
    expected = cli_message(hetsim_pb2.FidelityReport, "fidelity", *sets, "--quiet", "--json")
    got = hetsim.fidelity(sets)
    assert [s.name for s in got.sets] == [s.name for s in expected.sets] == ["nemo-b200-fp8"]
    assert got.sets[0].mape_percent == expected.sets[0].mape_percent
    assert [c.predicted for c in got.sets[0].cases] == [c.predicted for c in expected.sets[0].cases]
    assert not got.sets[0].violations
    with pytest.raises(hetsim.HetsimError, match="read from its file"):
        hetsim.fidelity([text(sets[0], hetsim_pb2.ValidationSet)])


def test_plan_with_a_naive_prediction():
    model = os.path.join(NAIVE, "models", "gpt-hapt-case.pbtxt")
    plan = hetsim.plan(model, HAPT_CLUSTER, micro_batch_size=1, prediction="naive")
    assert len(plan.stages) >= 1
    assert plan.prediction.HasField("iteration_time_ms")
    report = hetsim.validate(plan, HAPT_CLUSTER)
    assert report.plans[0].plan_name == plan.name


def test_collective_matches_the_cli_table():
    code, out, err = cli("collective", "--cluster", HAPT_CLUSTER, "--op", "all-reduce", "--bytes", "64MiB",
                         "--gpus", "0-3")
    assert code == 0, err
    row = [line for line in out.splitlines() if not line.startswith("#")][1].split()
    r = hetsim.collective(HAPT_CLUSTER, op="all-reduce", bytes=64 << 20, gpus=range(4))
    assert r.num_gpus == 4 and r.bytes == 64 << 20
    assert f"{r.time_us:.2f}" == row[6]
    assert f"{r.bus_bandwidth_gbytes_per_s:.2f}" == row[8]


def test_sweep_points_are_the_cli_rows():
    sweep = os.path.join(SOURCE, "app", "python", "tests", "data", "sweep-two-bandwidths.pbtxt")
    result = hetsim.sweep(sweep, jobs=2)
    assert isinstance(result, hetsim_pb2.SweepResult)
    assert result.name == "two-bandwidths"
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "rows.jsonl")
        code, _, err = cli("sweep", sweep, "-o", out)
        assert code == 0, err
        rows = [json.loads(line) for line in open(out)]
    assert [p.point for p in result.points] == [r["point"] for r in rows] == [0, 1]
    for p, row in zip(result.points, rows):
        axis = "cluster.inter_island_links[0].bandwidth_gbps"
        assert [(v.path, float(v.value)) for v in p.axis_values] == [(axis, row[axis])]
        assert p.status == row["status"] == "ok"
        assert p.report.iteration_time_ms == row["iteration_time_ms"]
        assert p.report.bubble_ratio == row["bubble_ratio"]
        assert p.report.num_gpus == row["num_gpus"]
    # Slower link, longer iteration.
    assert result.points[0].report.iteration_time_ms > result.points[1].report.iteration_time_ms


def test_sweep_takes_the_point_limits_of_the_command_line():
    sweep = os.path.join(SOURCE, "app", "python", "tests", "data", "sweep-two-bandwidths.pbtxt")
    # As `hetsim sweep --max-events 10`: every point stops at its limit and says so.
    limited = hetsim.sweep(sweep, max_events=10)
    assert [p.status for p in limited.points] == ["limit", "limit"]
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "rows.jsonl")
        code, _, err = cli("sweep", sweep, "-o", out, "--max-events", "10")
        assert code == 0, err
        assert [json.loads(line)["status"] for line in open(out)] == ["limit", "limit"]
    assert [p.status for p in hetsim.sweep(sweep, max_events=10**9, max_wall_seconds=600).points] == ["ok", "ok"]
    with pytest.raises(hetsim.HetsimError):
        hetsim.sweep(sweep, max_wall_seconds=-1)


def test_sweep_message_names_files_from_the_working_directory(monkeypatch):
    sweep = text(os.path.join(SOURCE, "app", "python", "tests", "data", "sweep-two-bandwidths.pbtxt"), hetsim_pb2.Sweep)
    sweep.cluster_path = "cluster-hapt-case.pbtxt"
    sweep.plan_path = "plan-hapt-case.pbtxt"
    monkeypatch.chdir(EX)
    result = hetsim.sweep(sweep)
    assert [p.status for p in result.points] == ["ok", "ok"]
    sweep.axes[0].path = "cluster.no_such_field"
    with pytest.raises(hetsim.HetsimError) as e:
        hetsim.sweep(sweep)
    assert e.value.file == "sweep" and e.value.field_path.startswith("axes[0]")


def test_check_paths_and_messages():
    assert "hapt-case-study" in hetsim.check(HAPT_CLUSTER)
    assert "hapt-table1-128-layers" in hetsim.check(HAPT_PLAN, cluster=HAPT_CLUSTER)
    # A message gets the summary its file gets, under the argument's name.
    for path, message_type, cluster in [(HAPT_CLUSTER, hetsim_pb2.Cluster, None),
                                        (HAPT_PLAN, hetsim_pb2.Plan, HAPT_CLUSTER)]:
        from_file = hetsim.check(path, cluster=cluster)
        from_message = hetsim.check(text(path, message_type), cluster=cluster)
        assert from_message.count("\n") == from_file.count("\n") > 1
        assert from_message.replace("file:", path + ":") == from_file
    # Files and messages mix as the run call mixes them: one loading edge (proto::Source) behind both.
    cluster = text(HAPT_CLUSTER, hetsim_pb2.Cluster)
    assert hetsim.check(HAPT_PLAN, cluster=cluster) == hetsim.check(HAPT_PLAN, cluster=HAPT_CLUSTER)


def test_check_binds_a_sweeps_axes_as_the_cli_does():
    # An axis past the base plan's pipelines: `hetsim check` says so with exit 2; the call raises the same.
    bad = os.path.join(SOURCE, "tests", "bad_inputs", "sweep_pipeline_index_no_pipelines.pbtxt")
    with pytest.raises(hetsim.HetsimError, match=r"axes\[0\]\.path: plan\.pipelines\[0\]: .* has no pipelines"):
        hetsim.check(bad)
    assert "sweep" in hetsim.check(os.path.join(EX, "sweep-bandwidth.pbtxt")).lower()
def test_run_takes_faults_as_the_cli_does():
    faults = os.path.join(EX, "faults-straggler.pbtxt")
    expected = cli_message(hetsim_pb2.Report, "run", HAPT_PLAN, "--cluster", HAPT_CLUSTER, "--faults", faults,
                           "--no-wall-time", "--quiet", "--report")
    assert expected.faults
    assert hetsim.run(HAPT_PLAN, HAPT_CLUSTER, faults=faults) == expected
    assert hetsim.run(HAPT_PLAN, HAPT_CLUSTER, faults=text(faults, hetsim_pb2.Faults)) == expected
    bad = text(faults, hetsim_pb2.Faults)
    bad.faults[0].gpu = 4096
    with pytest.raises(hetsim.HetsimError, match=r"^faults: faults\[0\]\.gpu: "):
        hetsim.run(HAPT_PLAN, HAPT_CLUSTER, faults=bad)


def test_bad_input_raises_with_the_field_path():
    plan = text(HAPT_PLAN, hetsim_pb2.Plan)
    plan.stages[0].mesh.first_node = 99
    with pytest.raises(hetsim.HetsimError) as e:
        hetsim.run(plan, HAPT_CLUSTER)
    assert e.value.file == "plan"
    assert e.value.field_path == "stages[0].mesh.first_node"
    assert "is outside island" in e.value.problem


def test_malformed_prediction_raises():
    plan = text(HAPT_PLAN, hetsim_pb2.Plan)
    plan.prediction.iteration_time_ms = -1
    with pytest.raises(hetsim.HetsimError) as e:
        hetsim.validate([plan], HAPT_CLUSTER)
    assert e.value.field_path == "prediction.iteration_time_ms"
    assert e.value.file == "plans[0]"


def test_plan_without_prediction_cannot_be_validated():
    with pytest.raises(hetsim.HetsimError) as e:
        hetsim.validate(HAPT_PLAN, HAPT_CLUSTER)
    assert e.value.field_path == "prediction"


def test_wrong_message_types_raise_type_error():
    cluster = text(HAPT_CLUSTER, hetsim_pb2.Cluster)
    with pytest.raises(TypeError, match="plan: expected a hetsim_pb2.Plan, got hetsim.v1.Cluster"):
        hetsim.run(cluster, cluster)
    with pytest.raises(TypeError, match="cluster: expected a file path or a hetsim_pb2.Cluster, got int"):
        hetsim.run(HAPT_PLAN, 42)
    with pytest.raises(TypeError):
        hetsim.check(hetsim_pb2.FidelityReport())


def test_scalars_of_the_wrong_type_raise_type_error():
    # Session 33: int(1.5), float("0.2"), bool("false") and a str of digits as a GPU list were converted.
    with pytest.raises(TypeError, match="max_events: expected an integer, got float"):
        hetsim.run(HAPT_PLAN, HAPT_CLUSTER, max_events=1.5)
    with pytest.raises(TypeError, match="max_events: expected an integer, got bool"):
        hetsim.run(HAPT_PLAN, HAPT_CLUSTER, max_events=True)
    with pytest.raises(TypeError, match="tau_c: expected a number, got str"):
        hetsim.islands(HAPT_CLUSTER, tau_c="0.2")
    with pytest.raises(TypeError, match="ideal: expected True or False, got str"):
        hetsim.run(HAPT_PLAN, HAPT_CLUSTER, ideal="false")
    with pytest.raises(TypeError, match="gpus: expected a list of integers, got str"):
        hetsim.collective(HAPT_CLUSTER, op="all-reduce", bytes=1024, gpus="01")
    with pytest.raises(TypeError, match="network: expected a str, got int"):
        hetsim.run(HAPT_PLAN, HAPT_CLUSTER, network=1)
    assert "islands" in hetsim.islands(HAPT_CLUSTER, tau_c=1)  # an int where a number is asked


def test_file_names_with_nul_or_undecodable_bytes_are_named():
    with pytest.raises(hetsim.HetsimError, match=r'"a\\000b.pbtxt": a file name cannot hold a NUL byte'):
        hetsim.run("a\0b.pbtxt", HAPT_CLUSTER)
    # os.listdir's name for the bytes b"c\xff.pbtxt": passed as those bytes, named in the message.
    with pytest.raises(hetsim.HetsimError, match=r"c\\xff.pbtxt: cannot open"):
        hetsim.run(HAPT_PLAN, "c\udcff.pbtxt")


def test_unknown_options_raise():
    with pytest.raises(hetsim.HetsimError, match="network"):
        hetsim.run(HAPT_PLAN, HAPT_CLUSTER, network="telepathy")
    with pytest.raises(hetsim.HetsimError):
        hetsim.collective(HAPT_CLUSTER, op="all-to-nowhere", bytes=1024, gpus=[0, 1])
    with pytest.raises(hetsim.HetsimError, match="no such file|cannot open|not found|No such"):
        hetsim.run("/nonexistent/plan.pbtxt", HAPT_CLUSTER)


def test_gpu_ids_are_checked_as_the_cli_checks_them():
    # 2**32 + 1 used to wrap to GPU 1 in the binding's narrowing cast.
    with pytest.raises(hetsim.HetsimError, match=r"gpus\[1\]: 4294967297 is not a GPU id"):
        hetsim.collective(HAPT_CLUSTER, op="all-reduce", bytes=1024, gpus=[0, 2**32 + 1])
    with pytest.raises(hetsim.HetsimError, match=r"gpus\[0\]: -1 is not a GPU id"):
        hetsim.collective(HAPT_CLUSTER, op="all-reduce", bytes=1024, gpus=[-1, 0])
    # Past 64 bits pybind11 said "Unable to cast Python instance to C++ type", naming nothing.
    with pytest.raises(hetsim.HetsimError, match=r"gpus\[1\]: 18446744073709551616 is not a 64-bit integer"):
        hetsim.collective(HAPT_CLUSTER, op="all-reduce", bytes=1024, gpus=[0, 2**64])
    with pytest.raises(hetsim.HetsimError, match=r"bytes: 1180591620717411303424 is not a 64-bit integer"):
        hetsim.collective(HAPT_CLUSTER, op="all-reduce", bytes=2**70, gpus=[0, 1])
    with pytest.raises(hetsim.HetsimError, match=r"max_events: 18446744073709551616 is not a 64-bit integer"):
        hetsim.run(HAPT_PLAN, HAPT_CLUSTER, max_events=2**64)


def test_limits_and_counts_are_checked_as_the_cli_checks_them():
    # Issue 42: each of these ran (or ran wrapped) in Python where the command line refuses it.
    model = os.path.join(NAIVE, "models", "gpt-hapt-case.pbtxt")
    with pytest.raises(hetsim.HetsimError, match=r"max_wall_seconds: nan must be finite and >= 0"):
        hetsim.run(HAPT_PLAN, HAPT_CLUSTER, max_wall_seconds=float("nan"))
    with pytest.raises(hetsim.HetsimError, match=r"max_wall_seconds: -1 must be finite and >= 0"):
        hetsim.collective(HAPT_CLUSTER, op="all-reduce", bytes=1024, gpus=[0, 1], max_wall_seconds=-1)
    with pytest.raises(hetsim.HetsimError, match=r"threads: 4294972296 is outside"):
        hetsim.plan(model, HAPT_CLUSTER, micro_batch_size=1, threads=2**32 + 5000)
    with pytest.raises(hetsim.HetsimError, match=r"jobs: 0: must be at least 1"):
        hetsim.sweep(os.path.join(EX, "sweep-bandwidth.pbtxt"), jobs=0)
    # Thread counts of 100000: refused as the CLI refuses them, never std::terminate in the interpreter.
    with pytest.raises(hetsim.HetsimError, match=r"100000 is outside \[0, 1024\]"):
        hetsim.plan(model, HAPT_CLUSTER, micro_batch_size=1, threads=100000)
    with pytest.raises(hetsim.HetsimError, match=r"100000 is more than 1024, the most threads hetsim starts"):
        hetsim.sweep(os.path.join(EX, "sweep-bandwidth.pbtxt"), jobs=100000)
    # A 16,384-GPU all-reduce is minutes of work: the limit holds inside it.
    with pytest.raises(hetsim.HetsimError, match=r"ran past the --max-wall-seconds limit \(0.5 s\)"):
        hetsim.collective(os.path.join(EX, "cluster-16k-h100.pbtxt"), op="all-reduce", bytes=2**30,
                          gpus=list(range(16384)), max_wall_seconds=0.5)


def test_threads_get_the_same_report_and_the_gil_is_released():
    expected = hetsim.run(HAPT_PLAN, HAPT_CLUSTER)
    results = [None] * 4
    threads = [threading.Thread(target=lambda i=i: results.__setitem__(i, hetsim.run(HAPT_PLAN, HAPT_CLUSTER)))
               for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r == expected for r in results)
    # A Python thread keeps running while hetsim simulates: the call does not hold the GIL. Not a timing
    # threshold (this machine may be loaded): the thread stamps the clock every 5 ms, and some stamp must
    # fall well inside the call, which a call holding the GIL makes impossible.
    # The 16,384-GPU example (about 0.4 s on a quiet machine; the 512-GPU one ends in 40 ms, too short).
    big = os.path.join(EX, "plan-llama3-405b.pbtxt")
    stamps, stop = [], threading.Event()

    def stamper():
        while not stop.is_set():
            now = time.monotonic()
            if not stamps or now - stamps[-1] >= 0.005:
                stamps.append(now)

    t = threading.Thread(target=stamper)
    t.start()
    time.sleep(0.01)
    start = time.monotonic()
    hetsim.run(big, os.path.join(EX, "cluster-16k-h100.pbtxt"))
    end = time.monotonic()
    stop.set()
    t.join()
    assert end - start > 0.06, "the call is too short to tell"
    assert any(start + 0.05 < s < end for s in stamps)


def test_search_loop_example():
    r = subprocess.run([sys.executable, os.path.join(EX, "python", "search_loop.py")], cwd=SOURCE, capture_output=True,
                       text=True, env={**os.environ})
    assert r.returncode == 0, r.stderr
    # TP 2 and TP 4 are faster but do not fit in the A100s' 80 GiB (report.oom): the loop keeps TP 8.
    assert "tp2 out of memory: stage" in r.stdout and "tp4 out of memory: stage" in r.stdout
    assert "best: tp8" in r.stdout


def test_an_out_of_memory_plan_says_so_in_report_oom():
    plan = text_format.Parse(open(os.path.join(EX, "plan-megatron-39b.pbtxt")).read(), hetsim_pb2.Plan())
    for stage in plan.stages:
        stage.tensor_parallel, stage.data_parallel = 4, 64
    plan.micro_batch_size = 4 * 64
    report = hetsim.run(plan, os.path.join(EX, "cluster-a100-512.pbtxt"))
    assert report.oom
    assert any(s.oom and s.peak_memory_gib > s.memory_capacity_gib for s in report.stages)


def test_plan_takes_context_parallelism_and_fp32_gradients():
    model = os.path.join(NAIVE, "models", "gpt-hapt-case.pbtxt")
    plan = hetsim.plan(model, HAPT_CLUSTER, micro_batch_size=1, context_parallel=2, cp_comm_type="all_gather",
                       grad_reduce_in_fp32=True)
    assert plan.context_parallel == 2
    assert plan.cp_comm_type == hetsim_pb2.CP_COMM_ALL_GATHER
    assert plan.grad_reduce_in_fp32
    # The CLI's flags of the same names write the same plan.
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "plan.pbtxt")
        code, _, err = cli("plan", "--model", model, "--cluster", HAPT_CLUSTER, "--micro-batch", "1",
                           "--context-parallel", "2", "--cp-comm-type", "all_gather", "--grad-reduce-in-fp32",
                           "--threads", "1", "--out", out)
        assert code == 0, err
        assert [s.mesh for s in text(out, hetsim_pb2.Plan).stages] == [s.mesh for s in plan.stages]
    with pytest.raises(hetsim.HetsimError, match="cp-comm-type"):
        hetsim.plan(model, HAPT_CLUSTER, micro_batch_size=1, context_parallel=2, cp_comm_type="ring")


def test_plan_searches_mixed_replicas_unless_told_not_to():
    # 8 A100 and 8 RTX 4090 on one network, a 1.3B GPT, 16 samples: HAPT's mixed-replicas family wins
    # (tests/planner/planner_mixed_replicas_test.cc); search_mixed_replicas=False is --no-mixed-replicas.
    data = os.path.join(SOURCE, "tests", "planner_data")
    model, cluster = os.path.join(data, "gpt-1.3b.pbtxt"), os.path.join(data, "cluster-a100-rtx4090.pbtxt")
    mixed = hetsim.plan(model, cluster, global_batch_size=16)
    assert len(mixed.stages[0].replica_groups) > 1
    one_island = hetsim.plan(model, cluster, global_batch_size=16, search_mixed_replicas=False)
    assert all(len(s.replica_groups) == 0 for s in one_island.stages)
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "plan.pbtxt")
        code, _, err = cli("plan", "--model", model, "--cluster", cluster, "--global-batch", "16",
                           "--no-mixed-replicas", "--threads", "1", "--out", out)
        assert code == 0, err
        written = text(out, hetsim_pb2.Plan)
        assert [s.mesh for s in written.stages] == [s.mesh for s in one_island.stages]
        assert [s.num_layers for s in written.stages] == [s.num_layers for s in one_island.stages]


def test_plan_checks_its_settings_as_the_cli_does():
    # One PlanCommand (service/planning/) behind both: the same checks, the same messages.
    model = os.path.join(NAIVE, "models", "gpt-hapt-case.pbtxt")
    for kwargs, flag in [({"global_batch_size": 0}, "--global-batch"), ({"layers": -1}, "--layers"),
                         ({"context_parallel": -1}, "--context-parallel"), ({"prediction": "oracle"}, "--prediction")]:
        with pytest.raises(hetsim.HetsimError) as e:
            hetsim.plan(model, HAPT_CLUSTER, **kwargs)
        assert str(e.value).startswith(flag), str(e.value)


def test_import_without_protobuf_says_what_to_install():
    # A fresh interpreter in which google.protobuf cannot be imported.
    code = ("import sys; sys.modules['google.protobuf'] = None; sys.modules['google'] = None\n"
            "try:\n    import hetsim\nexcept ImportError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ))
    assert "hetsim needs protobuf's Python module: apt install python3-protobuf" in out.stdout, out.stdout + out.stderr


# calibrate, import, export and the Chakra replay: each call's result is the file (or the text) the command
# writes, and bad input raises with the command's message.
CALIBRATE_LOG = os.path.join(SOURCE, "tests", "calibrate_data", "all_reduce_perf_dgx_a100_1node.txt")
DGX_CLUSTER = os.path.join(SOURCE, "validation", "nccl", "cluster-dgx-a100-2node.pbtxt")
A100 = os.path.join(EX, "cluster-a100-512.pbtxt")
LAUNCH_LINE = os.path.join(SOURCE, "tests", "megatron_data", "gpt3_175b.sh")


def raises_as_the_cli(call, *args):
    """`call()` raises HetsimError with the message `hetsim ARGS` prints (exit 2), its lines unprefixed."""
    code, _, err = cli(*args)
    assert code == 2, err
    prefix = f"hetsim {args[0]}: "
    lines = [line[len(prefix):] for line in err.splitlines()
             if line.startswith(prefix) and not line.startswith(prefix + "warning: ")]
    with pytest.raises(hetsim.HetsimError) as e:
        call()
    assert str(e.value) == "\n".join(lines)


def test_islands_gives_the_cli_table():
    mixed = os.path.join(EX, "cluster-mixed-cloud.pbtxt")
    code, out, err = cli("islands", "--cluster", mixed)
    assert code == 0, err
    assert hetsim.islands(mixed) == out
    assert "2 GPU islands" in out
    code, out, err = cli("islands", "--cluster", mixed, "--tau-c", "0.5", "--merge-factor", "1.3")
    assert code == 0, err
    assert hetsim.islands(text(mixed, hetsim_pb2.Cluster), tau_c=0.5, merge_factor=1.3) == out  # a message in
    # A V100 has no BF16 peak: compared at its FP16 peak, as the CLI does.
    code, out, err = cli("islands", "--cluster", HAPT_CLUSTER)
    assert code == 0, err
    assert hetsim.islands(HAPT_CLUSTER) == out
    # A tolerance below 0 (the flags' usage error).
    raises_as_the_cli(lambda: hetsim.islands(mixed, tau_b=-1), "islands", "--cluster", mixed, "--tau-b", "-1")
    raises_as_the_cli(lambda: hetsim.islands(mixed, merge_factor=0.5), "islands", "--cluster", mixed,
                      "--merge-factor", "0.5")


def test_calibrate_gives_the_cli_cluster():
    expected = cli_message(hetsim_pb2.Cluster, "calibrate", CALIBRATE_LOG, "--cluster", DGX_CLUSTER,
                           "--accept-poor-fit", "--out")
    got = hetsim.calibrate(DGX_CLUSTER, CALIBRATE_LOG, accept_poor_fit=True)
    assert got == expected
    assert got != text(DGX_CLUSTER, hetsim_pb2.Cluster)
    raises_as_the_cli(lambda: hetsim.calibrate(DGX_CLUSTER, CALIBRATE_LOG), "calibrate", CALIBRATE_LOG,
                      "--cluster", DGX_CLUSTER, "--out", os.path.join(tempfile.gettempdir(), "never.pbtxt"))
    raises_as_the_cli(lambda: hetsim.calibrate(DGX_CLUSTER, CALIBRATE_LOG, max_mape=-3), "calibrate",
                      CALIBRATE_LOG, "--cluster", DGX_CLUSTER, "--max-mape", "-3", "--out", "never.pbtxt")
    with pytest.raises(TypeError, match="logs\\[0\\]: expected a file path"):
        hetsim.calibrate(DGX_CLUSTER, [hetsim_pb2.Cluster()])


def test_import_plan_gives_the_cli_plan():
    expected = cli_message(hetsim_pb2.Plan, "import", "megatron", LAUNCH_LINE, "--cluster", A100, "--out")
    assert hetsim.import_plan("megatron", A100, file=LAUNCH_LINE) == expected
    assert len(expected.stages) == 16
    raises_as_the_cli(lambda: hetsim.import_plan("megatron", A100, file=LAUNCH_LINE, strict=True),
                      "import", "megatron", LAUNCH_LINE, "--cluster", A100, "--strict")


def test_export_megatron_gives_the_cli_launch_line():
    plan = os.path.join(EX, "plan-megatron-39b.pbtxt")
    code, out, err = cli("export", "megatron", plan, "--cluster", A100)
    assert code == 0, err
    assert hetsim.export_megatron(plan, A100) == out
    assert "pretrain_gpt.py" in out
    raises_as_the_cli(lambda: hetsim.export_megatron(HAPT_PLAN, A100), "export", "megatron", HAPT_PLAN,
                      "--cluster", A100)


def test_export_nemo_gives_the_cli_config_and_takes_a_model():
    plan = os.path.join(EX, "plan-megatron-39b.pbtxt")
    code, out, err = cli("export", "nemo", plan, "--cluster", A100)
    assert code == 0, err
    assert hetsim.export_nemo(plan, A100) == out
    assert "tensor_model_parallel_size:" in out and "mcore_gpt: true" in out
    # A plan without a model, with `model` as --model: the message in, the file on the command line.
    bare = text(plan, hetsim_pb2.Plan)
    model = os.path.join(EX, "model-gpt39b.pbtxt")
    bare.ClearField("model")
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "bare.pbtxt")
        with open(path, "w") as f:
            f.write(text_format.MessageToString(bare))
        code, out, err = cli("export", "nemo", path, "--cluster", A100, "--model", model)
        assert code == 0, err
        assert hetsim.export_nemo(path, A100, model=model) == out
        assert hetsim.export_nemo(bare, A100, model=model) == out.replace(path, bare.name)
        raises_as_the_cli(lambda: hetsim.export_nemo(plan, A100, model=model), "export", "nemo", plan,
                          "--cluster", A100, "--model", model)
    raises_as_the_cli(lambda: hetsim.export_nemo(HAPT_PLAN, HAPT_CLUSTER), "export", "nemo", HAPT_PLAN,
                      "--cluster", HAPT_CLUSTER)


def test_export_torchtitan_gives_the_cli_config():
    cluster = os.path.join(EX, "cluster-16k-h100.pbtxt")
    config = os.path.join(SOURCE, "tests", "torchtitan_data", "llama3_8b_2025.toml")
    with tempfile.TemporaryDirectory() as d:
        plan = os.path.join(d, "plan.pbtxt")
        code, _, err = cli("import", "torchtitan", config, "--nodes", "2", "--cluster", cluster, "--out", plan)
        assert code == 0, err
        code, out, err = cli("export", "torchtitan", plan, "--cluster", cluster)
        assert code == 0, err
        assert hetsim.export_torchtitan(plan, cluster) == out
        assert hetsim.export_torchtitan(text(plan, hetsim_pb2.Plan), cluster) == out  # a message in
        assert "flavor = '8B'" in out
    raises_as_the_cli(lambda: hetsim.export_torchtitan(HAPT_PLAN, HAPT_CLUSTER), "export", "torchtitan", HAPT_PLAN,
                      "--cluster", HAPT_CLUSTER)


def test_export_deepspeed_gives_the_cli_files():
    plan = os.path.join(EX, "plan-megatron-39b.pbtxt")
    code, out, err = cli("export", "deepspeed", plan, "--cluster", A100)
    assert code == 0, err
    assert hetsim.export_deepspeed(plan, A100) == out
    assert out.startswith("ds_config.json:\n") and "--deepspeed_config ds_config.json" in out
    with tempfile.TemporaryDirectory() as d:
        ours, theirs = os.path.join(d, "api"), os.path.join(d, "cli")
        os.mkdir(ours)
        os.mkdir(theirs)
        code, out, err = cli("export", "deepspeed", plan, "--cluster", A100, "--out-dir", theirs)
        assert code == 0, err
        assert hetsim.export_deepspeed(plan, A100, out_dir=ours) == out.replace(theirs, ours)
        for name in ("ds_config.json", "launch.sh"):
            assert open(os.path.join(ours, name), "rb").read() == open(os.path.join(theirs, name), "rb").read()
    raises_as_the_cli(lambda: hetsim.export_deepspeed(HAPT_PLAN, HAPT_CLUSTER), "export", "deepspeed", HAPT_PLAN,
                      "--cluster", HAPT_CLUSTER)


def test_export_chakra_and_its_replay_give_the_cli_files():
    with tempfile.TemporaryDirectory() as d:
        ours, theirs = os.path.join(d, "api"), os.path.join(d, "cli")
        code, out, err = cli("export", "chakra", HAPT_PLAN, "--cluster", HAPT_CLUSTER, "--out", theirs)
        assert code == 0, err
        assert hetsim.export_chakra(HAPT_PLAN, HAPT_CLUSTER, out=ours) == out.replace(theirs, ours)
        assert sorted(os.listdir(ours)) == sorted(os.listdir(theirs))
        for name in os.listdir(theirs):
            assert open(os.path.join(ours, name), "rb").read() == open(os.path.join(theirs, name), "rb").read()
        expected = cli_message(hetsim_pb2.Report, "run", "--chakra", theirs, "--cluster", HAPT_CLUSTER,
                               "--no-wall-time", "--quiet", "--report")
        assert hetsim.replay_chakra(theirs, HAPT_CLUSTER) == expected
        assert hetsim.replay_chakra(ours, HAPT_CLUSTER).iteration_time_ms == expected.iteration_time_ms > 0
        missing = os.path.join(d, "missing")
        raises_as_the_cli(lambda: hetsim.replay_chakra(missing, HAPT_CLUSTER), "run", "--chakra", missing,
                          "--cluster", HAPT_CLUSTER)
        raises_as_the_cli(lambda: hetsim.export_chakra(HAPT_PLAN, A100, out=ours), "export", "chakra", HAPT_PLAN,
                          "--cluster", A100, "--out", ours)
