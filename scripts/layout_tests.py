#!/usr/bin/env python3
"""Moves the C++ test sources of tests/ into the folders that mirror the modules they test.

A test source (tests/**/*.cc or *.h) lives in tests/<module dir>/, the directory of the module it
tests as cmake/module_deps.cmake names it (tests/sim/collectives/, tests/service/calibrate/,
tests/app/cli/, ...); a helper lives beside the tests of the module whose things it builds. Only
tests/main_test.cc (Catch2's runner) and tests/fuzz/ (the fuzz targets, a build of their own) sit
elsewhere. The ctest test "test_layout" (scripts/check_test_layout.py) fails on any other place.

This script is re-runnable: it moves every *.cc / *.h left directly in tests/ to the folder its name
says (the RULES below: an exact name first, then the longest prefix), keeps its file name, and
rewrites every reference to the old path in the tracked files (docs, comments, CMake, scripts) and
the tests' includes of a helper by bare name. A name no rule maps stops the script: add a rule.

  scripts/layout_tests.py          # move and rewrite (git mv; commit the result)
  scripts/layout_tests.py --dry    # print the moves only
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Exact file names whose prefix does not name the module they test.
EXACT = {
    'main_test.cc': None,  # Catch2's runner stays at tests/main_test.cc
    'app_fidelity_test.cc': 'service/fidelity',  # service/fidelity/ on a hand-made set
    'approximation_bounds_test.cc': 'service/driver',  # service/driver/fidelity_bounds.cc
    'build_topology.h': 'service/driver',  # driver::BuildTopology for hand-built messages
    'cli_test.cc': 'app/cli',
    'cli_util.h': 'app/cli',
    'collectives_command_test.cc': 'app/cli',  # `hetsim islands` / `hetsim collective` end to end
    'framework_profile_test.cc': 'proto',  # proto/framework_profile.h
    'limits_test.cc': 'sim/executor',  # sim/executor/run_limit.h, then the commands that report it
    'model_shapes.h': 'proto',  # published model shapes as messages
    'planner_replan_test.cc': 'service/driver',  # service/driver/replan.h, surviving_cluster.h
    'proto_stage_rules_test.cc': 'base/spec',  # base/spec/stage_rules.h
    'run_cli_test.cc': 'app/cli',
    'time_io.h': 'base',  # prints base/time.h's Time in test messages
    'wall_limit_test.cc': 'base',  # base/wall_limit.h
    'zero3_prefetch_test.cc': 'sim/executor',
}

# File-name prefixes and the module directory they mirror (longest prefix wins).
PREFIXES = {
    'app_': 'app/cli',
    'base_': 'base',
    'calibrate_': 'service/calibrate',
    'chakra_': 'service/chakra',
    'collectives_': 'sim/collectives',
    'context_parallel_': 'sim/executor',
    'driver_': 'service/driver',
    'engine_': 'sim/engine',
    'evaluation_': 'service/evaluation',
    'executor_': 'sim/executor',
    'faults_': 'sim/faults',
    'fidelity_': 'service/fidelity',
    'gpu_presets_': 'proto',
    'html_': 'traces/html',
    'interop_': 'service/interop',
    'io_': 'proto',
    'network_': 'sim/network',
    'pipeline_': 'sim/pipeline',
    'planner_': 'planner',
    'planning_': 'service/planning',
    'proto_': 'proto',
    'report_html_': 'traces/html',
    'spec_': 'base/spec',
    'sweep_': 'service/sweep',
    'topology_': 'topology',
    'traces_': 'traces',
    'validate_': 'proto',  # input checks: proto/validate_*
    'workload_': 'sim/workload',
}


def destination(name):
    if name in EXACT:
        return EXACT[name]
    best = ''
    for prefix in PREFIXES:
        if name.startswith(prefix) and len(prefix) > len(best):
            best = prefix
    if not best:
        return ''
    return PREFIXES[best]


def git(*args):
    return subprocess.run(['git', '-C', ROOT, *args], check=True, capture_output=True, text=True).stdout


def tracked_text_files():
    for path in git('ls-files').splitlines():
        if path.startswith('tests/corpus/third_party/') or not os.path.isfile(os.path.join(ROOT, path)):
            continue
        if path in ('scripts/layout_tests.py', 'scripts/mark_internal.py', 'scripts/rename_namespaces.py'):
            continue  # the layout tools name the old paths on purpose
        yield path


def main():
    dry = '--dry' in sys.argv[1:]
    tests = os.path.join(ROOT, 'tests')
    moves = {}
    unknown = []
    for name in sorted(os.listdir(tests)):
        if not (name.endswith('.cc') or name.endswith('.h')) or not os.path.isfile(os.path.join(tests, name)):
            continue
        dest = destination(name)
        if dest is None:
            continue
        if not dest:
            unknown.append(name)
            continue
        if not os.path.isdir(os.path.join(ROOT, dest)):
            sys.exit(f'layout_tests: rule for {name} names {dest}/, which is not a module directory')
        moves[name] = dest
    if unknown:
        sys.exit('layout_tests: no rule says which module these test: ' + ', '.join(unknown) +
                 ' (add it to EXACT or PREFIXES in scripts/layout_tests.py)')
    for name, dest in moves.items():
        print(f'tests/{name} -> tests/{dest}/{name}')
    if dry:
        return
    for name, dest in moves.items():
        os.makedirs(os.path.join(tests, dest), exist_ok=True)
        git('mv', f'tests/{name}', f'tests/{dest}/{name}')
    # Every test source already in its folder too: code merged after an earlier run still names the
    # old flat paths (`#include "tests/executor_test_util.h"`).
    for dirpath, _, filenames in os.walk(tests):
        dest = os.path.relpath(dirpath, tests).replace(os.sep, '/')
        if dest == '.' or not os.path.isdir(os.path.join(ROOT, dest)):
            continue
        for name in filenames:
            if name.endswith(('.cc', '.h')) and destination(name) is not None:
                moves.setdefault(name, dest)
    if not moves:
        return
    # References by path anywhere in the tree, and a helper included by its bare name from a test.
    by_path = re.compile(r'(?<![\w/.-])tests/(' + '|'.join(re.escape(n) for n in moves) + r')\b')
    helpers = [n for n in moves if n.endswith('.h')]
    by_name = re.compile(r'#include "(' + '|'.join(re.escape(n) for n in helpers) + r')"') if helpers else None
    rewritten = []
    for path in tracked_text_files():
        full = os.path.join(ROOT, path)
        try:
            with open(full, encoding='utf-8') as f:
                text = f.read()
        except UnicodeDecodeError:
            continue
        new = by_path.sub(lambda m: f'tests/{moves[m.group(1)]}/{m.group(1)}', text)
        if by_name and path.startswith('tests/'):
            new = by_name.sub(lambda m: f'#include "tests/{moves[m.group(1)]}/{m.group(1)}"', new)
        if new != text:
            with open(full, 'w', encoding='utf-8') as f:
                f.write(new)
            print(f'rewrote references in {path}')
            if path.endswith(('.cc', '.h')):
                rewritten.append(full)
    # An include whose path changed may now sort elsewhere in its block: .clang-format orders them.
    if rewritten:
        subprocess.run(['clang-format', '-i', *rewritten], check=True)


if __name__ == '__main__':
    main()
