#!/usr/bin/env bash
# Runs the Slurm job array of docs/sweeps.md on a real single-node Slurm, started here and stopped at
# the end: munged, slurmctld and slurmd on localhost, every file (keys, sockets, state, logs) in a
# temporary folder, nothing in /etc touched. Debian's slurm-wlm and munge (scripts/setup.sh).
#
#   scripts/slurm_sweep_test.sh BUILD/hetsim
#
# 1. The documented array script, taken from docs/sweeps.md as it is, runs a bundled sweep
#    (examples/sweep-bandwidth.pbtxt) as 4 array tasks; `hetsim sweep-merge` joins the shards and the
#    result must equal, byte for byte, the sweep run on this machine in one go.
# 2. The same script on a finer grid of the same sweep (bandwidth step FINE_STEP, 0.002 by default,
#    instead of 1: 10,503 points, seconds per task, so that a task can be caught mid-way): task 1 is cancelled (scancel)
#    once it has written some rows, the others finish; task 1 alone is submitted again (SHARDS=4,
#    --resume in the script): the merged file must equal the one-machine file (no row lost, none
#    twice; sweep-merge also checks both).
# Exit 0 pass, 1 fail, 77 skipped (ctest SKIP_RETURN_CODE) when Slurm is not installed or cannot start.
set -euo pipefail
hetsim=$(realpath "$1")
repo=$(cd "$(dirname "$0")/.." && pwd)
skip() { echo "slurm_sweep_test: SKIPPED: $*" >&2; exit 77; }
for c in munged slurmctld slurmd sinfo sbatch squeue scontrol scancel; do
  command -v "$c" >/dev/null || skip "$c not found (scripts/setup.sh installs slurm-wlm and munge)"
done
[ "$(id -u)" = 0 ] || skip "needs root to run slurmd (it starts jobs as their user)"

work=$(mktemp -d /tmp/hetsim-slurm.XXXXXX)
chmod 700 "$work"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  if [ "${KEEP_SLURM_WORK:-0}" = 1 ]; then echo "slurm_sweep_test: kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT

# munge: its own key and socket.
mkdir -p "$work/munge"
dd if=/dev/urandom of="$work/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$work/munge/munge.key"
munged --foreground --force --key-file="$work/munge/munge.key" --socket="$work/munge/munge.sock" \
  --pid-file="$work/munge/munged.pid" --log-file="$work/munge/munged.log" --seed-file="$work/munge/munge.seed" \
  2>>"$work/munge/stderr" &
pids+=($!)
for _ in $(seq 50); do [ -S "$work/munge/munge.sock" ] && break; sleep 0.1; done
[ -S "$work/munge/munge.sock" ] || skip "munged did not start: $(cat "$work/munge/munged.log" "$work/munge/stderr" 2>/dev/null | tail -3)"

# Two free TCP ports for slurmctld and slurmd.
read -r ctld_port slurmd_port < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
host=$(hostname -s)
cpus=$(nproc)
mkdir -p "$work/state" "$work/spool" "$work/run"
cat >"$work/slurm.conf" <<CONF
ClusterName=hetsimtest
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$work/munge/munge.sock
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/run/slurmctld.pid
SlurmdPidFile=$work/run/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=600
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$work/slurm.conf
slurmctld -D -i -f "$SLURM_CONF" >"$work/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" -N "$host" >"$work/slurmd.out" 2>&1 &
pids+=($!)
up=0
for _ in $(seq 100); do
  if sinfo -h -o '%T' 2>/dev/null | grep -Eq '^(idle|mixed|allocated)'; then up=1; break; fi
  sleep 0.2
done
[ "$up" = 1 ] || skip "Slurm did not start: $(tail -3 "$work/slurmctld.log" "$work/slurmd.log" "$work/slurmctld.out" "$work/slurmd.out" 2>/dev/null)"
echo "slurm_sweep_test: slurmctld and slurmd up on $host ($cpus CPUs)" >&2

# The array script exactly as docs/sweeps.md shows it, with the bundled sweep in place of add-h100.
awk '/^### Slurm job array/{f=1} f&&/^```bash/{g=1;next} g&&/^```/{exit} g' "$repo/docs/sweeps.md" \
  | sed 's#sweeps/add-h100.pbtxt#sweeps/bandwidth.pbtxt#' >"$work/array.sh"
