# Shared pieces of the fault tests (sourced): a temp dir torn down on any
# exit, a corpus, jobs started through a marker symlink (so a test kills
# only its own processes, never by program name), waits with deadlines,
# the exactly-once check (oracle.py + gzip -t + zstd -t) and the measured
# detection time, printed as "DETECT <scenario> <seconds>" for
# docs/reliability.md.
#
# A fault script sources this file and calls fault_start NAME "$@" (its own
# leading words already shifted off). Built on tests/harness.sh: fail, log,
# the temp dir, the marker and the cleanup are the harness's.
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"

# fault_start NAME BIN ORACLE [--mpiexec M] [--np-flag F] [--python P]:
# NAME labels the test (FAIL/log lines, the temp dir); BIN, ORACLE, the
# launch options and TMP are set, jobs are killed and mounts undone at exit.
fault_start() {
  NAME=$1
  shift
  harness_parse "$NAME" "BIN ORACLE" "$@"
  harness_tmp "$NAME" "$NAME"
  harness_marker
  harness_on_fail harness_dump_logs
  harness_on_exit unmount_all
}

# Processes of this test: every job runs BIN through a symlink under $MARK.
our_pids() { pgrep -f -- "$MARK/" || true; }
kill_ours() { kill_marker "$MARK/"; }
# Mount points to unmount at exit (lazily, after the jobs on them are dead).
MOUNTS=()
unmount_all() {
  local m
  sleep 0.2
  for m in "${MOUNTS[@]}"; do umount -l "$m" 2>/dev/null || true; done
}

