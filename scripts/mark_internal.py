#!/usr/bin/env python3
"""Marks a module's internal headers: foo.h becomes foo_internal.h (and foo.cc foo_internal.cc).

A header named *_internal.h may be included only by the files of its own module directory and by the
tests that mirror it (tests/<module dir>/); the ctest test "module_deps"
(cmake/check_module_deps.cmake) fails on any other include of one. The rest of a module's headers are
its front door (docs/architecture.md, "Front doors and internals").

This script is re-runnable: it renames every header of INTERNAL below that still has its old name
(with its .cc, if any), and rewrites every reference to the old names in the tracked files (includes,
include guards, docs, comments). After merging a branch that includes an old name, run it again.

  scripts/mark_internal.py          # rename and rewrite (git mv; commit the result)
  scripts/mark_internal.py --dry    # print the renames only
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Headers no other module includes: the module's own machinery behind its front door.
INTERNAL = [
    'planner/candidates.h',
    'planner/context_parallel_cost.h',
    'planner/hapt_search.h',
    'planner/layers.h',
    'proto/cluster_networks.h',
    'proto/intra_node_layout.h',
    'proto/plan_meshes.h',
    'proto/socket_transport.h',
    'service/calibrate/csv_table.h',
    'service/calibrate/least_squares.h',
    'service/calibrate/nccl_log_lines.h',
    'service/chakra/attributes.h',
    'service/interop/shell_arithmetic.h',
    'service/interop/shell_lexer.h',
    'service/interop/tokenizer_vocab.h',
    'service/sweep/field.h',
    'service/sweep/filter.h',
    'service/sweep/output.h',
    'sim/collectives/transfer_graph.h',
    'sim/engine/event_queue.h',
    'sim/workload/layer_cost.h',
    'sim/workload/transformer_layers.h',
    'topology/nccl_fabric.h',
    'topology/topology_builder.h',
    'traces/html/chart.h',
    'traces/html/gantt.h',
    'traces/html/page.h',
    'traces/html/svg.h',
]


def git(*args):
    return subprocess.run(['git', '-C', ROOT, *args], check=True, capture_output=True, text=True).stdout


def guard(path):
    return 'HETSIM_' + re.sub(r'[^A-Za-z0-9]', '_', path).upper() + '_'


def main():
    dry = '--dry' in sys.argv[1:]
    renames = {}  # old path -> new path, headers and their sources (also those renamed by an earlier run)
    to_move = []
    for header in INTERNAL:
        stem = header[:-len('.h')]
        new_header = stem + '_internal.h'
        if os.path.exists(os.path.join(ROOT, header)):
            to_move.append(header)
        elif not os.path.exists(os.path.join(ROOT, new_header)):
            sys.exit(f'mark_internal: {header}: neither it nor {new_header} exists')
        renames[header] = new_header
        if os.path.exists(os.path.join(ROOT, stem + '.cc')):
            to_move.append(stem + '.cc')
        if os.path.exists(os.path.join(ROOT, stem + '.cc')) or os.path.exists(os.path.join(ROOT, stem + '_internal.cc')):
            renames[stem + '.cc'] = stem + '_internal.cc'
    for old in to_move:
        print(f'{old} -> {renames[old]}')
    if dry:
        return
    for old in to_move:
        git('mv', old, renames[old])
    by_path = re.compile(r'(?<![\w/.-])(' + '|'.join(re.escape(p) for p in renames) + r')\b')
    guards = {guard(old): guard(new) for old, new in renames.items() if old.endswith('.h')}
    by_guard = re.compile(r'\b(' + '|'.join(re.escape(g) for g in guards) + r')')
    # A bare file name in backquotes (docs/architecture.md's tables) when no other file has that name.
    names = {}
    for path in git('ls-files').splitlines():
        names.setdefault(os.path.basename(path), []).append(path)
    bare = {os.path.basename(o): os.path.basename(n) for o, n in renames.items()
            if len(names.get(os.path.basename(o), [])) <= 1}
    by_bare = re.compile(r'`(' + '|'.join(re.escape(b) for b in bare) + r')`') if bare else None
    rewritten = []
    for path in git('ls-files').splitlines():
        full = os.path.join(ROOT, path)
        if path.startswith('tests/corpus/third_party/') or path in ('scripts/layout_tests.py', 'scripts/mark_internal.py', 'scripts/rename_namespaces.py') or not os.path.isfile(full):
            continue  # the layout tools name the old paths on purpose
        try:
            with open(full, encoding='utf-8') as f:
                text = f.read()
        except UnicodeDecodeError:
            continue
        new = by_path.sub(lambda m: renames[m.group(1)], text)
        new = by_guard.sub(lambda m: guards[m.group(1)], new)
        if by_bare and path.endswith('.md'):
            new = by_bare.sub(lambda m: f'`{bare[m.group(1)]}`', new)
        if new != text:
            with open(full, 'w', encoding='utf-8') as f:
                f.write(new)
            if path.endswith(('.cc', '.h')):
                rewritten.append(full)
    if rewritten:  # a renamed include may sort elsewhere in its block
        subprocess.run(['clang-format', '-i', *rewritten], check=True)
    print(f'mark_internal: {len(to_move)} files renamed, references rewritten in {len(rewritten)} C++ files')


if __name__ == '__main__':
    main()
