#!/bin/bash
# `make slurm-check`: the batch template and `srun` launches run under a real Slurm on this machine.
#
# As root: installs slurm-wlm and munge (Debian/Ubuntu packages) when missing, writes a throw-away
# slurm.conf for this host (its own CPU and memory counts, from `slurmd -C`), starts munged,
# slurmctld and slurmd under a temporary folder, and through the scheduler runs
#   1. the template on a small measured Tucker sweep at 2 ranks, each MPI job launched by srun;
#   2. the template on a small SpTrSV sweep, --cpus-per-task = the cores it sweeps;
#   3. a sweep split across a job array (`spbench run --slurm-array 3`), then `spbench profile`;
# checks the rows (ok, no duplicates, the Slurm job ids in every row) and stops every daemon it
# started, however it ends. Not root: prints "skipped" and exits 0. KEEP=1 keeps the folder.
set -euo pipefail

if [ "$(id -u)" != 0 ]; then
  echo "slurm-check: skipped (needs root: it installs slurm-wlm and munge and starts munged, slurmctld" \
       "and slurmd for this host); run: sudo make slurm-check"
  exit 0
fi
REPO=$(cd "$(dirname "$0")/../.." && pwd)
VENV=${SPBENCH_VENV:-$REPO/.venv}
PY=$VENV/bin/python
SPBENCH=$VENV/bin/spbench
TEMPLATE=$REPO/configs/slurm/spbench.sbatch
# MPICH's PMI client speaks PMI-2 to Slurm's pmi2 plugin (`srun --mpi=list` shows what a site has)
SRUN_MPI=${SRUN_MPI:-pmi2}
started=$(date +%s)

if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null; then
  echo "slurm-check: installing slurm-wlm and munge"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    slurm-wlm munge >/dev/null
fi

