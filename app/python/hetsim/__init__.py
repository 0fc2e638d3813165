"""hetsim from Python: simulate, plan, validate planners' predictions, time collectives, sweep, check.

Every input is a file path (format from its extension, as on the command line) or a message of
``hetsim.hetsim_pb2`` (the schema of proto/hetsim.proto); every result is a message. Errors raise
:class:`HetsimError` with the command line's text, ``<file>: <field path>: <problem>``, a message
passed in memory being named by its argument (``plan``, ``cluster``, ``plans[2]``). The C++ core
releases the GIL, so threads simulate candidates in parallel. docs/python.md.

    import hetsim
    report = hetsim.run("examples/plan-hapt-case.pbtxt", "examples/cluster-hapt-case.pbtxt")
    print(report.iteration_time_ms)
"""

import os

from . import hetsim_pb2
from . import _hetsim

__all__ = ["HetsimError", "run", "plan", "validate", "collective", "sweep", "check", "hetsim_pb2"]


class HetsimError(ValueError):
    """Bad input (the CLI's exit code 2): ``file``, ``field_path`` and ``problem`` of the first line."""

    def __init__(self, message):
        super().__init__(message)
        first = message.splitlines()[0] if message else ""
        parts = first.split(": ", 2)
        self.file = parts[0] if len(parts) > 1 else ""
        self.field_path = parts[1] if len(parts) > 2 else ""
        self.problem = parts[-1]


def _input(value, expected, name):
    """("path", str) for a path, ("bytes", serialized) for a message of type `expected`."""
    if isinstance(value, (str, os.PathLike)):
        return ("path", os.fspath(value))
    descriptor = getattr(value, "DESCRIPTOR", None)
    if descriptor is None or not hasattr(value, "SerializeToString"):
        raise TypeError(f"{name}: expected a file path or a hetsim_pb2.{expected.DESCRIPTOR.name}, "
                        f"got {_type_name(value)}")
    if descriptor.full_name != expected.DESCRIPTOR.full_name:
        raise TypeError(f"{name}: expected a hetsim_pb2.{expected.DESCRIPTOR.name}, got {descriptor.full_name}")
    return ("bytes", value.SerializeToString())


def _call(function, result_type, *args):
    try:
        data = function(*args)
    except _hetsim.Error as e:
        raise HetsimError(str(e)) from None
    if result_type is None:
        return data
    message = result_type()
    message.ParseFromString(data)
    return message


def run(plan, cluster, *, network="max-min", ideal=False, max_events=0, max_wall_seconds=0.0):
    """`hetsim run`: simulate one iteration of `plan` on `cluster`; returns a Report."""
    return _call(_hetsim.run, hetsim_pb2.Report, _input(plan, hetsim_pb2.Plan, "plan"),
                 _input(cluster, hetsim_pb2.Cluster, "cluster"), network, bool(ideal), int(max_events),
                 float(max_wall_seconds))


def plan(model, cluster, *, planner="hapt", global_batch_size=128, micro_batch_size=0, layers=0, threads=1,
         prediction="", context_parallel=1, cp_comm_type="p2p", grad_reduce_in_fp32=False):
    """`hetsim plan`: a Plan (model inline); prediction "hetsim" or "naive" fills Plan.prediction.

    context_parallel splits every sequence over that many GPUs (0 searches the powers of two),
    cp_comm_type is how ("p2p", "all_gather" or "a2a"; Plan.cp_comm_type), grad_reduce_in_fp32 prices
    FP32 gradients (Plan.grad_reduce_in_fp32), as `hetsim plan`'s flags of the same names."""
    return _call(_hetsim.plan, hetsim_pb2.Plan, _input(model, hetsim_pb2.Model, "model"),
                 _input(cluster, hetsim_pb2.Cluster, "cluster"), planner, int(global_batch_size),
                 int(micro_batch_size), int(layers), int(threads), prediction, int(context_parallel),
                 str(cp_comm_type), bool(grad_reduce_in_fp32))


def validate(plans, cluster, *, chart=False):
    """`hetsim validate`: plans carrying predictions against the simulation; a PlanValidationReport."""
    if isinstance(plans, (str, os.PathLike)) or hasattr(plans, "DESCRIPTOR"):
        plans = [plans]
    inputs = [_input(p, hetsim_pb2.Plan, f"plans[{i}]") for i, p in enumerate(plans)]
    return _call(_hetsim.validate, hetsim_pb2.PlanValidationReport, inputs,
                 _input(cluster, hetsim_pb2.Cluster, "cluster"), bool(chart))


def collective(cluster, *, op="all-reduce", bytes, gpus, algorithm="auto", network="max-min", ideal=False):
    """`hetsim collective`: one collective of `bytes` over the global GPU ids `gpus`; a CollectiveReport."""
    return _call(_hetsim.collective, hetsim_pb2.CollectiveReport, _input(cluster, hetsim_pb2.Cluster, "cluster"),
                 op, int(bytes), [int(g) for g in gpus], algorithm, network, bool(ideal))


def sweep(sweep, *, jobs=1):
    """`hetsim sweep`: a SweepResult, its points in point order, each with its axis values, status and
    report (a Sweep message names its files relative to the working directory)."""
    return _call(_hetsim.sweep, hetsim_pb2.SweepResult, _input(sweep, hetsim_pb2.Sweep, "sweep"), int(jobs))


_TYPES = {hetsim_pb2.Cluster: "cluster", hetsim_pb2.Model: "model", hetsim_pb2.Plan: "plan",
          hetsim_pb2.Sweep: "sweep", hetsim_pb2.Report: "report", hetsim_pb2.Faults: "faults"}


def check(file, *, cluster=None, type=""):
    """`hetsim check`: the summary of a valid input (path or message); raises HetsimError otherwise."""
    if isinstance(file, (str, os.PathLike)):
        arg = ("path", os.fspath(file))
    else:
        kind = next((t for t in _TYPES if getattr(file, "DESCRIPTOR", None) is not None
                     and file.DESCRIPTOR.full_name == t.DESCRIPTOR.full_name), None)
        if kind is None:
            raise TypeError(f"file: expected a file path or a hetsim_pb2 Cluster, Model or Plan, got "
                            f"{_type_name(file)}")
        arg = _input(file, kind, "file")
        type = _TYPES[kind]
    cluster_arg = None if cluster is None else _input(cluster, hetsim_pb2.Cluster, "cluster")
    return _call(_hetsim.check, None, arg, type, cluster_arg).decode()


def _type_name(value):
    descriptor = getattr(value, "DESCRIPTOR", None)
    return descriptor.full_name if descriptor is not None else value.__class__.__name__
