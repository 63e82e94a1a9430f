#!/usr/bin/env bash
# --gzip-level and --zstd-level reach the outputs: on a synth corpus of .gz
# and .zst inputs, level 1 writes other bytes than the default and a high
# level fewer, while every level's outputs
# decompress to the same records; --defer-compression off compresses in
# the rounds what auto leaves to the end pass, to the same bytes; a level
# out of its codec's range, or another --defer-compression, is refused before any work
# (exit 2, naming the option and the value, no output dir made).
# usage: output_levels.sh BIN [--mpiexec M] [--np-flag F] [--python P]
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse output_levels.sh "BIN" "$@"
harness_tmp output-levels "output_levels"

"$BIN" synth --records 60000 --dup-rate 0.3 --files 2 --compress gz --out "$TMP/in/gz" >/dev/null
"$BIN" synth --records 60000 --dup-rate 0.3 --files 2 --compress zst --seed 2 --out "$TMP/in/zst" \
  >/dev/null
compgen -G "$TMP/in/gz/*.gz" >/dev/null || fail "synth wrote no .gz input"

bytes() { cat "$TMP/out-$1"/"$2"/*."$2" | wc -c; }
records() { # the sorted records of one run's outputs of codec $2
  if [[ $2 == gz ]]; then zcat "$TMP/out-$1"/gz/*.gz; else zstdcat "$TMP/out-$1"/zst/*.zst; fi | sort
}
for run in default low high off; do
  args=(--input "$TMP/in" --key-field id --output "$TMP/out-$run" --progress 0
    --metrics "$TMP/$run.json")
  case $run in
    low) args+=(--gzip-level 1 --zstd-level 1) ;;
    high) args+=(--gzip-level 12 --zstd-level 19) ;;
    off) args+=(--defer-compression off) ;;
  esac
  "$MPIEXEC" "$NP_FLAG" 2 "$BIN" dedup "${args[@]}" >"$TMP/$run.log" 2>&1 ||
    { cat "$TMP/$run.log"; fail "$run: dedup failed"; }
done
for codec in gz zst; do
  d=$(bytes default $codec) l=$(bytes low $codec) h=$(bytes high $codec)
  log "$codec: level 1 $l bytes, default $d, high $h"
  # zstd's level 1 is not always larger than its level 3 on small blocks:
  # the option must reach the writer (other bytes), and the high level win.
  ((l != d)) || fail "$codec: level 1 wrote the default's $d bytes"
  ((h < d)) || fail "$codec: the high level ($h bytes) is not smaller than the default ($d)"
  records default $codec >"$TMP/default.$codec"
  [[ -s $TMP/default.$codec ]] || fail "$codec: no records in the default run's outputs"
  for run in low high; do
    records $run $codec | cmp -s - "$TMP/default.$codec" ||
      fail "$codec: level $run changed the records written"
  done
done

# --defer-compression: by default (auto) the 2-rank first-copy run wrote its
# .gz/.zst outputs stored and its end pass compressed each once at the
# level; off compressed them in the rounds: the same bytes either way.
deferred() {
  "$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["end_pass_compressed_outputs"])' "$1"
}
inputs=$(find "$TMP/in" \( -name '*.gz' -o -name '*.zst' \) | wc -l)
[[ $(deferred "$TMP/default.json") == "$inputs" ]] ||
  fail "auto: the end pass compressed $(deferred "$TMP/default.json") stored outputs, not $inputs"
[[ $(deferred "$TMP/off.json") == 0 ]] ||
  fail "--defer-compression off: outputs were deferred all the same"
diff -r "$TMP/out-default" "$TMP/out-off" -x _rejects -x '_bloomshard*' >/dev/null ||
  fail "--defer-compression off wrote other bytes than auto"
log "--defer-compression: auto compressed $inputs stored outputs at the end pass, off none, same bytes"

for bad in "--gzip-level 13" "--zstd-level 23" "--gzip-level -1" "--defer-compression never"; do
  # shellcheck disable=SC2086
  rc=0
  "$BIN" dedup --input "$TMP/in" --key-field id --output "$TMP/out-bad" $bad >"$TMP/bad.log" 2>&1 ||
    rc=$?
  [[ $rc == 2 ]] || fail "$bad: exit $rc, want 2 ($(cat "$TMP/bad.log"))"
  grep -qF -- "${bad% *} must be" "$TMP/bad.log" || fail "$bad: the message names no option: $(cat "$TMP/bad.log")"
  [[ ! -e $TMP/out-bad ]] || fail "$bad: the refused run made its output dir"
done
log "ok in $SECONDS s"
