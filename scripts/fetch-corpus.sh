#!/usr/bin/env bash
# Places the corpus of real public inputs (launch scripts, framework configs, nccl-tests logs, Chakra
# traces) in shared/, beside the checkout, where the tests read them (HETSIM_SHARED_DIR). The inputs are
# other projects' files and are not committed here: tests/corpus/sources.txt lists each one by
# repository, pinned commit, path (and archive member) and SHA-256, and this script copies them byte
# for byte, checking every hash. docs/corpus.md says what the corpus is for.
#
# Usage: scripts/fetch-corpus.sh [--mirrors DIR] [--dest DIR]
#   --mirrors DIR  read from bare git clones DIR/<owner>+<name>/repo (no network); default: download
#                  https://raw.githubusercontent.com/<owner>/<name>/<commit>/<path> with curl
#   --dest DIR     default: ../shared beside the checkout (the tests' HETSIM_SHARED_DIR)
# Exit 0 when every file is in place with its hash; 1 when one could not be fetched or differs.
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
manifest="$here/tests/corpus/sources.txt"
dest="$(cd "$here/.." && pwd)/shared"
mirrors=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --mirrors) mirrors="$2"; shift 2 ;;
    --dest) dest="$2"; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "fetch-corpus.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

# The bytes of <repo> at <commit>:<path>, on stdout.
blob() {
  local repo="$1" commit="$2" path="$3"
  if [[ -n "$mirrors" ]]; then
    git --git-dir="$mirrors/${repo/\//+}/repo" show "$commit:$path"
  else
    curl -fsSL --retry 3 "https://raw.githubusercontent.com/$repo/$commit/$path"
  fi
}

failed=0 placed=0
tmp="$(mktemp)"
trap 'rm -f "$tmp"' EXIT
while read -r dir name repo commit where sha; do
  [[ -z "${dir:-}" || "$dir" == \#* ]] && continue
  path="${where%%!*}"
  member=""
  [[ "$where" == *'!'* ]] && member="${where#*!}"
  target="$dest/$dir/$name"
  if [[ -f "$target" ]] && echo "$sha  $target" | sha256sum --check --status; then
    placed=$((placed + 1))
    continue
  fi
  if [[ -n "$member" ]]; then
    blob "$repo" "$commit" "$path" | tar -xzO "$member" >"$tmp" 2>/dev/null || true
  else
    blob "$repo" "$commit" "$path" >"$tmp" 2>/dev/null || true
  fi
  got="$(sha256sum "$tmp" | cut -d' ' -f1)"
  if [[ ! -s "$tmp" ]]; then
    echo "fetch-corpus.sh: $dir/$name: $repo@$commit:$where could not be read (not placed)" >&2
    failed=$((failed + 1))
    continue
  fi
  if [[ "$got" != "$sha" ]]; then
    echo "fetch-corpus.sh: $dir/$name: $repo@$commit:$where has SHA-256 $got, expected $sha (not placed)" >&2
    failed=$((failed + 1))
    continue
  fi
  mkdir -p "$dest/$dir"
  cp "$tmp" "$target.partial" && mv "$target.partial" "$target"
  placed=$((placed + 1))
done <"$manifest"
echo "fetch-corpus.sh: $placed files in $dest, $failed failed"
[[ $failed -eq 0 ]]
