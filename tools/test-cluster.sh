#!/usr/bin/env bash
# test-cluster.sh: the Slurm recipe of deploy/slurm/ on a real one-node Slurm
# cluster that this script starts on this machine (as root), then stops.
#
#   1. installs Debian's slurm-wlm and munge if missing;
#   2. starts munged with a key, socket and pid file of its own (a temporary
#      directory: nothing of a system munge or Slurm is read or touched);
#   3. writes a one-node slurm.conf there, starts slurmctld and slurmd, and
#      waits until sinfo shows the node idle;
#   4. builds bin/replay, generates two small traces (PTX uniform, SASS
#      histogram), and replays each once unpartitioned: the reference;
#   5. per trace, submits the three steps of the pipeline as dependent
#      jobs: deploy/slurm/split-array.sbatch as an array of 2 tasks (the
#      map: each writes a slice of the trace, by partition), then
#      deploy/slurm/replay-array.sbatch as an array of 3 tasks reading the
#      split directory (--dependency=afterok on the split array), then
#      deploy/slurm/merge.sbatch (afterok on the replay array), and waits
#      until all of them finished;
#   6. checks with DuckDB (tools/cluster-check.mjs) that the 3 partitions'
#      memory and results together are the reference's, each row once, and
#      that every table of the merge equals the reference's;
#   7. stops slurmd, slurmctld and munged whatever happened, and checks that
#      no process it started is left.
#
# Run by `make test-cluster`. Environment:
#   CLUSTER_TIMEOUT  seconds to wait for the jobs (default 300)
#   CLUSTER_KEEP=1   keep the temporary directory (logs, tables) on success
#                    too; it is always kept when the test fails
#   CLUSTER_PORT     slurmctld's port; slurmd takes the next (default: the
#                    first free pair from 16817)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export PATH="$PATH:/usr/local/go/bin:/usr/sbin:/sbin"
GO=${GO:-go}
TIMEOUT=${CLUSTER_TIMEOUT:-300}
NPARTS=3
NSLICES=2
START=$SECONDS

say() { echo "test-cluster: $*"; }
fail() {
  echo "test-cluster: FAIL: $*" >&2
  exit 1
}

[ "$(id -u)" -eq 0 ] || fail "run as root: it installs packages and starts munged, slurmctld and slurmd as root"

# --- 1. packages -------------------------------------------------------------
need=()
for c in slurmctld slurmd sbatch squeue sinfo scontrol; do
  command -v "$c" >/dev/null || { need+=(slurm-wlm); break; }
