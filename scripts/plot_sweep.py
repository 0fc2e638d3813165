#!/usr/bin/python3
"""Draws a sweep's results (the CSV or JSON Lines of `hetsim sweep`): one metric against one axis,
one line per value of another axis (optional). PNG or SVG from the output's extension.

  scripts/plot_sweep.py results.csv --x cluster.inter_island_links[0].bandwidth_gbps \
      --y iteration_time_ms --series plan.schedule -o fig.png

Rows whose status is not "ok" are left out (and counted on stderr). Needs python3-matplotlib
(scripts/setup.sh installs it).
"""
import argparse
import csv
import json
import sys

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402


def read_rows(path):
    with open(path, newline="", encoding="utf-8") as f:
        if path.endswith((".jsonl", ".ndjson")):
            return [json.loads(line) for line in f if line.strip()]
        return list(csv.DictReader(f))


def as_number(value):
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("results", help="the sweep's CSV or .jsonl file")
    p.add_argument("--x", required=True, help="axis column on the horizontal axis")
    p.add_argument("--y", default="iteration_time_ms", help="metric column (default iteration_time_ms)")
    p.add_argument("--series", help="axis column whose values become separate lines")
    p.add_argument("--title", help="chart title (default: the metric against the axis)")
    p.add_argument("--xlabel", help="horizontal axis label (default: the column name)")
    p.add_argument("--ylabel", help="vertical axis label (default: the column name)")
    p.add_argument("-o", "--out", required=True, help="output image (.png or .svg)")
    args = p.parse_args()

    rows = read_rows(args.results)
    if not rows:
        sys.exit(f"plot_sweep: {args.results}: no rows")
    for column in [args.x, args.y] + ([args.series] if args.series else []):
        if column not in rows[0]:
            sys.exit(f"plot_sweep: {args.results}: no column {column!r}; columns: {', '.join(rows[0])}")

    lines = {}  # series value -> [(x, y)], in first-seen order
    skipped = 0
    for row in rows:
        x, y = as_number(row[args.x]), as_number(row[args.y])
        if row.get("status") != "ok" or x is None or y is None:
            skipped += 1
            continue
        key = str(row[args.series]) if args.series else args.y
        lines.setdefault(key, []).append((x, y))
    if skipped:
        print(f"plot_sweep: left out {skipped} row(s) without an ok status or a number", file=sys.stderr)
    if not lines:
        sys.exit("plot_sweep: nothing to draw")

    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    markers = "os^Dv<>p*h"
    for i, (key, points) in enumerate(lines.items()):
        points.sort()
        ax.plot([x for x, _ in points], [y for _, y in points], marker=markers[i % len(markers)], label=key)
    ax.set_xlabel(args.xlabel or args.x)
    ax.set_ylabel(args.ylabel or args.y)
    ax.set_title(args.title or f"{args.y} vs {args.x}")
    ax.grid(True, alpha=0.3)
    if args.series:
        ax.legend(title=args.series)
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
