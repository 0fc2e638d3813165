"""hetsim from Python: simulate, plan, validate planners' predictions, time collectives, sweep, check,
calibrate, import and export plans, replay Chakra traces.

Every input is a file path (format from its extension, as on the command line) or a message of
``hetsim.hetsim_pb2`` (the schema of proto/hetsim.proto); every result is a message. Errors raise
:class:`HetsimError` with the command line's text, ``<file>: <field path>: <problem>``, a message
passed in memory being named by its argument (``plan``, ``cluster``, ``plans[2]``). The C++ core
releases the GIL, so threads simulate candidates in parallel. docs/python.md.

    import hetsim
    report = hetsim.run("examples/plan-hapt-case.pbtxt", "examples/cluster-hapt-case.pbtxt")
    print(report.iteration_time_ms)

The functions are defined from the C++ API's table of calls (app/api/api.cc, ``_hetsim.calls()``):
their names, parameters, defaults, docstrings and result messages are the table's.
"""

import inspect
import numbers
import operator
import os

try:
    from . import hetsim_pb2
except ImportError as e:  # the generated messages need protobuf's Python runtime
    if "google" not in str(e) and "protobuf" not in str(e):
        raise
    raise ImportError("hetsim needs protobuf's Python module: apt install python3-protobuf (Debian) "
                      f"or pip install protobuf ({e})") from None
from . import _hetsim


class HetsimError(ValueError):
    """Bad input (the CLI's exit code 2): ``file``, ``field_path`` and ``problem`` of the first line."""

    def __init__(self, message):
        super().__init__(message)
        first = message.splitlines()[0] if message else ""
        parts = first.split(": ", 2)
        self.file = parts[0] if len(parts) > 1 else ""
        self.field_path = parts[1] if len(parts) > 2 else ""
        self.problem = parts[-1]


def _type_name(value):
    descriptor = getattr(value, "DESCRIPTOR", None)
    return descriptor.full_name if descriptor is not None else value.__class__.__name__


def _input(value, expected, name):
    """("path", str) for a path, ("bytes", serialized) for a message of type `expected`."""
    if isinstance(value, (str, os.PathLike)):
        # As the file system's bytes: a name read by os.listdir with undecodable bytes (surrogates) could
        # not be passed on ("Unable to cast Python instance to C++ type", session 33).
        return ("path", os.fsencode(value))
    if expected is None:  # a text input (a log, a CSV): only ever a file
        raise TypeError(f"{name}: expected a file path, got {_type_name(value)}")
    descriptor = getattr(value, "DESCRIPTOR", None)
    if descriptor is None or not hasattr(value, "SerializeToString"):
        raise TypeError(f"{name}: expected a file path or a hetsim_pb2.{expected.DESCRIPTOR.name}, "
                        f"got {_type_name(value)}")
    if descriptor.full_name != expected.DESCRIPTOR.full_name:
        raise TypeError(f"{name}: expected a hetsim_pb2.{expected.DESCRIPTOR.name}, got {descriptor.full_name}")
    return ("bytes", value.SerializeToString())


# The messages an "any input" parameter takes, by the name `hetsim check --type` gives them.
_TYPES = {hetsim_pb2.Cluster: "cluster", hetsim_pb2.Model: "model", hetsim_pb2.Plan: "plan",
          hetsim_pb2.Sweep: "sweep", hetsim_pb2.Report: "report", hetsim_pb2.Faults: "faults"}


def _any_input(value, name):
    """A path, or a message of one of _TYPES with its type: ("bytes", serialized, "plan")."""
    if isinstance(value, (str, os.PathLike)):
        return ("path", os.fsencode(value))
    kind = next((t for t in _TYPES if getattr(value, "DESCRIPTOR", None) is not None
                 and value.DESCRIPTOR.full_name == t.DESCRIPTOR.full_name), None)
    if kind is None:
        raise TypeError(f"{name}: expected a file path or a hetsim_pb2 Cluster, Model or Plan, got "
                        f"{_type_name(value)}")
    return _input(value, kind, name) + (_TYPES[kind],)


def _argument(param, value):
    """`value` as the C++ call takes the parameter `param` (app/api/api.h, Kind)."""
    kind, name = param["kind"], param["name"]
    message = getattr(hetsim_pb2, param["message"]) if param["message"] else None
    if kind == "input":
        return _input(value, message, name)
    if kind == "inputs":
        if value is None:  # an optional list left out (its default): none
            value = []
        if isinstance(value, (str, os.PathLike)) or hasattr(value, "DESCRIPTOR"):
            value = [value]
        return [_input(v, message, f"{name}[{i}]") for i, v in enumerate(value)]
    if kind == "optional_input":
        return None if value is None else _input(value, message, name)
    if kind == "any_input":
        return _any_input(value, name)
    if kind == "ints":
        if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
            raise TypeError(f"{name}: expected a list of integers, got {_type_name(value)}")
        return [_scalar("int", f"{name}[{i}]", v) for i, v in enumerate(value)]
    return _scalar(kind, name, value)


def _scalar(kind, name, value):
    """`value` as a str, int, float or bool, of that type already: int(1.5), float("0.2") and
    bool("false") converted silently before (session 33); an int is fine where a float is asked."""
    if kind == "str":
        if not isinstance(value, str):
            raise TypeError(f"{name}: expected a str, got {_type_name(value)}")
        return value
    if kind == "bool":
        if type(value).__name__ not in ("bool", "bool_"):  # Python's and numpy's
            raise TypeError(f"{name}: expected True or False, got {_type_name(value)}")
        return bool(value)
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        raise TypeError(f"{name}: expected {'a number' if kind == 'float' else 'an integer'}, got "
                        f"{_type_name(value)}")
    if kind == "float":
        if not isinstance(value, numbers.Real):
            raise TypeError(f"{name}: expected a number, got {_type_name(value)}")
        return float(value)
    try:
        return operator.index(value)  # int, numpy's integers; not 1.5 or "12"
    except TypeError:
        raise TypeError(f"{name}: expected an integer, got {_type_name(value)}") from None


def _define(call):
    """The Python function of one call of the C++ table."""
    params = call["params"]
    signature = inspect.Signature([
        inspect.Parameter(p["name"], inspect.Parameter.KEYWORD_ONLY if p["keyword_only"]
                          else inspect.Parameter.POSITIONAL_OR_KEYWORD,
                          default=inspect.Parameter.empty if p["required"] else p["default"])
        for p in params])
    result = getattr(hetsim_pb2, call["result"]) if call["result"] else None

    def function(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        arguments = [_argument(p, bound.arguments[p["name"]]) for p in params]
        try:
            data = _hetsim.call(call["name"], arguments)
        except _hetsim.Error as e:
            raise HetsimError(str(e)) from None
        if result is None:
            return data.decode()
        message = result()
        message.ParseFromString(data)
        return message

    function.__name__ = function.__qualname__ = call["name"]
    function.__doc__ = call["doc"]
    function.__signature__ = signature
    function.__module__ = __name__
    return function


_CALLS = [_define(call) for call in _hetsim.calls()]
globals().update({f.__name__: f for f in _CALLS})

__all__ = ["HetsimError", *[f.__name__ for f in _CALLS], "hetsim_pb2"]