done
command -v munged >/dev/null || need+=(munge)
command -v node >/dev/null || need+=(nodejs)
command -v npm >/dev/null || need+=(npm)
if [ ${#need[@]} -gt 0 ]; then
  say "installing ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null ||
    fail "apt-get install ${need[*]} failed"
fi
for c in munged munge unmunge slurmctld slurmd sbatch squeue sinfo scontrol scancel node; do
  command -v "$c" >/dev/null || fail "$c not found after installing slurm-wlm and munge"
done
DUCKDB=tools/duckdb/node_modules/@duckdb/node-api/package.json
if [ ! -f "$DUCKDB" ]; then
  say "installing @duckdb/node-api (npm ci --prefix tools/duckdb)"
  npm ci --prefix tools/duckdb --no-audit --no-fund --loglevel=error || fail "npm ci --prefix tools/duckdb failed"
fi

# --- the temporary directory and the clean-up --------------------------------
# Every daemon and job of this cluster is started with REPLAY_TEST_CLUSTER=$T
# in its environment, which is how the clean-up finds what is left of them
# (this script's own environment never has it).
T=$(mktemp -d /tmp/replay-cluster.XXXXXX)
chmod 755 "$T" # munged wants its socket's directories traversable by all
mkdir -p "$T"/{etc,run,log,state,spool,munge,jobs,work}
chmod 700 "$T/munge"
export SLURM_CONF=$T/etc/slurm.conf
MUNGE_SOCKET=$T/run/munge.socket
MARK="REPLAY_TEST_CLUSTER=$T"
HOST=$(hostname -s)

# ours lists the pids of the live processes started with $MARK.
ours() {
  grep -lzxF -- "$MARK" /proc/[0-9]*/environ 2>/dev/null | sed 's,^/proc/\([0-9]*\)/environ$,\1,' || true
}

# stop_pidfile NAME FILE sends TERM to the daemon whose pid FILE holds.
stop_pidfile() {
  local pid
  [ -s "$2" ] || return 0
  pid=$(cat "$2")
  if kill -0 "$pid" 2>/dev/null; then kill -TERM "$pid" 2>/dev/null || true; fi
}

cleanup() {
  local rc=$? i jobs left=()
  trap - EXIT INT TERM
  set +e
  if [ -s "$T/run/slurmctld.pid" ] && kill -0 "$(cat "$T/run/slurmctld.pid")" 2>/dev/null; then
    # Cancel what still runs, so that slurmstepd ends its job's processes.
    mapfile -t jobs < <(squeue -h -o %i 2>/dev/null)
    if [ ${#jobs[@]} -gt 0 ]; then
      scancel --quiet "${jobs[@]}" 2>/dev/null
      for i in $(seq 30); do
        [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break
        sleep 1
      done
    fi
  fi
  stop_pidfile slurmd "$T/run/slurmd.pid"
  stop_pidfile slurmctld "$T/run/slurmctld.pid"
  stop_pidfile munged "$T/run/munged.pid"
  for i in $(seq 50); do
    mapfile -t left < <(ours)
    [ ${#left[@]} -eq 0 ] && break
    sleep 0.2
  done
  if [ ${#left[@]} -gt 0 ]; then
    echo "test-cluster: killing what did not stop on TERM: ${left[*]}" >&2
    kill -KILL "${left[@]}" 2>/dev/null
    sleep 1
    mapfile -t left < <(ours)
    if [ ${#left[@]} -gt 0 ]; then
      echo "test-cluster: FAIL: processes of the test cluster are still running: ${left[*]}" >&2
      [ "$rc" -eq 0 ] && rc=1
    fi
  fi
  if [ "$rc" -eq 0 ] && [ -z "${CLUSTER_KEEP:-}" ]; then
    rm -rf "$T"
  else
    echo "test-cluster: kept $T (logs in $T/log, job output in $T/jobs)" >&2
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'echo "test-cluster: FAIL: interrupted" >&2; exit 130' INT
trap 'echo "test-cluster: FAIL: terminated" >&2; exit 143' TERM

# show_logs prints the end of every daemon log, for a failure's message.
show_logs() {
  local f
  for f in "$T"/log/*.log; do
    [ -f "$f" ] || continue
    echo "----- $f (last 40 lines)" >&2
    tail -n 40 "$f" >&2
  done
}

# --- 2. munge ----------------------------------------------------------------
if ! mungekey --create --keyfile="$T/munge/munge.key" 2>/dev/null; then
  dd if=/dev/urandom of="$T/munge/munge.key" bs=1024 count=1 status=none
fi
chmod 400 "$T/munge/munge.key"
env "$MARK" munged --socket="$MUNGE_SOCKET" --pid-file="$T/run/munged.pid" \
  --log-file="$T/log/munged.log" --seed-file="$T/munge/munged.seed" \
  --key-file="$T/munge/munge.key" || { show_logs; fail "munged did not start"; }
for i in $(seq 50); do
  munge -n -S "$MUNGE_SOCKET" 2>/dev/null | unmunge -S "$MUNGE_SOCKET" >/dev/null 2>&1 && break
  [ "$i" -eq 50 ] && { show_logs; fail "munged does not answer on $MUNGE_SOCKET"; }
  sleep 0.1
done
say "munged up ($MUNGE_SOCKET)"

# --- 3. slurm.conf, slurmctld, slurmd -----------------------------------------
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
PORT=${CLUSTER_PORT:-}
if [ -z "$PORT" ]; then
  for p in $(seq 16817 10 17817); do
    if port_free "$p" && port_free $((p + 1)); then PORT=$p; break; fi
  done
  [ -n "$PORT" ] || fail "no free pair of ports for slurmctld and slurmd in 16817..17818"
fi
CPUS=$(nproc)
MEM=$(awk '/^MemTotal:/ { m = int($2 / 1024 * 0.8); if (m < 1) m = 1; print m }' /proc/meminfo)
cat >"$SLURM_CONF" <<EOF
# A one-node cluster for tools/test-cluster.sh; everything under $T.
ClusterName=replaytest
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$MUNGE_SOCKET
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/run/slurmctld.pid
SlurmdPidFile=$T/run/slurmd.pid
SlurmctldLogFile=$T/log/slurmctld.log
SlurmdLogFile=$T/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
# A job whose dependency can no longer be met is cancelled (in time; the
# wait takes one pending with reason DependencyNeverSatisfied as final too).
SchedulerParameters=kill_invalid_depend
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
# Finished jobs stay visible to scontrol for 10 minutes.
MinJobAge=600
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=$CPUS RealMemory=$MEM State=UNKNOWN
PartitionName=test Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
EOF
env "$MARK" slurmctld || { show_logs; fail "slurmctld did not start"; }
env "$MARK" slurmd || { show_logs; fail "slurmd did not start"; }
state=
for i in $(seq 120); do
  state=$(sinfo -h -n "$HOST" -o %t 2>/dev/null || true)
  [ "$state" = idle ] && break
  if [ "$i" -eq 120 ]; then
    show_logs
    fail "node $HOST not idle after 60 s (sinfo says '${state:-nothing}')"
  fi
  sleep 0.5
done
say "slurmctld and slurmd up, node $HOST idle ($CPUS CPUs, ports $PORT-$((PORT + 1)), $((SECONDS - START)) s so far)"

# --- 4. replay, its traces and their references ------------------------------
$GO build -o bin/replay ./cmd/replay || fail "go build ./cmd/replay failed"
REPLAY=$ROOT/bin/replay
{ "$REPLAY" -h 2>&1 || true; } | grep -q -- '-partition' ||
  fail "bin/replay has no -partition flag: the partitioned replay is not in this tree"
{ "$REPLAY" merge -h 2>&1 || true; } | grep -q 'replay merge' ||
  fail "bin/replay has no merge subcommand: the partitioned replay is not in this tree"
{ "$REPLAY" split -h 2>&1 || true; } | grep -q 'replay split' ||
  fail "bin/replay has no split subcommand: the split pipeline is not in this tree"

W=$T/work
TRACES=(uniform-ptx histogram-sass)
"$REPLAY" gen uniform -dialect ptx -words 64Ki -lane-ops 3e5 -seed 7 -q -o "$W/uniform-ptx.zst" ||
  fail "replay gen uniform failed"
"$REPLAY" gen histogram -dialect sass -bins 4096 -zipf 1.1 -lane-ops 2e5 -seed 7 -q -o "$W/histogram-sass.zst" ||
  fail "replay gen histogram failed"
for t in "${TRACES[@]}"; do
  "$REPLAY" "$W/$t.zst" -o "$W/$t.reference" -q || fail "the unpartitioned replay of $t failed"
done
say "built bin/replay, generated ${TRACES[*]} and their reference tables ($((SECONDS - START)) s so far)"

# --- 5. the split arrays, the replay arrays and the merges --------------------
jobid() { echo "${1%%;*}"; } # sbatch --parsable prints ID or ID;CLUSTER
declare -A SPLITJ ARRAY MERGE
cd "$W"
for t in "${TRACES[@]}"; do
  # The recipes' #SBATCH lines hold, but for where the output goes and one
  # CPU a task (so that two tasks run at once on 2 CPUs).
  out=$(env "$MARK" TRACE="$t.zst" SPLIT="$t.split" PARTITIONS=$NPARTS REPLAY="$REPLAY" \
    sbatch --parsable --array=0-$((NSLICES - 1)) --cpus-per-task=1 \
    --output="$T/jobs/$t-split-%A_%a.out" "$ROOT/deploy/slurm/split-array.sbatch") ||
    { show_logs; fail "sbatch of split-array.sbatch ($t) failed"; }
  SPLITJ[$t]=$(jobid "$out")
  out=$(env "$MARK" SPLIT="$t.split" OUT="$t.parts" MERGED="$t.merged" PARTITIONS=$NPARTS REPLAY="$REPLAY" \
    sbatch --parsable --dependency=afterok:"${SPLITJ[$t]}" --array=0-$((NPARTS - 1)) --cpus-per-task=1 \
    --output="$T/jobs/$t-array-%A_%a.out" "$ROOT/deploy/slurm/replay-array.sbatch") ||
    { show_logs; fail "sbatch of replay-array.sbatch ($t) failed"; }
  ARRAY[$t]=$(jobid "$out")
  out=$(env "$MARK" OUT="$t.parts" MERGED="$t.merged" REPLAY="$REPLAY" \
    sbatch --parsable --dependency=afterok:"${ARRAY[$t]}" \
    --output="$T/jobs/$t-merge-%j.out" "$ROOT/deploy/slurm/merge.sbatch") ||
    { show_logs; fail "sbatch of merge.sbatch ($t) failed"; }
  MERGE[$t]=$(jobid "$out")
  say "$t: submitted split array ${SPLITJ[$t]} (slices 0-$((NSLICES - 1))), replay array ${ARRAY[$t]} (partitions 0-$((NPARTS - 1)), afterok:${SPLITJ[$t]}) and merge job ${MERGE[$t]} (afterok:${ARRAY[$t]})"
done
cd "$ROOT"

# states prints "JOBID[_TASK] STATE REASON EXITCODE" for each record of the
# jobs given (an array job has one record per task once it is started).
states() {
  local j
  for j in "$@"; do
    { scontrol -o show job "$j" 2>/dev/null || true; } | awk '{
      id = ""; task = ""; st = ""; rs = ""; ec = ""
      for (i = 1; i <= NF; i++) {
        split($i, kv, "=")
        if (kv[1] == "JobId" && id == "") id = kv[2]
        else if (kv[1] == "ArrayJobId") id = kv[2]
        else if (kv[1] == "ArrayTaskId") task = "_" kv[2]
        else if (kv[1] == "JobState") st = kv[2]
        else if (kv[1] == "Reason") rs = kv[2]
        else if (kv[1] == "ExitCode") ec = substr($i, 10)
      }
      print id task, st, rs, ec
    }'
  done
}
terminal='^(COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|PREEMPTED|BOOT_FAIL|DEADLINE)$'
ALL=()
for t in "${TRACES[@]}"; do ALL+=("${SPLITJ[$t]}" "${ARRAY[$t]}" "${MERGE[$t]}"); done
show_jobs() {
  local f
  echo "----- job states (id state reason exit)" >&2
  states "${ALL[@]}" >&2
  for f in "$T"/jobs/*.out; do
    [ -f "$f" ] || continue
    echo "----- $f" >&2
    cat "$f" >&2
  done
}
# alive NAME fails the test, with the logs, if daemon NAME is gone (or a
# zombie: here no init may reap it soon).
alive() {
  local st
  st=$(ps -o stat= -p "$(cat "$T/run/$1.pid" 2>/dev/null || echo 0)" 2>/dev/null || true)
  case $st in
  "" | Z*) show_jobs; show_logs; fail "$1 is not running any more" ;;
  esac
}
deadline=$((SECONDS + TIMEOUT))
while :; do
  alive munged
  alive slurmctld
  alive slurmd
  # Done when every job is known and each of its records (an array's tasks
  # not started yet are one PENDING record) has finished, or waits on a
  # dependency that failed.
  done=1
  for j in "${ALL[@]}"; do
    s=$(states "$j")
    if [ -z "$s" ] || awk -v re="$terminal" '$2 !~ re && $3 != "DependencyNeverSatisfied" { bad = 1 }
        END { exit !bad }' <<<"$s"; then
      done=0
      break
    fi
  done
  [ "$done" -eq 1 ] && break
  if [ "$SECONDS" -ge "$deadline" ]; then
    show_jobs
    show_logs
    fail "the jobs did not finish within $TIMEOUT s"
  fi
  sleep 1
done
s=$(states "${ALL[@]}")
if awk '$2 != "COMPLETED" || $4 != "0:0" { bad = 1 } END { exit !bad }' <<<"$s"; then
  show_jobs
  failed=$(awk '$2 != "COMPLETED" || $4 != "0:0" { printf " %s(%s,%s,exit %s)", $1, $2, $3, $4 }' <<<"$s")
  fail "not every job completed:$failed"
fi
for t in "${TRACES[@]}"; do
  [ -d "$W/$t.merged" ] || { show_jobs; fail "$t: merge job ${MERGE[$t]} completed but wrote no $t.merged"; }
done
say "all jobs completed ($((SECONDS - START)) s so far):"
states "${ALL[@]}" | sed 's/^/  /'

# --- 6. the tables, through DuckDB -------------------------------------------
for t in "${TRACES[@]}"; do
  node tools/cluster-check.mjs -reference "$W/$t.reference" -partitions "$W/$t.parts" \
    -n "$NPARTS" -merged "$W/$t.merged" -name "$t" ||
    fail "$t: the partitioned or merged tables differ from the unpartitioned replay's"
done

say "PASS: $NSLICES-task split arrays, $NPARTS-task replay arrays and their merges, dependent jobs on a one-node Slurm cluster, equal the unpartitioned replays (${TRACES[*]}), $((SECONDS - START)) s"
