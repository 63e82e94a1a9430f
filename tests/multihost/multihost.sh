#!/usr/bin/env bash
# bloomshard on 3 simulated hosts: Linux network namespaces joined by a
# bridge, TCP only (no shared memory), ranks launched by mpirun through Open
# MPI's rsh launcher with an agent that enters a host's namespace (its own
# hostname via unshare --uts). Scenarios, each checked by the exactly-once
# oracle plus gzip -t / zstd -t:
#   complete   a run across the 3 hosts;
#   host_kill  every process of host 3 SIGKILLed mid-run: the job ends within
#              the bound, then resumes on hosts 1-2 with fewer ranks;
#   link_cut   host 3's interface goes down mid-run: the job ends within the
#              bound (stall watchdog + TCP keepalive), then resumes on 1-2.
# Only addresses inside the namespaces the test creates are used; every
# namespace, process and session dir is removed on any exit (trap). Root
# only; exits 77 (skipped) where namespaces cannot be made.
#
# usage: multihost.sh complete|host_kill|link_cut BIN ORACLE [--mpiexec M]
#                     [--np-flag F] [--python P]
SCENARIO=${1:-}
shift || true
source "$(dirname "$0")/../faults/lib.sh"
[[ $SCENARIO == complete || $SCENARIO == host_kill || $SCENARIO == link_cut ]] ||
  harness_usage "usage: multihost.sh complete|host_kill|link_cut BIN ORACLE ..."
fault_start multihost_$SCENARIO "$@"
MPIRUN=$(command -v "$MPIEXEC")

# --- topology: SW holds br0; host i has veth0 = 10.211.N.i/24.
TAG=bsmh$$
SUBNET_N=$(($$ % 200 + 20))
NET=10.211.$SUBNET_N
HOSTS=(h1 h2 h3)
ns() { echo "$TAG-$1"; }
addr() { echo "$NET.${1#h}"; }
teardown() {
  local h p
  for h in sw "${HOSTS[@]}"; do
    for p in $(ip netns pids "$(ns "$h")" 2>/dev/null); do kill -KILL "$p" 2>/dev/null || true; done
  done
  sleep 0.2
  for h in sw "${HOSTS[@]}"; do ip netns del "$(ns "$h")" 2>/dev/null || true; done
  for h in "${HOSTS[@]}"; do
    rm -rf /tmp/ompi."$(ns "$h")".* 2>/dev/null || true
    rm -f /dev/shm/vader_segment."$(ns "$h")".* 2>/dev/null || true
  done
}
harness_on_exit teardown
ip netns add "$(ns sw)" 2>/dev/null || { log "cannot create network namespaces: skipped"; exit 77; }
ip -n "$(ns sw)" link add br0 type bridge stp_state 0 forward_delay 0
ip -n "$(ns sw)" link set br0 up
for h in "${HOSTS[@]}"; do
  ip netns add "$(ns "$h")"
  ip -n "$(ns sw)" link add "p${h#h}" type veth peer name veth0 netns "$(ns "$h")"
  ip -n "$(ns sw)" link set "p${h#h}" master br0 up
  ip -n "$(ns "$h")" addr add "$(addr "$h")/24" dev veth0
  ip -n "$(ns "$h")" link set veth0 up
  ip -n "$(ns "$h")" link set lo up
  # A daemon behind a cut link has unacknowledged data in flight, where TCP
  # keepalive does not apply: the retransmission limit decides when mpirun
  # gives it up (default 15 retries, ~15 min; 5 retries ~13 s). A cluster
  # sets this for its nodes; here each host namespace has its own.
  ip netns exec "$(ns "$h")" sysctl -qw net.ipv4.tcp_retries2=5
done

# The rsh agent: skip -options, map the address to its namespace, run the
# command words there under the host's own hostname.
AGENT=$TMP/agent.sh
cat >"$AGENT" <<AGENT_EOF
#!/bin/sh
while [ "\${1#-}" != "\$1" ]; do shift; done
host=\$1; shift
case "\$host" in
$(for h in "${HOSTS[@]}"; do echo "  $(addr "$h")|$(ns "$h")) n=$(ns "$h") ;;"; done)
  *) echo "agent: unknown host \$host" >&2; exit 1 ;;
esac
exec ip netns exec "\$n" unshare --uts sh -c "hostname \$n; \$*"
AGENT_EOF
chmod +x "$AGENT"

