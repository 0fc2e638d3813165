#!/usr/bin/env python3
"""Prints the torchtitan set's measured speed-ups against hetsim's, as a Markdown table.

Each pair is two cases of validation/torchtitan-h100.pbtxt that differ in one thing torchtitan's
benchmark pages vary (torch.compile, Float8, async TP, the pipeline schedule, the context length with
context parallelism, the FSDP degree); the ratio is the first case's tokens/s per GPU over the
second's, measured and predicted. What a user of a PyTorch-native stack needs to trust is that
hetsim gets the direction and the size of each right (issue 40; docs/validation.md, "torchtitan").

  build/hetsim fidelity validation/torchtitan-h100.pbtxt --json /tmp/tt.json
  python3 scripts/torchtitan_speedups.py /tmp/tt.json

The last column is hetsim's change over the measured change, (predicted ratio - 1) / (measured
ratio - 1): 1 is right, above 1 hetsim over-credits the change, below 1 under-credits it, below 0 the
direction is wrong.
"""
import json
import sys

# (what changes, the case with it, the case without it)
PAIRS = [
    ("torch.compile over eager, 8B, 8 GPUs", "8b-8gpu-compile", "8b-8gpu-fsdp"),
    ("torch.compile over eager, 8B, 128 GPUs", "8b-128gpu-compile", "8b-128gpu-fsdp"),
    ("Float8 over BF16, 8B FSDP 8", "8b-8gpu-compile-fp8", "8b-8gpu-compile"),
    ("Float8 over BF16, 8B FSDP 128", "8b-128gpu-compile-fp8", "8b-128gpu-compile"),
    ("Float8 over BF16, 70B TP 8 (2025)", "70b-2025-tp-fp8", "70b-2025-tp-bf16"),
    ("Float8 over BF16, 70B async TP 8 (2025)", "70b-2025-asynctp-fp8", "70b-2025-asynctp-bf16"),
    ("Float8 over BF16, 8B TP 8 (2025)", "8b-2025-tp-fp8", "8b-2025-tp-bf16"),
    ("Float8 over BF16, 8B async TP 8 (2025)", "8b-2025-asynctp-fp8", "8b-2025-asynctp-bf16"),
    ("async TP over TP, 70B Float8 (2024)", "70b-2d-asynctp", "70b-2d"),
    ("async TP over TP, 70B BF16 (2025)", "70b-2025-asynctp-bf16", "70b-2025-tp-bf16"),
    ("async TP over TP, 70B Float8 (2025)", "70b-2025-asynctp-fp8", "70b-2025-tp-fp8"),
    ("async TP over TP, 8B BF16 (2025)", "8b-2025-asynctp-bf16", "8b-2025-tp-bf16"),
    ("async TP over TP, 8B Float8 (2025)", "8b-2025-asynctp-fp8", "8b-2025-tp-fp8"),
    ("interleaved 1F1B over 1F1B, 405B PP 8", "405b-3d-interleaved", "405b-3d-1f1b"),
    ("8B 64K (CP 2) over 32K (CP 1)", "8b-cp2-64k", "8b-cp1-32k"),
    ("8B 128K (CP 4) over 64K (CP 2)", "8b-cp4-128k", "8b-cp2-64k"),
    ("8B 256K (CP 8) over 128K (CP 4)", "8b-cp8-256k", "8b-cp4-128k"),
    ("8B 256K (CP 8) over 32K (CP 1)", "8b-cp8-256k", "8b-cp1-32k"),
    ("405B 64K (CP 2) over 32K (CP 1)", "405b-4d-cp2-64k", "405b-4d-cp1-32k"),
    ("405B 128K (CP 4) over 64K (CP 2)", "405b-4d-cp4-128k", "405b-4d-cp2-64k"),
    ("405B 256K (CP 8) over 128K (CP 4)", "405b-4d-cp8-256k", "405b-4d-cp4-128k"),
    ("405B 256K (CP 8) over 32K (CP 1)", "405b-4d-cp8-256k", "405b-4d-cp1-32k"),
    ("FSDP 128 over FSDP 8, 8B eager", "8b-128gpu-fsdp", "8b-8gpu-fsdp"),
    ("FSDP 128 over FSDP 8, 8B compile", "8b-128gpu-compile", "8b-8gpu-compile"),
    ("FSDP 128 over FSDP 8, 8B compile + Float8", "8b-128gpu-compile-fp8", "8b-8gpu-compile-fp8"),
]


def Cases(report_path):
  with open(report_path) as f:
    report = json.load(f)
  for s in report["sets"]:
    if s["name"] == "torchtitan-h100":
      return {c["name"]: c for c in s["cases"]}
  sys.exit(f"{report_path}: no set named torchtitan-h100 (run hetsim fidelity on validation/torchtitan-h100.pbtxt)")


def main():
  if len(sys.argv) != 2:
    sys.exit("usage: torchtitan_speedups.py FIDELITY.json")
  cases = Cases(sys.argv[1])
  print("| pair (the first case's tokens/s per GPU over the second's) | measured | hetsim | hetsim's change / measured |")
  print("|---|---|---|---|")
  for what, a, b in PAIRS:
    if a not in cases or b not in cases:
      sys.exit(f"{sys.argv[1]}: case {a if a not in cases else b} missing")
    measured = cases[a]["measured"] / cases[b]["measured"]
    predicted = cases[a]["predicted"] / cases[b]["predicted"]
    gain = (predicted - 1) / (measured - 1)
    wrong = " (wrong direction)" if gain < 0 else ""
    print(f"| {what} | {measured:.3f} | {predicted:.3f} | {gain:.2f}{wrong} |")


if __name__ == "__main__":
  main()
