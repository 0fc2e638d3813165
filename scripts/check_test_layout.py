#!/usr/bin/env python3
"""Fails when a C++ test source sits in a folder of tests/ that does not mirror a module.

A test source (*.cc, *.h) under tests/ lives in tests/<dir>/ where <dir> is a module directory of
cmake/module_deps.cmake (tests/sim/collectives/ for sim/collectives/, ...). The exceptions are
tests/main_test.cc (Catch2's runner) and tests/fuzz/ (the fuzz targets, built apart); data folders
(tests/*_data/, tests/corpus/, tests/golden/, ...) hold no C++. scripts/layout_tests.py moves a file
left in tests/ to the folder its name says. Usage: check_test_layout.py [SOURCE_DIR]
"""
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
with open(os.path.join(root, 'cmake', 'module_deps.cmake'), encoding='utf-8') as f:
    module_dirs = set(re.findall(r'^set\(HETSIM_MODULE_DIR_\w+ (\S+)\)', f.read(), re.M))

SKIP = {'tests/fuzz', 'tests/corpus/third_party', 'tests/viewers/node_modules'}
errors = []
count = 0
tests = os.path.join(root, 'tests')
for dirpath, dirnames, filenames in os.walk(tests):
    rel_dir = os.path.relpath(dirpath, root).replace(os.sep, '/')
    dirnames[:] = sorted(d for d in dirnames if f'{rel_dir}/{d}' not in SKIP)
    for name in sorted(filenames):
        if not name.endswith(('.cc', '.h')):
            continue
        rel = f'{rel_dir}/{name}'
        count += 1
        if rel == 'tests/main_test.cc':
            continue
        mirrored = rel_dir[len('tests/'):] if rel_dir.startswith('tests/') else ''
        if mirrored not in module_dirs:
            where = 'directly in tests/' if rel_dir == 'tests' else f'in {rel_dir}/, which mirrors no module'
            errors.append(f'{rel}: a test source {where}; it belongs in tests/<module dir>/ '
                          f'(scripts/layout_tests.py moves it by its name)')
if errors:
    print('\n'.join(errors), file=sys.stderr)
    sys.exit(1)
print(f'test_layout: {count} test sources, each in the folder of the module it tests')
