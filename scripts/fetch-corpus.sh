#!/usr/bin/env bash
# The corpus of real public inputs (launch scripts, framework configs, nccl-tests logs, Chakra traces)
# is committed in tests/corpus/third_party/<dir>/<name>; tests/corpus/sources.txt lists each file by repository,
# pinned commit, path (and archive member), SHA-256 and licence. This script checks that every listed
# file is there with its hash and that no unlisted file is (--check, ctest `corpus.manifest`), or
# (re)places them byte for byte from their pinned commits, checking every hash. docs/corpus.md says
# what the corpus is for.
#
# A path written converted:PATH names the published files a listed file was converted from (it is re-made, not
# fetched: docs/chakra.md).
# Usage: scripts/fetch-corpus.sh [--check] [--mirrors DIR] [--dest DIR]
#   --check        fetch nothing: exit 1 when a listed file is missing or differs, or a file is unlisted
#   --mirrors DIR  read from bare git clones DIR/<owner>+<name>/repo (no network); default: download
#                  https://raw.githubusercontent.com/<owner>/<name>/<commit>/<path> with curl
#   --dest DIR     default: tests/corpus/third_party in this checkout
# Exit 0 when every file is in place with its hash; 1 when one could not be fetched or differs.
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
manifest="$here/tests/corpus/sources.txt"
dest="$here/tests/corpus/third_party"
mirrors=""
check=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --mirrors) mirrors="$2"; shift 2 ;;
    --dest) dest="$2"; shift 2 ;;
    --check) check=1; shift ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
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
listed="$(mktemp)"
trap 'rm -f "$tmp" "$listed"' EXIT
while read -r dir name repo commit where sha licence; do
  [[ -z "${dir:-}" || "$dir" == \#* ]] && continue
  path="${where%%!*}"
  member=""
  [[ "$where" == *'!'* ]] && member="${where#*!}"
  target="$dest/$dir/$name"
  echo "$dir/$name" >>"$listed"
  if [[ -z "${licence:-}" ]]; then
    echo "fetch-corpus.sh: $dir/$name: no licence in tests/corpus/sources.txt" >&2
    failed=$((failed + 1))
    continue
  fi
  if [[ -f "$target" ]] && echo "$sha  $target" | sha256sum --check --status; then
    placed=$((placed + 1))
    continue
  fi
  if [[ $check -eq 1 ]]; then
    echo "fetch-corpus.sh: $dir/$name: missing, or not the file of $repo@$commit:$where (SHA-256 $sha)" >&2
    failed=$((failed + 1))
    continue
  fi
  # A file converted from published ones by the tools of their field (`converted:` before the sources' path:
  # Chakra's converter run on a repository's linked PyTorch traces) cannot be fetched; docs/chakra.md says how
  # it was made.
  if [[ "$where" == converted:* ]]; then
    echo "fetch-corpus.sh: $dir/$name: converted from $repo@$commit:${where#converted:}, not fetched: make it as docs/chakra.md says" >&2
    failed=$((failed + 1))
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
# A file in a corpus folder that the manifest does not list has no source, commit or licence on record.
while IFS= read -r extra; do
  echo "fetch-corpus.sh: $extra: in $dest but not listed in tests/corpus/sources.txt" >&2
  failed=$((failed + 1))
done < <(comm -13 <(sort "$listed") <(cd "$dest" && find . -mindepth 2 -type f | sed 's|^\./||' | sort))
echo "fetch-corpus.sh: $placed files in $dest, $failed failed"
[[ $failed -eq 0 ]]
