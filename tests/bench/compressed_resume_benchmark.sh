#!/usr/bin/env bash
# Compressed resume benchmark. Not a ctest test.
# One synthetic JSONL corpus in one multi-frame .zst (pzstd -1, ~1 GB
# decompressed by default), deduplicated on 2 ranks with --state and killed
# (SIGKILL of the ranks) once a checkpoint covers 70% of its bytes; then,
# from copies of that same cut, resumed to the end, alternately, --repeat
# times each:
#   no-frame  AFTER on a copy of the cut whose manifest has the frame fields
#             blanked (same length, checksum recomputed): it decompresses
#             from byte 0 to the cursor, as a reader without saved frame starts does;
#   after     AFTER on the cut as written: starts at the saved frame;
#   before    (with --before BIN) an older build on the cut as written: it
#             ignores the frame fields, which also shows it resumes exactly.
# Prints each resume's wall seconds (process start to the end of the job,
# which writes one checkpoint at the end) and the medians, and checks that
# every resume's output decompresses to the same bytes.
# usage: tests/bench/compressed_resume_benchmark.sh --after BIN [--before BIN]
#          [--records 6000000] [--repeat 5] [--dir DIR] [--ranks 2]
# Needs pzstd and zstd (package zstd), Open MPI, python3, and /usr/bin/python3
# with h5py and xxhash (python3-h5py, python3-xxhash).
set -euo pipefail

before="" after="" records=6000000 repeat=5 dir="${TMPDIR:-/tmp}/bloomshard-zresume-bench" ranks=2
die() { echo "compressed_resume_benchmark: $*" >&2; exit 2; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --before) before=$(readlink -f "$2"); shift 2 ;;
    --after) after=$(readlink -f "$2"); shift 2 ;;
    --records) records=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --ranks) ranks=$2; shift 2 ;;
    -h | --help) sed -n '2,22p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option: $1" ;;
  esac
done
[[ -x $after ]] || die "need an --after binary"
[[ -z $before || -x $before ]] || die "--before is not executable"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
mkdir -p "$dir"
dir=$(readlink -f "$dir")
marker_dir=$dir/bin
mkdir -p "$marker_dir"
kill_marker() { local pids=(); mapfile -t pids < <(pgrep -f -- "$1" || true)
  ((${#pids[@]} == 0)) || kill -KILL "${pids[@]}" 2>/dev/null || true; }
trap 'kill_marker "$marker_dir/bs-"' EXIT

# The corpus, made once and cached.
in=$dir/in-$records
if [[ ! -f $in/corpus.jsonl.zst ]]; then
  rm -rf "$dir/plain" "$in"
  "$after" synth --records "$records" --dup-rate 0.3 --files 1 --out "$dir/plain" >/dev/null
  mkdir -p "$in"
  pzstd -q -1 -p 2 -c "$dir"/plain/part-*.jsonl >"$in/corpus.jsonl.zst"
  rm -rf "$dir/plain"
fi
total=$(zstd -dc "$in/corpus.jsonl.zst" | wc -c)
frames=$(zstd -lv "$in/corpus.jsonl.zst" 2>/dev/null | sed -n 's/^# Zstandard Frames: *//p')
echo "corpus: $(stat -c %s "$in/corpus.jsonl.zst") compressed bytes, $total decompressed, ${frames:-?} frames"

args=(--input "$in" --output "$dir/out" --state "$dir/state")
# The cut: checkpoints every second, killed at the first one past 70%.
rm -rf "$dir/out" "$dir/state" "$dir/cut"
ln -sf "$after" "$marker_dir/bs-cut"
mpiexec -n "$ranks" "$marker_dir/bs-cut" dedup "${args[@]}" --checkpoint-every 1 >"$dir/cut.log" 2>&1 &
job=$!
done_bytes=0
while kill -0 $job 2>/dev/null && ((done_bytes * 10 < total * 7)); do
  sleep 0.2
  done_bytes=$("$after" info --json --state "$dir/state" 2>/dev/null |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["inputs"][0]["bytes_done"])' \
      2>/dev/null || echo 0)
done
kill_marker "$marker_dir/bs-cut"
wait $job 2>/dev/null || true
((done_bytes * 10 >= total * 7)) || die "the run ended before 70% (see $dir/cut.log)"
"$after" info --json --state "$dir/state" >"$dir/cut-info.json"
echo "cut at $done_bytes of $total decompressed bytes: $(python3 -c '
import json, sys
i = json.load(open(sys.argv[1]))["inputs"][0]
print("records", i["records_done"], "frame start", i.get("resume_compressed_offset"),
      "/", i.get("resume_decompressed_offset"))' "$dir/cut-info.json")"
mkdir -p "$dir/cut" "$dir/cut-no-frame"
cp -a "$dir/out" "$dir/state" "$dir/cut/"
cp -a "$dir/out" "$dir/state" "$dir/cut-no-frame/"
# Blank the frame fields of the newest generation's manifest in place.
/usr/bin/python3 - "$dir/cut-no-frame/state" <<'EOF' || die "cannot blank the frame fields"
import os, re, sys
import h5py, xxhash
state = sys.argv[1]
with open(os.path.join(state, "LATEST")) as f:
    name = f.read().strip()
path = os.path.join(state, "ckpt-" + name + ".h5")  # LATEST holds the generation
with h5py.File(path, "r+") as h:
    d = h["manifest_json"]
    text = d[()]
    blank = re.sub(rb',"frame_compressed_offset":\d+,"frame_decompressed_offset":\d+',
                   lambda m: b" " * len(m.group(0)), text)
    if blank == text:
        sys.exit("no frame fields in " + path)
    d[()] = blank
    d.attrs["checksum"] = xxhash.xxh3_64_intdigest(blank)
EOF

variants=(no-frame after)
[[ -n $before ]] && variants+=(before)
declare -A secs=()
for ((i = 1; i <= repeat; i++)); do
  for which in "${variants[@]}"; do
    bin=$after cut=$dir/cut
    [[ $which == before ]] && bin=$before
    [[ $which == no-frame ]] && cut=$dir/cut-no-frame
    rm -rf "$dir/out" "$dir/state"
    cp -a "$cut/out" "$cut/state" "$dir/"
    t0=$(date +%s.%N)
    mpiexec -n "$ranks" "$bin" dedup "${args[@]}" >"$dir/resume-$which-$i.log" 2>&1 ||
      die "resume ($which, $i) failed: see $dir/resume-$which-$i.log"
    t1=$(date +%s.%N)
    s=$(python3 -c "print(f'{$t1 - $t0:.2f}')")
    secs[$which]+="$s "
    sum=$(zstd -dc "$dir/out/corpus.jsonl.zst" | md5sum | cut -d' ' -f1)
    [[ -z ${want:-} ]] && want=$sum
    [[ $sum == "$want" ]] || die "resume ($which, $i) wrote other output bytes"
    echo "resume $i $which: $s s (load $(cut -d' ' -f1 /proc/loadavg))"
  done
done
median() { tr ' ' '\n' <<<"$1" | sed '/^$/d' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for which in "${variants[@]}"; do
  echo "$which: ${secs[$which]}-> median $(median "${secs[$which]}") s"
done
echo "every resume's output decompresses to the same bytes ($want)"