WORK=$(mktemp -d /tmp/spbench-slurm.XXXXXX)
chmod 755 "$WORK"
PIDS=()
stop() {
  local rc=$?
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
  if [ "$rc" != 0 ]; then
    echo "slurm-check: FAILED (exit $rc); daemon logs:" >&2
    tail -n 15 "$WORK"/*.log >&2 2>/dev/null || true
  fi
  if [ "${KEEP:-0}" = 1 ]; then echo "slurm-check: kept $WORK"; else rm -rf "$WORK"; fi
  echo "slurm-check: daemons stopped; $(( $(date +%s) - started )) s in all"
}
trap stop EXIT
trap 'exit 130' INT TERM

# munge: a fresh key and its own socket, so a site's munged (if any) is left alone
dd if=/dev/urandom of="$WORK/munge.key" bs=1024 count=1 status=none
chmod 400 "$WORK/munge.key"
munged --foreground --force --key-file="$WORK/munge.key" --socket="$WORK/munge.sock" \
  --pid-file="$WORK/munged.pid" --log-file="$WORK/munged.log" --seed-file="$WORK/munge.seed" &
PIDS+=($!)

HOST=$(hostname -s)
NODE=$(slurmd -C | head -n 1)
mkdir -p "$WORK/state" "$WORK/spool"
export SLURM_CONF=$WORK/slurm.conf
cat > "$SLURM_CONF" <<EOF
ClusterName=spbenchcheck
SlurmctldHost=$HOST
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$WORK/munge.sock
SlurmUser=root
SlurmdUser=root
SlurmctldPort=${SLURMCTLD_PORT:-16817}
SlurmdPort=${SLURMD_PORT:-16818}
StateSaveLocation=$WORK/state
SlurmdSpoolDir=$WORK/spool
SlurmctldPidFile=$WORK/slurmctld.pid
SlurmdPidFile=$WORK/slurmd.pid
SlurmctldLogFile=$WORK/slurmctld.log
SlurmdLogFile=$WORK/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
$NODE State=UNKNOWN
PartitionName=check Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
EOF
slurmctld -D -i -f "$SLURM_CONF" &
PIDS+=($!)
slurmd -D -f "$SLURM_CONF" &
PIDS+=($!)
for _ in $(seq 60); do
  sinfo -h -o %t 2>/dev/null | grep -q idle && break
  sleep 1
done
sinfo -h -o "%t" | grep -q idle || { echo "slurm-check: the node never came up idle" >&2; exit 1; }
echo "slurm-check: Slurm $(sinfo -V | cut -d' ' -f2) up on $NODE"
echo "slurm-check: srun --mpi=list: $(srun --mpi=list 2>&1 | tr -s '\n' ' ')"
# which PMI the MPI library needs: the size of MPI_COMM_WORLD each of 2 srun tasks sees
for mpi in none pmix "$SRUN_MPI"; do
  sizes=$(timeout 60 srun --mpi="$mpi" -n 2 "$PY" -c 'from mpi4py import MPI; print(MPI.COMM_WORLD.size)' \
    2>/dev/null | sort | tr '\n' ' ') || true
  echo "slurm-check: srun --mpi=$mpi -n 2: each task sees an MPI_COMM_WORLD of size: ${sizes:-none (failed)}"
done

mkdir -p "$WORK/configs"
cat > "$WORK/configs/slurm_tucker.yaml" <<EOF
name: slurm_tucker
experiment: tucker
execution: measured
fallback: standin
datasets:
  - nell2: {nnz: 20000, standin: true}
sweep:
  algorithm: [coarse, lite]
  ranks: [2]
  K: [5]
EOF
cat > "$WORK/configs/slurm_sptrsv.yaml" <<EOF
name: slurm_sptrsv
experiment: sptrsv
datasets:
  - lap2d-5pt: {grid: 60}
sweep:
  algorithm: [serial, wavefront, hdagg]
  cores: [1, 2]
repeats: 20
EOF
cat > "$WORK/configs/slurm_array.yaml" <<EOF
name: slurm_array
experiment: sptrsv
datasets:
  - lap2d-5pt: {grid: 50}
  - lap2d-9pt: {grid: 40}
sweep:
  algorithm: [serial, wavefront, hdagg, spmp, growlocal]
  cores: [1]
repeats: 20
runs: 2
EOF

export SPBENCH_RESULTS=$WORK/results SPBENCH_VENV=$VENV SPBENCH_DATA=$WORK/data
export SPBENCH_LAUNCHER="srun --mpi=$SRUN_MPI -n {ranks}"
cd "$WORK"
submit() {  # sbatch --wait; prints the job id, the job's output on failure
  local out
  out=$(sbatch --parsable --wait "$@") || { echo "slurm-check: job failed: sbatch $*" >&2; cat "$WORK"/*.out >&2; return 1; }
  echo "${out%%;*}"
}
t0=$(date +%s)
TUCKER_JOB=$(submit --nodes=1 --ntasks=2 --output="$WORK/tucker-%j.out" "$TEMPLATE" "$WORK/configs/slurm_tucker.yaml")
echo "slurm-check: 1. Tucker measured at 2 ranks under '$SPBENCH_LAUNCHER': job $TUCKER_JOB ($(( $(date +%s) - t0 )) s)"
t0=$(date +%s)
SPTRSV_JOB=$(submit --nodes=1 --ntasks=1 --cpus-per-task=2 --output="$WORK/sptrsv-%j.out" "$TEMPLATE" \
  "$WORK/configs/slurm_sptrsv.yaml")
echo "slurm-check: 2. SpTrSV at 1-2 cores, --cpus-per-task=2: job $SPTRSV_JOB ($(( $(date +%s) - t0 )) s)"
t0=$(date +%s)
read -r -a ARRAY_CMD < <("$SPBENCH" run "$WORK/configs/slurm_array.yaml" --slurm-array 3)
echo "slurm-check: 3. $(printf '%q ' "${ARRAY_CMD[@]}")"
# --exclusive=user: the array's 1-CPU tasks share the node, so shards write the folder at once
ARRAY_JOB=$(submit --exclusive=user "${ARRAY_CMD[@]:1}")
echo "slurm-check: 3. job array $ARRAY_JOB, 3 shards ($(( $(date +%s) - t0 )) s)"
"$SPBENCH" profile "$WORK/results/slurm_array" --out "$WORK/plots"

"$PY" - "$WORK" "$TUCKER_JOB" "$SPTRSV_JOB" "$ARRAY_JOB" <<'EOF'
"""The rows each job stored: all ok, each point once, every row naming its Slurm job."""
import json
import subprocess
import sys
from pathlib import Path

work, tucker, sptrsv, array = sys.argv[1:]
work = Path(work)


def rows(name):
    return [json.loads(p.read_text()) for p in (work / "results" / name / "runs").glob("*.json")]


def points(name):
    out = subprocess.run([str(Path(sys.executable).with_name("spbench")), "run",
                          str(work / "configs" / f"{name}.yaml"), "--dry-run", "--out", str(work / "none")],
                         capture_output=True, text=True, check=True).stdout
    return int(out.strip().splitlines()[-1].split()[0])


def check(name, job, key):
    found = rows(name)
    bad = [r for r in found if r["status"] != "ok"]
    assert not bad, f"{name}: {len(bad)} rows not ok: {bad[0].get('error')}"
    keys = [key(r) for r in found]
    assert len(found) == points(name) and len(set(keys)) == len(keys), f"{name}: {len(found)} rows, {len(set(keys))} distinct"
    field = "slurm_array_job_id" if name == "slurm_array" else "slurm_job_id"
    assert {r[field] for r in found} == {job}, f"{name}: rows name jobs {sorted({r[field] for r in found})}, not {job}"
    return found


check("slurm_tucker", tucker, lambda r: (r["dataset"], r["algorithm"], r["ranks"], r["repeat"]))
check("slurm_sptrsv", sptrsv, lambda r: (r["dataset"], r["algorithm"], r["cores"], r["repeat"]))
found = check("slurm_array", array, lambda r: (r["dataset"], r["algorithm"], r["cores"], r["repeat"]))
tasks = {(r["slurm_array_task_id"], r["shard"]) for r in found}
assert tasks == {(str(i), f"{i}/3") for i in range(3)}, f"array rows from tasks {sorted(tasks)}"
assert len({r["slurm_job_id"] for r in found}) == 3
meta = json.loads((work / "results" / "slurm_array" / "meta.json").read_text())
assert sorted(j["slurm_array_task_id"] for j in meta["slurm_jobs"]) == ["0", "1", "2"]
print(f"slurm-check: rows ok: Tucker {len(rows('slurm_tucker'))} (job {tucker}), SpTrSV {len(rows('slurm_sptrsv'))} "
      f"(job {sptrsv}), array {len(found)} from tasks 0-2 of job {array}, each point once")
EOF
grep -h "MPI job" "$WORK"/tucker-*.out | head -n 3
echo "slurm-check: passed"
