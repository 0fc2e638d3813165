#!/usr/bin/env python3
"""Writes the seeds of fuzz_api_args (tests/fuzz/corpus/fuzz_api_args/) in its input layout
(fuzz_api_args.cc): valid calls of run, validate, collective and check on the HAPT case's files,
and the Python examples issue 42 names (collective on GPUs [0, 2**32 + 1], a negative count, a NaN
wall limit). Binary messages come from `hetsim convert`.

    python3 tests/fuzz/make_api_args_corpus.py build/hetsim
"""
import os
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "..", "examples")
OUT = os.path.join(HERE, "corpus", "fuzz_api_args")
# Indices into the fuzzed calls: the api table without plan and sweep, in table order.
RUN, VALIDATE, COLLECTIVE, CHECK = 0, 1, 2, 3
TYPES = {"cluster": 0, "model": 1, "plan": 2, "sweep": 3, "faults": 4, "report": 5}


def binary(hetsim, name):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "m.pb")
        subprocess.run([hetsim, "convert", os.path.join(EXAMPLES, name), out], check=True, capture_output=True)
        with open(out, "rb") as f:
            return f.read()


def default():
    return b"\x00"


def value(raw):
    return b"\x01" + raw


def message(kind, data):
    return value(bytes([TYPES[kind]]) + struct.pack("<H", len(data)) + data)


def text(s):
    data = s.encode()
    return value(bytes([len(data)]) + data)


def integer(i):
    return value(struct.pack("<q", i))


def real(x):
    return value(struct.pack("<d", x))


def flag(b):
    return value(bytes([1 if b else 0]))


def ints(values):
    return value(bytes([len(values)]) + b"".join(struct.pack("<q", v) for v in values))


def main():
    hetsim = sys.argv[1]
    cluster = binary(hetsim, "cluster-hapt-case.pbtxt")
    plan = binary(hetsim, "plan-hapt-case.pbtxt")
    seeds = {
        # run(plan, cluster, network, ideal, max_events, max_wall_seconds)
        "run_hapt": bytes([RUN]) + message("plan", plan) + message("cluster", cluster) + default() * 4,
        "run_nan_wall": bytes([RUN]) + message("plan", plan) + message("cluster", cluster) + default() * 3
        + real(float("nan")),
        "run_negative_events": bytes([RUN]) + message("plan", plan) + message("cluster", cluster) + default() * 2
        + integer(-5) + default(),
        # validate(plans, cluster, chart)
        "validate_hapt": bytes([VALIDATE]) + value(bytes([1, TYPES["plan"]]) + struct.pack("<H", len(plan)) + plan)
        + message("cluster", cluster) + default(),
        # collective(cluster, op, bytes, gpus, algorithm, network, ideal, max_wall_seconds)
        "collective_hapt": bytes([COLLECTIVE]) + message("cluster", cluster) + text("all-reduce") + integer(1 << 20)
        + ints([0, 1, 2, 3]) + default() * 4,
        "collective_gpu_2p32": bytes([COLLECTIVE]) + message("cluster", cluster) + text("all-reduce")
        + integer(1024) + ints([0, 2**32 + 1]) + default() * 4,
        "collective_wall_limit": bytes([COLLECTIVE]) + message("cluster", cluster) + text("all-gather")
        + integer(1 << 30) + ints(list(range(6))) + default() * 3 + real(0.001),
        # check(file, cluster, type)
        "check_cluster": bytes([CHECK]) + message("cluster", cluster) + default() + text("cluster"),
        "check_plan": bytes([CHECK]) + message("plan", plan) + message("cluster", cluster) + text("plan"),
    }
    os.makedirs(OUT, exist_ok=True)
    for name, data in seeds.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
