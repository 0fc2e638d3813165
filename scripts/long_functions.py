#!/usr/bin/env python3
"""Lists C++ function bodies longer than a limit (default 100 lines), outside tests/.

Usage: scripts/long_functions.py [--max N] [--fail] [PATH...]   (default paths: the repository's
modules). A body is counted from the line of its opening brace to the line of its closing brace.
A brace block opens a function when the text before it ends with ')' (plus qualifiers such as const,
override, noexcept or a trailing return type) and is not a control statement or a lambda inside
another function. Good enough for this tree's formatting; --fail exits 1 when any is found (for CI).
"""
import argparse
import os
import re
import sys

SKIP_DIRS = {'tests', 'build', '.git', 'fuzz'}
CONTROL = re.compile(r'\b(if|for|while|switch|catch)\s*\(.*\)\s*$')
SIGNATURE = re.compile(r'\)\s*(const|override|final|noexcept|mutable|\s|->\s*[\w:<>,\s*&]+)*$')


def strip(text):
    """Removes comments, string and character literals (keeps newlines)."""
    out = re.sub(r'//[^\n]*', '', text)
    out = re.sub(r'/\*.*?\*/', lambda m: '\n' * m.group(0).count('\n'), out, flags=re.S)
    out = re.sub(r'R"(\w*)\((.*?)\)\1"', lambda m: '""' + '\n' * m.group(0).count('\n'), out, flags=re.S)
    out = re.sub(r'"(\\.|[^"\\\n])*"', '""', out)
    out = re.sub(r"'(\\.|[^'\\\n])'", "''", out)
    return out


def functions(path):
    text = strip(open(path, encoding='utf-8', errors='replace').read())
    stack = []  # (is_function, start_line, name)
    line = 1
    last = 0
    for i, ch in enumerate(text):
        if ch == '\n':
            line += 1
        elif ch == '{':
            before = text[last:i].rstrip()
            head = before.split(';')[-1].split('}')[-1].strip()
            inside_function = any(f for f, _, _ in stack)
            is_fn = (not inside_function and SIGNATURE.search(head) is not None and not CONTROL.search(head)
                     and not head.endswith(']'))
            name = ''
            if is_fn:
                m = re.search(r'([\w:~]+(?:operator\S*)?)\s*\([^()]*(?:\([^()]*\)[^()]*)*\)[^()]*$', head, re.S)
                name = m.group(1) if m else head[-40:]
            stack.append((is_fn, line, name))
            last = i + 1
        elif ch == '}':
            if stack:
                is_fn, start, name = stack.pop()
                if is_fn:
                    yield name, start, line
            last = i + 1
        elif ch == ';':
            last = i + 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--max', type=int, default=100)
    ap.add_argument('--fail', action='store_true')
    ap.add_argument('paths', nargs='*')
    args = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    paths = args.paths or [root]
    found = []
    for top in paths:
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith('build'))
            for f in sorted(filenames):
                if f.endswith(('.cc', '.h')):
                    p = os.path.join(dirpath, f)
                    for name, start, end in functions(p):
                        n = end - start + 1
                        if n > args.max:
                            found.append((n, os.path.relpath(p, root), start, name))
    for n, p, start, name in sorted(found, reverse=True):
        print(f'{n:5d}  {p}:{start}  {name}')
    print(f'{len(found)} functions over {args.max} lines')
    return 1 if args.fail and found else 0


if __name__ == '__main__':
    sys.exit(main())