grep -q 'hetsim sweep sweeps/bandwidth.pbtxt' "$work/array.sh" || { echo "no array script in docs/sweeps.md" >&2; exit 1; }
mkdir -p "$work/bin" "$work/sweeps"
ln -s "$hetsim" "$work/bin/hetsim"
cp "$repo"/examples/*.pbtxt "$work/sweeps/"
cp "$repo/examples/sweep-bandwidth.pbtxt" "$work/sweeps/bandwidth.pbtxt"
# FINE_STEP: a sanitized hetsim is about 10x slower per point, so its ctest passes 0.02 (1,051 points)
# for the same seconds per task.
sed "s/^  step: 1$/  step: ${FINE_STEP:-0.002}/" "$repo/examples/sweep-bandwidth.pbtxt" >"$work/sweeps/fine.pbtxt"
sed 's#sweeps/bandwidth.pbtxt#sweeps/fine.pbtxt#' "$work/array.sh" >"$work/array-fine.sh"
export PATH="$work/bin:$PATH"

# The reference: the whole sweep on this machine.
(cd "$work" && hetsim sweep sweeps/bandwidth.pbtxt -o one-machine.csv --jobs 1 2>/dev/null)
(cd "$work" && hetsim sweep sweeps/fine.pbtxt -o one-machine-fine.csv --jobs "$cpus" 2>/dev/null)
rows=$(($(wc -l <"$work/one-machine.csv") - 1))
fine_rows=$(($(wc -l <"$work/one-machine-fine.csv") - 1))

# Runs script $2 as an array in folder $1 with extra sbatch options; prints the job id.
submit() {
  local dir=$1 script=$2; shift 2
  mkdir -p "$dir/logs"
  ln -sfn "$work/sweeps" "$dir/sweeps"
  sbatch --parsable --chdir="$dir" --cpus-per-task=1 --export=ALL "$@" "$script"
}
# Waits until no task of job $1 is pending or running.
wait_job() {
  for _ in $(seq 1500); do
    [ -z "$(squeue -h -j "$1" 2>/dev/null)" ] && return 0
    sleep 0.2
  done
  echo "job $1 did not finish" >&2; squeue; return 1
}

fail=0
# 1. Four tasks, merged, equal to the one-machine file.
job=$(submit "$work/a" "$work/array.sh" --array=0-3)
wait_job "$job"
(cd "$work/a" && hetsim sweep-merge all.csv results/shard-*.csv --sweep sweeps/bandwidth.pbtxt)
if cmp -s "$work/a/all.csv" "$work/one-machine.csv"; then
  echo "slurm_sweep_test: array of 4 tasks: merged $rows rows == one-machine sweep" >&2
else
  echo "FAIL: array of 4 tasks: merged file differs from the one-machine sweep" >&2; fail=1
  diff "$work/a/all.csv" "$work/one-machine.csv" | head >&2 || true
fi

# 2. Task 1 cancelled mid-way, then submitted again alone.
job=$(submit "$work/b" "$work/array-fine.sh" --array=0-3)
shard1="$work/b/results/shard-1.csv"
for _ in $(seq 6000); do
  [ -f "$shard1" ] && [ "$(wc -l <"$shard1")" -ge 2 ] && break
  sleep 0.01
done
scancel "${job}_1"
wait_job "$job"
state=$(scontrol show job "${job}_1" 2>/dev/null | grep -o "JobState=[A-Z]*" | head -1 || true)
have=$(($(wc -l <"$shard1" 2>/dev/null || echo 1) - 1))
want=$(( (fine_rows + 2) / 4 ))  # points p with p % 4 == 1
echo "slurm_sweep_test: task 1 cancelled (${state:-state unknown}) with $have of its $want rows written" >&2
if [ "$have" -ge "$want" ]; then
  echo "FAIL: task 1 finished before it could be cancelled: the resume is not exercised" >&2; fail=1
fi
job=$(submit "$work/b" "$work/array-fine.sh" --array=1 --export=ALL,SHARDS=4)
wait_job "$job"
(cd "$work/b" && hetsim sweep-merge all.csv results/shard-*.csv --sweep sweeps/fine.pbtxt)
if cmp -s "$work/b/all.csv" "$work/one-machine-fine.csv"; then
  echo "slurm_sweep_test: cancelled and resumed task: merged $fine_rows rows == one-machine sweep" >&2
else
  echo "FAIL: after the cancel and --resume the merged file differs" >&2; fail=1
  diff "$work/b/all.csv" "$work/one-machine-fine.csv" | head >&2 || true
fi
exit $fail