# resume_args ARGS...: sets RESUME to ARGS without `--batch-bytes N`: the
# resume (or rerun) of a job a test stopped, in the default rounds. The
# stopped job reads in small rounds so that the fault finds it mid-input;
# what its resume proves is the cut and exactly-once, and a round's size is
# not part of the state (a resume may change it, as a user may). In small
# rounds the resume of a 400k-record corpus took ~3,000 rounds of
# collectives, most of a fault test's time (faults.signal_ranks 33 -> 20 s).
resume_args() {
  RESUME=()
  while (($#)); do
    if [[ $1 == --batch-bytes ]]; then
      shift 2
      continue
    fi
    RESUME+=("$1")
    shift
  done
}

# A corpus of gz, zst and plain JSONL with cross-file duplicates:
# RECORDS records in all (default 400000; ~5 s on 2 ranks at --batch-bytes 8192).
make_corpus() { # [RECORDS]
  local n=${1:-400000}
  IN=$TMP/in
  "$BIN" synth --out "$IN/gz" --records $((n / 2)) --dup-rate 0.3 --files 3 --compress gz \
    --seed 11 >/dev/null
  "$BIN" synth --out "$IN/zst" --records $((n * 3 / 10)) --dup-rate 0.3 --files 2 \
    --compress zst --seed 12 >/dev/null
  "$BIN" synth --out "$IN/plain" --records $((n / 5)) --dup-rate 0.3 --files 2 --compress none \
    --seed 13 >/dev/null
  UNIQUE=$("$PY" "$ORACLE" --input "$IN" --key-field id --stats |
    "$PY" -c 'import json,sys; print(json.load(sys.stdin)["unique_keys"])')
}

# Starts a job in the background: start_job TAG RANKS args... ; sets JOB
# (the mpiexec pid) and writes $TMP/TAG.log. Ranks run as $MARK/bs-TAG.
start_job() {
  local tag=$1 ranks=$2
  shift 2
  ln -sf "$BIN" "$MARK/bs-$tag"
  "$MPIEXEC" "$NP_FLAG" "$ranks" --oversubscribe ${MPI_EXTRA:-} "$MARK/bs-$tag" dedup "$@" \
    >"$TMP/$tag.log" 2>&1 &
  JOB=$!
}
# Runs a job to its end with a deadline: run_job TAG RANKS LIMIT args...;
# sets RC. A job past its deadline is killed and fails the test.
run_job() {
  local tag=$1 ranks=$2 limit=$3
  shift 3
  start_job "$tag" "$ranks" "$@"
  wait_job "$JOB" "$limit" "$tag"
}
wait_job() { # PID LIMIT TAG ; sets RC
  local pid=$1 limit=$2 tag=$3 t0=$SECONDS
  while kill -0 "$pid" 2>/dev/null; do
    ((SECONDS - t0 < limit)) || {
      kill_ours
      fail "job $tag did not end within $limit s (a hang)"
    }
    sleep 0.05
  done
  RC=0
  wait "$pid" 2>/dev/null || RC=$?
}
# Pids of the ranks of job TAG (its marker, children of mpiexec).
rank_pids() { pgrep -f -- "^$MARK/bs-$1 " || true; }
# True while a process lives (a zombie counts as gone).
alive_pid() { [[ -r /proc/$1/stat ]] && ! grep -q '^[0-9]* ([^)]*) Z' "/proc/$1/stat" 2>/dev/null; }
any_alive() { local p; for p in "$@"; do alive_pid "$p" && return 0; done; return 1; }

# Waits up to LIMIT s until COMMAND succeeds; fails the test otherwise.
wait_until() { # LIMIT WHAT COMMAND...
  local limit=$1 what=$2 t0=$SECONDS
  shift 2
  until "$@"; do
    ((SECONDS - t0 < limit)) || fail "timed out after $limit s waiting for $what"
    sleep 0.02
  done
}
committed() { [[ -f $1/LATEST ]]; }
ckpt_tmp_exists() { compgen -G "$1/ckpt-*.h5.tmp" >/dev/null; }

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
detect() { # SCENARIO SECONDS BOUND
  echo "DETECT $1 $2"
  awk -v s="$2" -v b="$3" 'BEGIN { exit !(s <= b) }' ||
    fail "$1: detected after $2 s, more than the bound of $3 s"
}

# Exactly once: the oracle, then every compressed output stream tested whole.
check_outputs() { # OUT
  "$PY" "$ORACLE" --input "$IN" --output "$1" --key-field id --expect-unique "$UNIQUE" \
    >"$TMP/oracle.out" 2>&1 || { cat "$TMP/oracle.out" >&2; fail "oracle rejected $1"; }
  local f
  while IFS= read -r -d '' f; do
    gzip -t "$f" || fail "corrupt gzip stream $f"
  done < <(find "$1" -name '*.gz' -print0)
  while IFS= read -r -d '' f; do
    zstd -q -t "$f" || fail "corrupt zstd stream $f"
  done < <(find "$1" -name '*.zst' -print0)
}

# A small real ext4 file system on a loop device at DIR (root only); exits
# 77 (ctest: skipped) where loop devices cannot be used.
mount_small_fs() { # DIR MIB
  local img=$TMP/$(basename "$1").img
  truncate -s "$2M" "$img"
  mkfs.ext4 -q -F "$img" >/dev/null 2>&1 || { log "mkfs.ext4 failed: skipped"; exit 77; }
  mkdir -p "$1"
  mount -o loop "$img" "$1" 2>/dev/null || { log "cannot loop-mount (not root?): skipped"; exit 77; }
  MOUNTS+=("$1")
}
# Leaves MIB free on the file system at DIR (a filler file, DIR/_filler).
leave_room() { # DIR MIB
  local avail_kib
  avail_kib=$(df --output=avail -k "$1" | tail -1 | tr -d ' ')
  fallocate -l $(((avail_kib / 1024 - $2) * 1024 * 1024)) "$1/_filler" ||
    fail "cannot make the filler"
}
# Runs the job TAG on RANKS ranks with ARGS (writing under OUT) to its
# end and checks that the full disk ended it within 30 s (DETECT SCENARIO),
# non-zero, no rank killed by a signal, with a message naming a rank, its
# host, a file under OUT and "No space left on device"; WHY says what an
# exit 0 would mean.
expect_disk_full() { # TAG RANKS SCENARIO WHY ARGS...
  local tag=$1 ranks=$2 scenario=$3 why=$4 t0 t1
  shift 4
  t0=$(now)
  run_job "$tag" "$ranks" 60 "$@"
  t1=$(now)
  ((RC != 0)) || fail "the job exited 0 with $why"
  ((RC < 128)) || fail "the job ended by a signal (exit $RC): a rank crashed on ENOSPC"
  grep -Eq "rank [0-9]+ (of [0-9]+ )?on [^ :]+: .*No space left on device" "$TMP/$tag.log" ||
    fail "no message naming the rank, its host and 'No space left on device'"
  grep -q "$OUT/" "$TMP/$tag.log" || fail "the message does not name the output file"
  detect "$scenario" "$(elapsed "$t0" "$t1")" 30
  log "ended $(elapsed "$t0" "$t1") s after the start (exit $RC):" \
    "$(grep -m1 'No space left' "$TMP/$tag.log" | cut -c1-220)"
}
# Fills the file system holding DIR to the last block.
fill_fs() { # DIR
  dd if=/dev/zero of="$1/_filler" bs=1M status=none 2>/dev/null || true
  dd if=/dev/zero of="$1/_filler2" bs=4k status=none 2>/dev/null || true
  sync -f "$1" 2>/dev/null || true
}
