# shellcheck shell=bash
# A throw-away one-node Slurm cluster for tests: munged + slurmctld + slurmd
# as root in a fresh temp dir (own munge key and socket, own ports, state,
# spool and logs), torn down on EXIT whatever happens. Source it, then call
# slurm_start; jobs see SLURM_CONF and the Open MPI root variables.
#
# Exit code 77 (ctest SKIP) only when the Slurm daemons are not installed; a
# daemon that is installed but does not come up is a failure.

SLURM_TMP=""
SLURM_NODE=""
SLURM_KEEP=${KEEP_TMP:-0}

slurm_log() { echo "[slurm-harness $(date +%T)] $*" >&2; }

slurm_loud_skip() { # MESSAGE: skip the test (exit 77) with a message nobody can miss
  {
    echo "################################################################"
    echo "## SKIPPED: $1"
    echo "################################################################"
  } >&2
  exit 77
}

slurm_dump_logs() { # last lines of the daemon logs, for a failing test
  local f
  for f in "$SLURM_TMP"/slurmctld.log "$SLURM_TMP"/slurmd.log; do
    [[ -f $f ]] || continue
    echo "---- tail of $f" >&2
    tail -n 25 "$f" >&2
  done
}

slurm_stop() { # idempotent: shut the daemons down, kill leftovers by pid, drop the temp dir
  [[ -n $SLURM_TMP && -d $SLURM_TMP ]] || return 0
  if [[ -n ${SLURM_CONF:-} && -f $SLURM_CONF ]]; then
    # Jobs first, so no batch script outlives its cluster.
    scancel --full --quiet --user=root 2>/dev/null || true
    timeout 10 scontrol shutdown >/dev/null 2>&1 || true
  fi
  local pidfile pid
  for pidfile in "$SLURM_TMP"/slurmctld.pid "$SLURM_TMP"/slurmd.pid "$SLURM_TMP"/munged.pid; do
    [[ -f $pidfile ]] || continue
    pid=$(cat "$pidfile" 2>/dev/null) || continue
    [[ $pid =~ ^[0-9]+$ ]] || continue
    [[ $pidfile == */munged.pid ]] && kill -TERM "$pid" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  done
  # Job processes that survived (slurmstepd, scripts, ranks): only those whose
  # environment names our SLURM_CONF, i.e. processes of this cluster.
  local p
  for p in /proc/[0-9]*; do
    pid=${p#/proc/}
    [[ $pid == "$$" ]] && continue
    if { tr '\0' '\n' <"$p/environ"; } 2>/dev/null | grep -qxF "SLURM_CONF=$SLURM_TMP/slurm.conf"; then
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done
  if [[ $SLURM_KEEP == 1 ]]; then
    slurm_log "kept $SLURM_TMP"
  else
    rm -rf "$SLURM_TMP"
  fi
  SLURM_TMP=""
}

# slurm_free_port: a TCP port nobody listens on (two in a row: ctld, d),
# below the kernel's ephemeral range (ip_local_port_range, 32768 here): a
# port inside it can be the local end of any connection on the machine (an
# MPI job's, another test's) when slurmctld binds, which the connect probe
# cannot see, and slurmctld then dies with "Address already in use" (seen
# once in a fresh-clone CI run, 2026-12-06).
slurm_free_port() {
  local port low=32768 span
  read -r low _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || true
  span=$((low - 2 - 20000))
  ((span >= 1000)) || span=1000 # an unusual range: back to the old window
  while :; do
    port=$((20000 + RANDOM % span))
    if ! (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null &&
      ! (echo >"/dev/tcp/127.0.0.1/$((port + 1))") 2>/dev/null; then
      echo "$port"
      return
    fi
  done
}

# slurm_start [KEY=VALUE config lines...]: start the cluster; extra lines
# override or add slurm.conf settings (e.g. KillWait=1).
slurm_start() {
  local d
  for d in slurmctld slurmd sbatch scontrol sinfo; do
    command -v "$d" >/dev/null || PATH=$PATH:/usr/sbin command -v "$d" >/dev/null ||
      slurm_loud_skip "Slurm is not installed ($d missing): apt-get install slurm-wlm munge"
  done
  PATH=$PATH:/usr/sbin
  SLURM_TMP=$(mktemp -d "${TMPDIR:-/tmp}/bloomshard-slurm.XXXXXX")
  chmod 755 "$SLURM_TMP"
  # shellcheck disable=SC2154 # rc is assigned inside the trap
  trap 'rc=$?; if ((rc != 0 && rc != 77)); then slurm_dump_logs; fi; slurm_stop; exit $rc' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  mkdir -p "$SLURM_TMP"/{state,spool,jobs}
  SLURM_NODE=$(hostname -s)
  local port
  port=$(slurm_free_port)
  # munge (own key and socket) as on a real cluster: its job credentials make
  # a requeued job wait until the old run's steps are gone (cred/none lets
  # the next run start while they are still being torn down, and its srun
  # then fails to launch). BLOOMSHARD_SLURM_AUTH=none forces auth/none.
  local auth="AuthType=auth/none
CredType=cred/none
AuthInfo=cred_expire=5"
  if [[ ${BLOOMSHARD_SLURM_AUTH:-munge} == munge ]] && command -v munged >/dev/null; then
    dd if=/dev/urandom of="$SLURM_TMP/munge.key" bs=1024 count=1 status=none
    chmod 400 "$SLURM_TMP/munge.key"
    munged --force --key-file="$SLURM_TMP/munge.key" --socket="$SLURM_TMP/munge.sock" \
      --pid-file="$SLURM_TMP/munged.pid" --log-file="$SLURM_TMP/munged.log" \
      --seed-file="$SLURM_TMP/munged.seed" 2>"$SLURM_TMP/munged.err" || {
      cat "$SLURM_TMP/munged.err" "$SLURM_TMP/munged.log" >&2 2>/dev/null
      slurm_log "FAIL: munged did not start"
      exit 1
    }
    auth="AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=${SLURM_TMP}/munge.sock,cred_expire=5"
  fi
  cat >"$SLURM_TMP/slurm.conf" <<EOF
# one-node test cluster (tests/slurm/harness.sh), see docs/platform notes
ClusterName=bloomtest
FirstJobId=$((1000 + RANDOM % 30000))
SlurmctldHost=${SLURM_NODE}(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=${port}
SlurmdPort=$((port + 1))
${auth}
StateSaveLocation=${SLURM_TMP}/state
SlurmdSpoolDir=${SLURM_TMP}/spool
SlurmctldPidFile=${SLURM_TMP}/slurmctld.pid
SlurmdPidFile=${SLURM_TMP}/slurmd.pid
SlurmctldLogFile=${SLURM_TMP}/slurmctld.log
SlurmdLogFile=${SLURM_TMP}/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=pmix
SlurmdParameters=config_overrides
SchedulerParameters=sched_interval=2,bf_interval=1
ReturnToService=2
KillWait=5
MinJobAge=600
$(printf '%s\n' "$@")
NodeName=${SLURM_NODE} NodeAddr=127.0.0.1 CPUs=4 State=UNKNOWN
PartitionName=test Nodes=${SLURM_NODE} Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
EOF
  # PMIx's client dir defaults to /tmp/spmix_appdir_<uid>_<job>.<step>: keep
  # it (and the job ids) apart from any other test cluster on this machine.
  mkdir -p "$SLURM_TMP/pmix"
  echo "PMIxCliTmpDirBase=$SLURM_TMP/pmix" >"$SLURM_TMP/mpi.conf"
  export SLURM_CONF=$SLURM_TMP/slurm.conf
  # Jobs run as root and inherit this environment (sbatch --export=ALL).
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export OMPI_MCA_rmaps_base_oversubscribe=1
  # More ranks than CPUs (sbatch --overcommit): without this, ranks launched
  # by srun busy-poll and a collective round trip costs a scheduler tick.
  export OMPI_MCA_mpi_yield_when_idle=1
  local t0=$SECONDS
  slurmctld -f "$SLURM_CONF" || { slurm_dump_logs; slurm_log "FAIL: slurmctld did not start"; exit 1; }
  slurmd -f "$SLURM_CONF" || { slurm_dump_logs; slurm_log "FAIL: slurmd did not start"; exit 1; }
  local state=""
  for _ in $(seq 150); do
    state=$(sinfo -h -N -o %t 2>/dev/null | head -n1)
    [[ $state == idle ]] && break
    sleep 0.2
  done
  if [[ $state != idle ]]; then
    slurm_dump_logs
    slurm_log "FAIL: node not idle after 30 s (sinfo says '${state}')"
    exit 1
  fi
  slurm_log "cluster up in $((SECONDS - t0)) s: node ${SLURM_NODE}, ports ${port}/$((port + 1)), dir ${SLURM_TMP}"
}

job_field() { # JOBID FIELD: one field of `scontrol show job` (e.g. JobState, ExitCode, Restarts)
  scontrol -o show job "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n1
}

# wait_job_state JOBID TIMEOUT STATE...: wait until the job is in one of the
# STATEs; fails (exit 1) on timeout with the job's record.
wait_job_state() {
  local id=$1 timeout=$2 state s
  shift 2
  local end=$((SECONDS + timeout))
  while ((SECONDS < end)); do
    state=$(job_field "$id" JobState)
    for s in "$@"; do [[ $state == "$s" ]] && return 0; done
    sleep 0.3
  done
  slurm_log "FAIL: job $id still '$state' after ${timeout} s (wanted: $*)"
  scontrol show job "$id" >&2 || true
  exit 1
}

# kick_requeued JOBID TIMEOUT: a requeued job waits cred_expire+1 s before it
# may start; once it left COMPLETING and the old run's step daemons are gone
# (their sockets in the spool dir: a step started earlier collides with
# them, e.g. the PMIx socket, and its srun fails), let it start now. Not in
# the same second as the old run's end, though: slurmd refuses a credential
# created in the second its predecessor was revoked ("Job credential
# revoked", the job FAILED), seen once a checkpoint took under a second.
kick_requeued() {
  local id=$1 timeout=$2 state end=$((SECONDS + $2)) pending_since=""
  while ((SECONDS < end)); do
    state=$(job_field "$id" JobState)
    case $state in
      PENDING)
        [[ -n $pending_since ]] || pending_since=$(date +%s.%N)
        if compgen -G "$SLURM_TMP/spool/${SLURM_NODE}_${id}.*" >/dev/null ||
          compgen -G "$SLURM_TMP/spool/stepd.slurm.pmix.${id}.*" >/dev/null ||
          compgen -G "$SLURM_TMP/spool/pmix.${id}.*" >/dev/null ||
          [[ -e $SLURM_TMP/spool/job${id} ]] ||
          awk -v t="$pending_since" -v now="$(date +%s.%N)" 'BEGIN { exit !(now - t < 1.1) }'; then
          sleep 0.2
          continue
        fi
        scontrol update jobid="$id" StartTime=now >/dev/null 2>&1 && return 0
        ;;
      RUNNING | COMPLETED | FAILED | CANCELLED) return 0 ;;
    esac
    sleep 0.3
  done
  slurm_log "FAIL: requeued job $id still '$state' after ${timeout} s"
  exit 1
}
