#!/bin/sh
# Regenerates tests/golden/examples.sha256 from the current build (build/hetsim, or $HETSIM).
# Only when the cost model changed ON PURPOSE: a refactor must leave the digests as they are. Commit
# the new file with a message that says what changed in the model and why the outputs moved.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
hetsim=${HETSIM:-$root/build/hetsim}
[ -x "$hetsim" ] || { echo "update-goldens: $hetsim is not built (scripts/build.sh)" >&2; exit 2; }
cmake -DHETSIM="$hetsim" -DSOURCE_DIR="$root" -DOUT_DIR="${TMPDIR:-/tmp}/hetsim-goldens" -DUPDATE=ON \
  -P "$root/tests/golden/run_examples.cmake"
git -C "$root" diff --stat -- tests/golden/examples.sha256
