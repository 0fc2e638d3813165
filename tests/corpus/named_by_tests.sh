#!/usr/bin/env bash
# Every file of the committed corpus (tests/corpus/sources.txt) is named by a test that asserts what
# hetsim reads from it or why it refuses it: a file no test names checks nothing (ctest corpus.named).
set -euo pipefail
tests="$(cd "$(dirname "$0")/.." && pwd)"
missing=0
while read -r dir name _; do
  [[ -z "${dir:-}" || "$dir" == \#* ]] && continue
  sub="${dir#*/}"
  [[ "$sub" == "$dir" ]] && sub="" || sub="$sub/"
  if ! grep -rqF --include='*.cc' --include='*.py' "\"$sub$name\"" "$tests"; then
    echo "corpus: $dir/$name is listed in tests/corpus/sources.txt but no test names it" >&2
    missing=$((missing + 1))
  fi
done <"$tests/corpus/sources.txt"
[[ $missing -eq 0 ]]
