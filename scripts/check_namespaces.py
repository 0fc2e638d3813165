#!/usr/bin/env python3
"""Fails when a module header's namespace does not follow its folder (docs/architecture.md, "Namespaces").

The rule: `hetsim::` and the module's directory with the grouping folders (top-level folders that are
no module: sim/, service/, app/) left out, nested as the modules nest; base/ is `hetsim` itself. So
sim/engine/ is hetsim::engine, service/driver/ hetsim::driver, traces/html/ hetsim::traces::html,
base/spec/ hetsim::spec. A header may open namespaces nested in its own (hetsim::proto::limits);
base/'s may open `hetsim::<x>` for an x that is no module's (hetsim::internal, hetsim::time_literals).
Only namespaces opened at file scope (`namespace a::b {` at column 0) are read.
scripts/rename_namespaces.py rewrites folders that do not follow it. Usage: check_namespaces.py [SOURCE_DIR]
"""
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
with open(os.path.join(root, 'cmake', 'module_deps.cmake'), encoding='utf-8') as f:
    module_dirs = set(re.findall(r'^set\(HETSIM_MODULE_DIR_\w+ (\S+)\)', f.read(), re.M))

# Folders not yet renamed, with the namespace they still use (empty once scripts/rename_namespaces.py ran).
PENDING = {}


def expected(module_dir):
    parts = ['hetsim']
    comps = module_dir.split('/')
    for i, c in enumerate(comps):
        prefix = '/'.join(comps[:i + 1])
        if prefix == 'base':
            continue  # the vocabulary is hetsim itself
        if prefix in module_dirs or i == len(comps) - 1:
            parts.append(c)
    return '::'.join(parts)


module_namespaces = {expected(d) for d in module_dirs}
errors = []
count = 0
for d in sorted(module_dirs):
    want = PENDING.get(d, expected(d))
    for name in sorted(os.listdir(os.path.join(root, d))):
        if not name.endswith('.h'):
            continue
        path = f'{d}/{name}'
        with open(os.path.join(root, path), encoding='utf-8') as f:
            opened = re.findall(r'^namespace ([\w:]+) \{', f.read(), re.M)
        count += 1
        if not opened:
            errors.append(f'{path}: opens no namespace; its module\'s is {want}')
        for ns in opened:
            if ns == want:
                continue
            if want == 'hetsim' and ns.startswith('hetsim::') and ns not in module_namespaces and \
                    not any(ns.startswith(m + '::') for m in module_namespaces if m != 'hetsim'):
                continue
            if want != 'hetsim' and ns.startswith(want + '::'):
                continue
            errors.append(f'{path}: namespace {ns}; the folder {d}/ says {want}')
for d, ns in PENDING.items():
    if d not in module_dirs:
        errors.append(f'PENDING names {d}/, which is no module directory')
        continue
    headers = [n for n in os.listdir(os.path.join(root, d)) if n.endswith('.h')]
    if not any(re.search(r'^namespace ' + re.escape(ns) + r' \{', open(os.path.join(root, d, n), encoding='utf-8').read(), re.M)
               for n in headers):
        errors.append(f'{d}/ follows the rule now: take it out of PENDING (scripts/check_namespaces.py)')
if errors:
    print('\n'.join(errors), file=sys.stderr)
    print('(docs/architecture.md, "Namespaces"; scripts/rename_namespaces.py renames a folder)', file=sys.stderr)
    sys.exit(1)
print(f'namespaces: {count} module headers, each in the namespace of its folder'
      + (f' ({len(PENDING)} folders pending)' if PENDING else ''))
