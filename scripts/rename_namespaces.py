#!/usr/bin/env python3
"""Renames the namespaces that do not follow their folders (docs/architecture.md, "Namespaces").

The rule: a module's namespace is `hetsim::` and its directory with the grouping folders (`sim/`,
`service/`, `app/`) left out, nested as the modules nest: `sim/engine/` is `hetsim::engine`,
`service/driver/` is `hetsim::driver`, `traces/html/` is `hetsim::traces::html`, and `base/` is
`hetsim` itself, so `base/spec/` is `hetsim::spec`. A test is in the namespace of the folder it
mirrors. The ctest test "namespaces" (scripts/check_namespaces.py) checks every module header.

RENAMES below are the folders that did not follow it. For each, this script
  - rewrites the namespace a file of the folder (or of tests/<folder>/, or bench/<module>_*.cc) opens
    and closes;
  - rewrites qualified names everywhere (C++, docs): `sim::executor::X` -> `executor::X`,
    `sim::Network` -> `network::Network` (the owner of each name of the old shared namespace
    `hetsim::sim` is read from the headers with ctags), `app::X` -> `cli::X`;
  - qualifies the names that code inside the old `hetsim::sim` found by the enclosing namespace and
    that now live in a sibling: `Simulator` in sim/network/ becomes `engine::Simulator`.
It is re-runnable: a tree that already follows the rule is left as it is, so after merging a branch
that adds code in an old namespace, run it again, build, and run the suite.

  scripts/rename_namespaces.py          # rewrite the tree
  scripts/rename_namespaces.py --dry    # list the files it would change
"""
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# folder -> (old namespace, new namespace)
RENAMES = {
    'sim/engine': ('hetsim::sim', 'hetsim::engine'),
    'sim/network': ('hetsim::sim', 'hetsim::network'),
    'sim/collectives': ('hetsim::sim', 'hetsim::collectives'),
    'sim/workload': ('hetsim::sim::workload', 'hetsim::workload'),
    'sim/pipeline': ('hetsim::sim::pipeline', 'hetsim::pipeline'),
    'sim/faults': ('hetsim::sim::faults', 'hetsim::faults'),
    'sim/executor': ('hetsim::sim::executor', 'hetsim::executor'),
    'app/cli': ('hetsim::app', 'hetsim::cli'),
}
# The folders that shared `hetsim::sim`, and the short name of each one's new namespace.
SPLIT = {'sim/engine': 'engine', 'sim/network': 'network', 'sim/collectives': 'collectives'}
NESTED = ['workload', 'pipeline', 'faults', 'executor']  # hetsim::sim::X -> hetsim::X
# Benchmarks are in the namespace of the module their file name starts with.
BENCH_PREFIX = {'engine_': 'sim/engine', 'network_': 'sim/network', 'collectives_': 'sim/collectives'}


def git(*args):
    return subprocess.run(['git', '-C', ROOT, *args], check=True, capture_output=True, text=True).stdout


def tags(paths, scope_prefix=None):
    if not paths:
        return []
    out = subprocess.run(['ctags', '--output-format=json', '--fields=+sKZ', '--kinds-C++=+plz', '--language-force=C++',
                          '-f', '-', *paths], check=True, capture_output=True, text=True, cwd=ROOT).stdout
    return [json.loads(line) for line in out.splitlines() if line.startswith('{')]


def split_symbols(files):
    """Names declared directly in hetsim::sim by each split folder's headers: name -> short namespace."""
    owner = {}
    for folder, short in SPLIT.items():
        headers = [f for f in files if os.path.dirname(f) == folder and f.endswith('.h')]
        for t in tags(headers):
            if t.get('scope') == 'hetsim::sim' and t.get('scopeKind') == 'namespace':
                name = t['name']
                if not re.fullmatch(r'[A-Za-z_]\w*', name):
                    continue  # operators
                if owner.get(name, short) != short:
                    sys.exit(f'rename_namespaces: {name} is declared in two of {list(SPLIT)}')
                owner[name] = short
        # ctags leaves out some `inline constexpr` constants: a namespace-scope declaration starts at
        # column 0 in this tree's style, so read those lines too.
        for header in headers:
            with open(os.path.join(ROOT, header), encoding='utf-8') as f:
                for line in f:
                    m = (re.match(r'(?:inline )?constexpr [^=;(]*?\b([A-Za-z_]\w*) =', line) or
                         re.match(r'(?:struct|class|enum class|enum) ([A-Za-z_]\w*)\b', line) or
                         re.match(r'using ([A-Za-z_]\w*) =', line) or
                         re.match(r'(?!return\b)[A-Za-z_][\w:<>,* &]* \**&?([A-Z]\w*)\(', line))
                    if m and not line.startswith(('namespace', 'using namespace')):
                        name = m.group(1)
                        if owner.get(name, short) != short:
                            sys.exit(f'rename_namespaces: {name} is declared in two of {list(SPLIT)}')
                        owner[name] = short
    return owner


def folder_of(path):
    """The renamed folder a file belongs to (its module directory, the tests mirroring it, a benchmark)."""
    d = os.path.dirname(path)
    if d.startswith('tests/'):
        d = d[len('tests/'):]
    if d in RENAMES:
        return d
    if path.startswith('bench/'):
        for prefix, folder in BENCH_PREFIX.items():
            if os.path.basename(path).startswith(prefix):
                return folder
    return None