# Bounds: the stall watchdog (a rank waiting on a silent peer) and Open
# MPI's out-of-band keepalive (a daemon behind a cut link).
STALL=10
MCA=(--mca plm_rsh_agent "$AGENT" --mca btl tcp,self --mca btl_tcp_if_include "$NET.0/24"
  --mca oob_tcp_if_include "$NET.0/24" --mca oob_tcp_keepalive_time 5
  --mca oob_tcp_keepalive_intvl 2 --mca oob_tcp_keepalive_probes 3)

make_corpus 300000
OUT=$TMP/out STATE=$TMP/state
ARGS=(--input "$IN" --output "$OUT" --key-field id --state "$STATE" --checkpoint-every 0.5
  --batch-bytes 8192 --stall-timeout $STALL)

# mpirun runs on host 1 (inside its namespace, through the same agent).
# The job's arguments: ARGS, or JOB_ARGS...
start_mh() { # TAG HOSTLIST NP [JOB_ARGS...]
  local tag=$1 hosts=$2 np=$3
  shift 3
  local job_args=("$@")
  ((${#job_args[@]})) || job_args=("${ARGS[@]}")
  ln -sf "$BIN" "$MARK/bs-$tag"
  "$AGENT" "$(addr h1)" "$MPIRUN" --oversubscribe "${MCA[@]}" --host "$hosts" -n "$np" \
    -x OMPI_ALLOW_RUN_AS_ROOT -x OMPI_ALLOW_RUN_AS_ROOT_CONFIRM \
    "$MARK/bs-$tag" dedup "${job_args[@]}" >"$TMP/$tag.log" 2>&1 &
  JOB=$!
}
ALL="$(addr h1):2,$(addr h2):1,$(addr h3):1"
TWO="$(addr h1):2,$(addr h2):1"
# Processes of host H that belong to the job (the ranks).
host_ranks() { local p; for p in $(ip netns pids "$(ns "$1")" 2>/dev/null); do
  grep -q "$MARK/bs-" "/proc/$p/cmdline" 2>/dev/null && echo "$p"; done; return 0; }
no_job_left() { local h; for h in "${HOSTS[@]}"; do [[ -z $(host_ranks "$h") ]] || return 1; done; }

# Small rounds are for a fault to find the job mid-input; at 8 KiB a whole
# run took ~2,000 rounds of TCP all-to-all. The complete run reads in
# 256 KiB rounds (still ~20 exchanges a rank), the resumes in the default
# ones (resume_args).
resume_args "${ARGS[@]}"
case $SCENARIO in
  complete) start_mh m1 "$ALL" 4 "${RESUME[@]}" --batch-bytes 262144 ;;
  *) start_mh m1 "$ALL" 4 ;;
esac
case $SCENARIO in
  complete)
    wait_job "$JOB" 150 m1
    ((RC == 0)) || fail "the 3-host run exited $RC"
    grep -q " 4 ranks" "$TMP/m1.log" || fail "the run did not use 4 ranks"
    check_outputs "$OUT"
    log "4 ranks on 3 hosts over TCP: exactly once"
    ;;
  host_kill | link_cut)
    wait_until 90 "the first checkpoint" committed "$STATE"
    [[ -n $(host_ranks h3) ]] || fail "no rank runs on host 3"
    T0=$(now)
    if [[ $SCENARIO == host_kill ]]; then
      for p in $(ip netns pids "$(ns h3)"); do kill -KILL "$p" 2>/dev/null || true; done
      BOUND=15
    else
      ip -n "$(ns h3)" link set veth0 down
      BOUND=60
    fi
    # Every rank on every host must end within the bound (the product's
    # watchdog), and mpirun too (the launcher, bounded by TCP).
    wait_until $BOUND "every rank on every host to be gone" no_job_left
    T2=$(now)
    wait_job "$JOB" 90 m1
    T1=$(now)
    ((RC != 0)) || fail "the job exited 0 after host 3 was lost"
    detect "$SCENARIO-ranks" "$(elapsed "$T0" "$T2")" $BOUND
    detect "$SCENARIO" "$(elapsed "$T0" "$T1")" $BOUND
    log "last rank gone $(elapsed "$T0" "$T2") s after the fault; mpirun ended after $(elapsed "$T0" "$T1") s (exit $RC)"
    grep -E "bloomshard dedup: rank|watchdog" "$TMP/m1.log" | head -n 3 || true
    start_mh m2 "$TWO" 3 "${RESUME[@]}"
    wait_job "$JOB" 150 m2
    ((RC == 0)) || fail "the resume on hosts 1-2 exited $RC"
    grep -q "resuming checkpoint generation" "$TMP/m2.log" || fail "the restart did not resume"
    check_outputs "$OUT"
    log "resumed on 2 hosts with 3 ranks: exactly once"
    ;;
esac
log "ok"
