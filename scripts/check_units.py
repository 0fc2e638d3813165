#!/usr/bin/env python3
"""Fails when the spec and the modules below it convert units by hand or alias a unit to a bare number.

Issue 38: Time is a type of its own (base/time.h) and unit conversions are written once, in
base/time.h and base/units.h. This check keeps it so in base/ (spec included), topology/ and sim/:
  - no `using Time = int64_t` style alias, nor a typedef, for a time or a byte count;
  - no hand-written power-of-ten unit factor (`* 1e9`, `* 1e-6`, `/ 1e12`, `* 1000000`);
  - GpuId, LinkId and topology::DeviceId stay strong ids (base/ids.h's StrongId): no
    `using GpuId = int32_t` style alias or typedef of any of them, anywhere in the tree (`.value()` is
    the one way from an id to its integer).
The few legitimate exceptions are listed below with the reason, each by file and the exact text of
its line; a listed line that no longer exists fails too, so the list stays true.

Usage: scripts/check_units.py [ROOT]   (default: the repository). Exit 1 with the offending lines.
"""
import os
import re
import sys

CHECKED_DIRS = ('base', 'topology', 'sim')
CONVERSION_FILES = {'base/time.h', 'base/units.h'}  # the one place each conversion is written
# The resolver converts the schema's units into the spec's: through the named conversions, never by hand.
CHECKED_FILES = ('proto/resolve.cc', 'proto/resolve_cluster.cc')

ALIAS = re.compile(
    r'\b(using\s+\w*(Time|Bytes|Duration|Ps|Picoseconds)\w*\s*=\s*(std::)?(u?int\d+_t|long|int|double|float)\b'
    r'|typedef\s+(std::)?(u?int\d+_t|long|int|double|float)\s+\w*(Time|Bytes|Duration)\w*\s*;)')
ID_ALIAS = re.compile(r'\b(using\s+(GpuId|LinkId|DeviceId)\s*=(?!\s*StrongId<)|typedef\s+[\w:]+\s+(GpuId|LinkId|DeviceId)\s*;)')
# Every module's sources: an id alias may come back anywhere.
ID_DIRS = ('base', 'topology', 'sim', 'planner', 'service', 'traces', 'app', 'proto', 'bench', 'tests')
FACTOR = re.compile(r"[*/]\s*(1e[-+]?\d+|1(?:'?000){2,})(?![\w.'])")

# (file, exact stripped line): why the factor is not a unit conversion of time or bytes.
EXCEPTIONS = {
    ('sim/pipeline/iteration_metrics.cc',
     'if (m.seconds > 0 && gpus > 0) m.model_tflops_per_gpu = m.model_flop / m.seconds / gpus / 1e12;'):
        'FLOP/s to TFLOP/s for the report (a FLOP rate, not a time or a byte count)',
    ('sim/workload/gpu_compute.cc', 'PeakFieldName(dtype), peak * 1e-12, gpu.name));'):
        'FLOP/s back to the file\'s TFLOP/s in an error message',
    ('sim/workload/gpu_compute.cc',
     '"%s.hbm_bandwidth_gbytes_per_s: %g is not a positive number (GPU type \\"%s\\")", where, hbm * 1e-9, gpu.name));'):
        'bytes/s back to the file\'s GB/s in an error message (decimal GB, as the field says)',
    ('sim/workload/gpu_compute.cc', 'const double g = kernel_flop * 1e-9;'):
        'FLOPs to GFLOPs: the efficiency curve\'s parameter is in GFLOP (docs/gpu-compute.md)',
    ('sim/workload/gpu_compute.cc',
     'const double busy = (kernel_flop + half_efficiency_gflop_ * 1e9) / (peak_flop_per_s_ * max_efficiency_);'):
        'GFLOPs to FLOPs, the same curve',
}


def strip_comment(line):
    return re.sub(r'//.*', '', line)


def source_files(root, dirs):
    """The .h and .cc files below each of `dirs`, as (path, path relative to root)."""
    for top in dirs:
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if name.endswith(('.h', '.cc')):
                    path = os.path.join(dirpath, name)
                    yield path, os.path.relpath(path, root).replace(os.sep, '/')


def code_lines(path):
    """(line number, the line without its comment, stripped) of one source file."""
    with open(path, encoding='utf-8') as f:
        for number, line in enumerate(f, 1):
            yield number, strip_comment(line).strip()


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..')
    problems, seen = [], set()
    checked = [(os.path.join(root, rel), rel) for rel in CHECKED_FILES]
    checked += list(source_files(root, CHECKED_DIRS))
    for path, rel in checked:
        if not os.path.exists(path) or rel in CONVERSION_FILES:
            continue
        for number, code in code_lines(path):
            if ALIAS.search(code):
                problems.append(f'{rel}:{number}: a time or a byte count aliased to a bare number '
                                f'(use the types of base/time.h, base/units.h): {code}')
            elif FACTOR.search(code):
                if (rel, code) in EXCEPTIONS:
                    seen.add((rel, code))
                    continue
                problems.append(f'{rel}:{number}: a hand-written unit factor (convert through '
                                f'base/time.h or base/units.h): {code}')
    for path, rel in source_files(root, ID_DIRS):
        if rel == 'base/ids.h':
            continue
        for number, code in code_lines(path):
            if ID_ALIAS.search(code):
                problems.append(f'{rel}:{number}: an id aliased to an integer again (GpuId, LinkId and '
                                f'topology::DeviceId are strong ids, base/ids.h): {code}')
    for rel, code in sorted(set(EXCEPTIONS) - seen):
        problems.append(f'{rel}: listed exception no longer found (update scripts/check_units.py): {code}')
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