# Code tokens: comments and string literals are skipped (raw strings too), identifiers are seen with
# what precedes them.
TOKEN = re.compile(r'''//[^\n]*|/\*.*?\*/|R"(?P<d>[^(\s]*)\(.*?\)(?P=d)"|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|'''
                   r'''(?P<id>[A-Za-z_]\w*)''', re.S)


def qualify_unqualified(text, owner, own_short, declared):
    """Prefixes `ns::` to each code identifier owned by a sibling split namespace and written bare."""
    out = []
    last = 0
    for m in TOKEN.finditer(text):
        name = m.group('id')
        if not name or name not in owner or owner[name] == own_short or name in declared:
            continue
        before = text[max(0, m.start() - 2):m.start()]
        if before.endswith('::') or before.endswith('.') or before.endswith('->') or before.endswith('~'):
            continue
        if re.search(r'#\s*include[^\n]*$', text[max(0, m.start() - 200):m.start()]):
            continue
        out.append(text[last:m.start()])
        out.append(f'{owner[name]}::{name}')
        last = m.end()
    out.append(text[last:])
    return ''.join(out)


def rewrite_qualified(text, owner):
    # `using namespace hetsim::sim;` brought the three split namespaces in at once
    text = re.sub(r'^( *)using namespace (?:hetsim::)?sim;$',
                  lambda m: '\n'.join(f'{m.group(1)}using namespace hetsim::{short};' for short in SPLIT.values()), text,
                  flags=re.M)
    # sim::executor::X -> executor::X (and hetsim::sim::executor -> hetsim::executor)
    text = re.sub(r'\b((?:hetsim::)?)sim::(' + '|'.join(NESTED) + r')\b', r'\1\2', text)
    # sim::Network -> network::Network
    if owner:
        names = '|'.join(sorted(owner, key=len, reverse=True))
        text = re.sub(r'\b((?:hetsim::)?)sim::(' + names + r')\b', lambda m: f'{m.group(1)}{owner[m.group(2)]}::{m.group(2)}',
                      text)
    text = re.sub(r'(?<![\w:])((?:hetsim::)?)app::', r'\1cli::', text)
    return text


def main():
    dry = '--dry' in sys.argv[1:]
    files = [f for f in git('ls-files').splitlines()
             if not f.startswith('tests/corpus/third_party/') and os.path.isfile(os.path.join(ROOT, f))]
    owner = split_symbols(files)
    changed = []
    for path in files:
        is_cpp = path.endswith(('.cc', '.h'))
        if not (is_cpp or path.endswith('.md')):
            continue
        full = os.path.join(ROOT, path)
        with open(full, encoding='utf-8') as f:
            text = f.read()
        new = text
        folder = folder_of(path) if is_cpp else None
        old_ns = None
        if is_cpp:
            opened = re.findall(r'^namespace (hetsim(?:::\w+)*) \{', text, re.M)
            old_ns = next((n for n in opened if n == 'hetsim::sim' or n.startswith('hetsim::sim::') or n == 'hetsim::app'),
                          None)
            if old_ns and not folder:
                sys.exit(f'rename_namespaces: {path} opens {old_ns} but is in no renamed folder: add a rule')
        if folder:
            target = RENAMES[folder][1]
            # `namespace executor = sim::executor;` (an alias the new name makes redundant)
            new = re.sub(r'^namespace (\w+) = (?:hetsim::)?sim::\1;\n', '', new, flags=re.M)
        new = rewrite_qualified(new, owner)
        if folder and old_ns:
            new = re.sub(r'^namespace ' + re.escape(old_ns) + r' \{', f'namespace {target} {{', new, flags=re.M)
            new = re.sub(r'^\}  // namespace ' + re.escape(old_ns) + r'$', f'}}  // namespace {target}', new, flags=re.M)
        if folder and (old_ns == 'hetsim::sim' or (old_ns or '').startswith('hetsim::sim::')):
            own_short = SPLIT.get(folder)
            declared = {t['name'] for t in tags([path]) if t.get('kind') != 'namespace'} - set()
            # a name the file declares itself (a local, a member, a parameter) is its own
            declared -= {n for n in declared if owner.get(n) == own_short}
            new = qualify_unqualified(new, owner, own_short, declared)
        if new != text:
            changed.append(path)
            if not dry:
                with open(full, 'w', encoding='utf-8') as f:
                    f.write(new)
    for path in changed:
        print(path)
    # The check no longer waits for these folders.
    checker = os.path.join(ROOT, 'scripts', 'check_namespaces.py')
    with open(checker, encoding='utf-8') as f:
        text = f.read()
    cleared = re.sub(r'^PENDING = \{.*?^\}\n', 'PENDING = {}\n', text, flags=re.M | re.S)
    if cleared != text and not dry:
        with open(checker, 'w', encoding='utf-8') as f:
            f.write(cleared)
    cpp = [os.path.join(ROOT, p) for p in changed if p.endswith(('.cc', '.h'))]
    if cpp and not dry:
        subprocess.run(['clang-format', '-i', *cpp], check=True)
    print(f'rename_namespaces: {len(changed)} files {"to change" if dry else "changed"}', file=sys.stderr)


if __name__ == '__main__':
    main()
