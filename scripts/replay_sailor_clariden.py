#!/usr/bin/env python3
"""Replay the Sailor Clariden runs from the artifact's own layer profile (session 40, issue 40).

Where does hetsim's error on validation/sailor-clariden-gh200.pbtxt come from: the per-layer GPU time, or
what the fork does around it? This script answers without hetsim. It takes the artifact's layer profile of
this code on these GPUs (sailor/Planner/simulations/profiles_tmp.json, "OPT-350" / "GH-96", TP 4: forward
and backward seconds of each of the 26 layers per micro-batch size, written by the fork's --sailor-profile
hooks), runs each stage's layers in DeepSpeed's TrainSchedule exactly as its code orders the instructions
(deepspeed/runtime/pipe/schedule.py, TrainSchedule.steps and _step_to_micro_batch: even stages run forwards
on even steps, odd stages on odd steps; SendActivation/RecvActivation and SendGrad/RecvGrad pair up at the
step boundaries and block, p2p.send/recv with async_op=False), adds each run's logged gradient reduction
(`red_grads`), and compares with the measured `real`.

A stage is one serial timeline (the fork's boundary code synchronises host and GPU at every exchange:
docs/validation.md, "Session 40"). --boundary-ms adds a cost to every pass that rebuilds a partitioned tensor
(the fork's reconstruct_tensor: a forward on every stage but the first, a backward on every stage but the
last) and --send-ms to every blocking pair; both default to 0 (what the profile alone says). The micro-batch
1 profile is an upper end (the profiler's own events sit inside it; session 37).

Usage: scripts/replay_sailor_clariden.py --artifact /path/to/eth-easl/sailor [--boundary-ms X] [--send-ms Y]
(a checkout of the artifact; read at its commit cf2c8e3). Prints one row per run; writes nothing.
"""
import argparse
import importlib.util
import json
import os

_HERE = os.path.dirname(os.path.abspath(__file__))
_SPEC = importlib.util.spec_from_file_location("gen_validation_sailor_clariden",
                                               os.path.join(_HERE, "gen_validation_sailor_clariden.py"))
gen = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(gen)

VALIDATION = "sailor/Planner/simulations/validation/clariden/OPT-350"
PROFILE = "sailor/Planner/simulations/profiles_tmp.json"


def micro_batch_of_step(step, stage, stages):
    """DeepSpeed's TrainSchedule._step_to_micro_batch: (micro-batch id, is_forward)."""
    if step % 2 == 0 and stage % 2 == 0:
        return step // 2 - stage // 2, True
    if step % 2 == 1 and stage % 2 == 1:
        return (step - 1) // 2 - stage // 2, True
    if step % 2 == 0:
        return step // 2 - stages + (stage + 1) // 2, False
    return (step - 1) // 2 - stages + 1 + stage // 2, False


def instructions(micro_batches, stages, stage):
    """TrainSchedule.steps() for one stage: the exchanges and passes in the order the engine runs them."""
    out = []
    prev = -1

    def valid(b):
        return 0 <= b < micro_batches
    for step in range(2 * (micro_batches + stages - 1)):
        mb, forward = micro_batch_of_step(step, stage, stages)
        if forward:
            if valid(prev) and stage > 0:
                out.append(("SendGrad", prev))
            if valid(mb) and stage > 0:
                out.append(("RecvActivation", mb))
        else:
            if valid(mb) and stage < stages - 1:
                out.append(("RecvGrad", mb))
            if valid(prev) and stage < stages - 1:
                out.append(("SendActivation", prev))
        if valid(mb):
            out.append(("Forward" if forward else "Backward", mb))
        prev = mb
    return out


PEER = {"SendActivation": (1, "RecvActivation"), "RecvActivation": (-1, "SendActivation"),
        "SendGrad": (-1, "RecvGrad"), "RecvGrad": (1, "SendGrad")}


def replay_ms(micro_batches, forward_ms, backward_ms, boundary_ms, send_ms):
    """Blocking pairs start when both sides reach them; passes run back to back on their stage."""
    stages = len(forward_ms)
    program = [instructions(micro_batches, stages, s) for s in range(stages)]
    pc = [0] * stages
    clock = [0.0] * stages
    while any(pc[s] < len(program[s]) for s in range(stages)):
        moved = False
        for s in range(stages):
            if pc[s] >= len(program[s]):
                continue
            op, mb = program[s][pc[s]]
            if op in ("Forward", "Backward"):
                rebuilds = (op == "Forward" and s > 0) or (op == "Backward" and s < stages - 1)
                clock[s] += (forward_ms[s] if op == "Forward" else backward_ms[s]) + (boundary_ms if rebuilds else 0)
                pc[s] += 1
                moved = True
                continue
            step, want = PEER[op]
            peer = s + step
            if pc[peer] < len(program[peer]) and program[peer][pc[peer]] == (want, mb):
                clock[s] = clock[peer] = max(clock[s], clock[peer]) + send_ms
                pc[s] += 1
                pc[peer] += 1
                moved = True
        if not moved:
            raise RuntimeError("the schedule deadlocked")
    return max(clock)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--artifact", required=True, help="a checkout of github.com/eth-easl/sailor")
    parser.add_argument("--boundary-ms", type=float, default=0.0)
    parser.add_argument("--send-ms", type=float, default=0.0)
    args = parser.parse_args()
    with open(os.path.join(args.artifact, PROFILE)) as f:
        profile = json.load(f)["OPT-350"]["GH-96"]
    print(f"{'case':10s} {'PP':>2s} {'mbs':>3s} {'mb':>3s} {'measured ms':>11s} {'replay ms':>9s} {'measured/replay':>15s}")
    for run in gen.RUNS:
        path, gbs, dp, _, mbs, stages, real = run
        with open(os.path.join(args.artifact, VALIDATION, path)) as f:
            reduce_ms = json.load(f)["red_grads"] * 1e3
        layers = profile[str(mbs)][str(gen.TP)]
        forward = [sum(layers[str(i)][0] for i in range(a, b + 1)) * 1e3 for a, b in stages]
        backward = [sum(layers[str(i)][1] for i in range(a, b + 1)) * 1e3 for a, b in stages]
        micro_batches = gbs // (mbs * dp)
        replay = replay_ms(micro_batches, forward, backward, args.boundary_ms, args.send_ms) + reduce_ms
        print(f"{gen.case_name(run):10s} {len(stages):2d} {mbs:3d} {micro_batches:3d} {real * 1e3:11.1f} "
              f"{replay:9.1f} {(real * 1e3 / replay - 1) * 100:+14.1f}%")


if __name__ == "__main__":
    main()
