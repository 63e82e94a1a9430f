#!/usr/bin/env bash
# End-to-end cases of `bloomshard dedup`: build a corpus (synthetic or hand
# made), run the real binary under mpiexec, then check the outputs with
# oracle.py and the metrics JSON against the known truth.
#
# usage: run_dedup_case.sh --case NAME --ranks N --bin BLOOMSHARD --oracle ORACLE_PY
#                          [--mpiexec MPIEXEC] [--np-flag -n] [--python PYTHON3]
# cases: mixed   mixed-compression JSONL (none/gz/zst, nested dirs) at N ranks
#        keyset  kept key set at 1 rank equals that at N ranks (N with a small
#                --capacity, --slices and --batch-bytes: growth and many rounds; and a
#                loose --fpr 0.3, so false positives happen and must cost no
#                record); a rerun into the used output dir exits 4, and with
#                --overwrite succeeds
#        special empty, CJK, emoji, NUL-containing and integer keys, NFC vs NFD
#                and case variants under --normalize none / nfc / nfc-casefold
#        rejects bad lines under --max-reject-fraction (exit 0, all in the
#                reject files) and over it (exit 3)
#        lines   plain-line files (.txt): CRLF, last line without newline
#        skip    two truncated .gz among healthy files: --on-input-error fail exits 1
#                checkpointed; over --max-skipped-inputs exits 3; skip completes with
#                exactly once for everything readable, the skips reported
#        changes accepted changes of an unfinished run (1 rank): an input removed or
#                changed before it was started, a damaged one replaced (--revalidate-inputs);
#                a changed started input is refused
#        versions nfc-casefold/v2 merges U+1FB3 U+0304 with its NFD, v1 does not;
#                a v1 state keeps v1 rules (named by info), a pinned v2 is refused
#        synth   the generator alone: determinism, manifest = oracle --stats
#        keyscheme composite keys ((ab,c) != (a,bc)), --missing-field, --text-normalize
#                ws/ws-lower (CRLF, tabs, NBSP, U+3000, ...) and --key-digest against the
#                oracle; digest keys keep the records full keys keep with 16/32 tier-2
#                bytes per key; a state refuses another --key-digest
# Set KEEP_TMP=1 to keep the temp dir for a post-mortem.
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse run_dedup_case.sh "--case=CASE* --ranks=RANKS:1 --bin=BIN* --oracle=ORACLE*" "$@"
[[ -f $ORACLE ]] || harness_usage "no oracle at $ORACLE"
harness_tmp "e2e-$CASE-$RANKS" "$CASE, $RANKS ranks"
IN=$TMP/in
META=$TMP/meta # manifests live outside the input: the job reads every file under IN
mkdir -p "$IN" "$META"

synth() { # NAME synth-options...: corpus into IN/NAME, manifest META/NAME.json
  local name=$1
  shift
  "$BIN" synth --out "$IN/$name" --manifest "$META/${name//\//_}.json" "$@" >/dev/null
  # A binary that writes nothing must fail here, not later in an expansion
  # that aborts the case quietly.
  compgen -G "$IN/$name/*" >/dev/null || fail "synth wrote no input into $IN/$name"
}

manifest_sum() { # FIELD: sum of FIELD over all manifests
  "$PY" -c 'import glob,json,sys; print(sum(json.load(open(p))[sys.argv[1]]
    for p in glob.glob(sys.argv[2] + "/*.json")))' "$1" "$META"
}

# dedup OUT RANKS options...: runs the job; its exit code in JOB_RC.
dedup() {
  local out=$1 ranks=$2
  shift 2
  local start=$SECONDS
  set +e
  "$MPIEXEC" "$NP_FLAG" "$ranks" --oversubscribe "$BIN" dedup --input "$IN" --output "$out" \
    --metrics "$out/metrics.json" "$@" >"$out.log" 2>&1
  JOB_RC=$?
  set -e
  log "dedup on $ranks ranks -> exit $JOB_RC in $((SECONDS - start)) s"
}

dedup_ok() { # like dedup, and the job must succeed
  dedup "$@"
  [[ $JOB_RC == 0 ]] || { cat "$1.log" >&2; fail "dedup exited $JOB_RC (want 0)"; }
}

oracle() { # oracle.py options... (must pass)
  "$PY" "$ORACLE" --input "$IN" "$@" || fail "oracle rejected the outputs (see above)"
}

# check_metrics FILE key=value|key>value...: the named counters, plus the invariants
# kept + duplicates + rejected == records and
# tier2_lookups == duplicates - batch_duplicates + false_positives (the later
# copies of a key inside one rank's batch never reach tier 2).
check_metrics() {
  "$PY" - "$@" <<'EOF' || fail "metrics check failed"
import json, sys
path, *pairs = sys.argv[1:]
with open(path) as f:
    top = json.load(f)
flat = {k: v for k, v in top.items() if not isinstance(v, dict)}
def walk(d):  # a counter nested in a section counts too; top level wins
    for k, v in d.items():
        if isinstance(v, dict):
            walk(v)
        else:
            flat.setdefault(k, v)
walk(top)
need = ["records", "kept", "duplicates", "batch_duplicates", "rejected", "tier1_maybe",
        "tier2_lookups", "false_positives", "subrounds", "rounds", "wall_seconds", "max_rss_bytes"]
problems = [f"field {k} missing" for k in need if k not in flat]
for pair in pairs:
    if ">" in pair:
        k, v = pair.split(">")
        if not flat.get(k, 0) > int(v):
            problems.append(f"{k} = {flat.get(k)}, expected > {v}")
        continue
    k, v = pair.split("=")
    if flat.get(k) != int(v):
        problems.append(f"{k} = {flat.get(k)}, expected {v}")
if not problems:
    if flat["kept"] + flat["duplicates"] + flat["rejected"] != flat["records"]:
        problems.append("kept + duplicates + rejected != records")
    routed_dups = flat["duplicates"] - flat["batch_duplicates"]
    if flat["tier2_lookups"] != routed_dups + flat["false_positives"]:
        problems.append(f"tier2_lookups {flat['tier2_lookups']} != duplicates "
                        f"{flat['duplicates']} - batch_duplicates {flat['batch_duplicates']} "
                        f"+ false_positives {flat['false_positives']}")
    if flat["subrounds"] < flat["rounds"]:
        problems.append(f"subrounds {flat['subrounds']} < rounds {flat['rounds']}")
    # The kernel's share of each phase: never negative, and within the
    # phase up to the tick-sampled split's noise (4 ms ticks, scaled).
    wall, system = top.get("phase_seconds", {}), top.get("phase_system_seconds", {})
    for phase in ("read", "route", "decide", "write"):
        if phase not in system:
            problems.append(f"phase_system_seconds.{phase} missing")
        elif not 0 <= system[phase] <= 1.25 * wall[phase] + 0.05:
            problems.append(f"phase_system_seconds.{phase} {system[phase]} outside "
                            f"[0, phase_seconds.{phase} {wall[phase]}]")
        # Each rank's phases: one per rank, and their maximum is the phase.
        by_rank = top.get("phase_seconds_by_rank", {}).get(phase)
        if not isinstance(by_rank, list) or len(by_rank) != top.get("ranks"):
            problems.append(f"phase_seconds_by_rank.{phase} {by_rank!r}: not one per rank "
                            f"({top.get('ranks')} ranks)")
        elif min(by_rank) < 0 or abs(max(by_rank) - wall[phase]) > 1e-6:
            problems.append(f"phase_seconds_by_rank.{phase} {by_rank}: negative, or its "
                            f"maximum is not phase_seconds.{phase} {wall[phase]}")
if problems:
    print(f"metrics {path}: " + "; ".join(problems), file=sys.stderr)
    sys.exit(1)
print("metrics ok: " + ", ".join(f"{k}={flat[k]}" for k in need))
EOF
}

mixed_corpus() {
  synth plain --records 20000 --dup-rate 0.3 --files 6 --compress none --seed 101
  synth gz --records 15000 --dup-rate 0.2 --files 5 --compress gz --seed 102
  synth zst --records 12000 --dup-rate 0.45 --files 4 --compress zst --seed 103
  synth gz/deeper --records 3000 --dup-rate 0.6 --files 2 --compress gz --seed 104
}

case_mixed() {
  mixed_corpus
  local records unique dups
  records=$(manifest_sum records)
  unique=$(manifest_sum unique_keys)
  dups=$(manifest_sum duplicates)
  log "corpus: $records records, $unique unique keys, $dups duplicates"
  dedup_ok "$TMP/out" "$RANKS" --key-field id --batch-bytes 262144
  oracle --output "$TMP/out" --expect-unique "$unique" --rejects-expected 0
  check_metrics "$TMP/out/metrics.json" "records=$records" "kept=$unique" \
    "duplicates=$dups" "rejected=0"
}

case_keyset() {
  mixed_corpus
  local unique
  unique=$(manifest_sum unique_keys)
  dedup_ok "$TMP/out1" 1 --key-field id
  dedup_ok "$TMP/outN" "$RANKS" --key-field id --capacity 4000 --batch-bytes 65536 --fpr 0.3 --slices 16
  oracle --output "$TMP/out1" --expect-unique "$unique" --rejects-expected 0
  oracle --output "$TMP/outN" --expect-unique "$unique" --rejects-expected 0 \
    --compare-keys "$TMP/out1"
  check_metrics "$TMP/outN/metrics.json" "kept=$unique" "false_positives>0"

  # A second run into a used output dir: refused with 4, unless --overwrite.
  dedup "$TMP/out1" 1 --key-field id
  [[ $JOB_RC == 4 ]] || { cat "$TMP/out1.log" >&2; fail "rerun into a used output dir: exit $JOB_RC, want 4"; }
  dedup_ok "$TMP/out1" "$RANKS" --key-field id --overwrite
  oracle --output "$TMP/out1" --expect-unique "$unique" --compare-keys "$TMP/outN"
}

case_special() {
  # Keys: "", CJK, emoji, NUL inside, integer 42 and string "42" (one key),
  # Café in NFC and NFD (one key under nfc), Straße / STRASSE (one key under
  # nfc-casefold); repeats inside and across files, some with other fields.
  "$PY" - "$IN" <<'EOF'
import gzip, json, os, sys, unicodedata
root = sys.argv[1]
nfc = unicodedata.normalize("NFC", "Caf\u00e9")
nfd = unicodedata.normalize("NFD", "Caf\u00e9")
assert nfc != nfd
def line(key, **extra):
    return (json.dumps(dict(id=key, **extra), ensure_ascii=False) + "\n").encode()
a = [line(""), line("\u65e5\u672c\u8a9e\u306e\u30ad\u30fc"), line("\U0001f642\U0001f680"),
     line(nfc), line("a\u0000b"), line(42), line("Stra\u00dfe"), line("", v=2),
     line("plain-1"), line(nfd, v=1)]
b = [line("\U0001f642\U0001f680", v=3), line(nfd), line("42"), line("STRASSE"),
     line("\u65e5\u672c\u8a9e\u306e\u30ad\u30fc", text="\u518d\u30af\u30ed\u30fc\u30eb"),
     line("plain-2"), line("a\u0000b")]
with open(os.path.join(root, "special.jsonl"), "wb") as f:
    f.write(b"".join(a))
os.makedirs(os.path.join(root, "more"))
with gzip.open(os.path.join(root, "more", "special2.jsonl.gz"), "wb") as f:
    f.write(b"".join(b))
EOF
  # distinct keys: "", CJK, emoji, NFC, NUL, 42, Straße, plain-1, NFD, STRASSE, plain-2
  local policy want
  for policy in none nfc nfc-casefold; do
    case $policy in none) want=11 ;; nfc) want=10 ;; nfc-casefold) want=9 ;; esac
    dedup_ok "$TMP/out-$policy" "$RANKS" --key-field id --normalize "$policy"
    oracle --output "$TMP/out-$policy" --normalize "$policy" --expect-unique "$want" \
      --rejects-expected 0
    check_metrics "$TMP/out-$policy/metrics.json" records=17 "kept=$want" rejected=0
  done
}

bad_lines() { # FILE: 10 bad lines and 3 good ones with fresh keys
  cat >"$1" <<'EOF'
{"id": "bad-1"
not json at all
{"text": "no id field"}
{"id": {"nested": "object"}}
{"id": true}
{"id": 1.5}
{"id": null}
[1, 2, 3]
   
{"id": "x"} trailing garbage
{"id": "good-extra-1", "text": "fine"}
{"id": "good-extra-2"}
{"id": "good-extra-3", "id": "first member wins"}
EOF
}

case_rejects() {
  synth good --records 3000 --dup-rate 0.25 --files 3 --compress gz --seed 201
  mkdir -p "$IN/bad"
  bad_lines "$IN/bad/bad.jsonl"
  local records unique
  records=$(($(manifest_sum records) + 13))
  unique=$(($(manifest_sum unique_keys) + 3))
  dedup_ok "$TMP/out" "$RANKS" --key-field id --max-reject-fraction 0.01
  oracle --output "$TMP/out" --expect-unique "$unique" --rejects-expected 10
  check_metrics "$TMP/out/metrics.json" "records=$records" "kept=$unique" rejected=10

  # 10 rejects in 213 records (4.7 %) is over 1 %: the job must fail with 3.
  rm -rf "$IN/good"
  synth good --records 200 --dup-rate 0.1 --files 2 --seed 202
  dedup "$TMP/out-over" "$RANKS" --key-field id --max-reject-fraction 0.01
  [[ $JOB_RC == 3 ]] || { cat "$TMP/out-over.log" >&2; fail "over the reject fraction: exit $JOB_RC, want 3"; }
}

case_lines() {
  synth gen --records 8000 --dup-rate 0.3 --files 4 --format lines --compress zst --seed 301
  mkdir -p "$IN/hand"
  # CRLF with repeats, an empty line (the valid empty key), a trailing
  # space that makes another key; the last line has no newline.
  printf 'alpha\r\nbeta\r\nalpha\r\n\r\ngamma \r\ngamma\r\nbeta\r\ndelta' >"$IN/hand/crlf.txt"
  printf 'beta\nepsilon\n\nzeta\nepsilon\nlast-no-newline' | gzip -c >"$IN/hand/lf.txt.gz"
  # crlf: alpha beta "" "gamma " gamma delta; lf adds epsilon zeta last-no-newline
  local records unique
  records=$(($(manifest_sum records) + 8 + 6))
  unique=$(($(manifest_sum unique_keys) + 9))
  dedup_ok "$TMP/out" "$RANKS"
  oracle --output "$TMP/out" --expect-unique "$unique" --rejects-expected 0
  check_metrics "$TMP/out/metrics.json" "records=$records" "kept=$unique" rejected=0
}

case_synth() {
  local c
  for c in none gz zst; do
    "$BIN" synth --out "$TMP/a-$c" --records 5000 --dup-rate 0.3 --files 5 --compress "$c" --seed 7 >/dev/null
    "$BIN" synth --out "$TMP/b-$c" --records 5000 --dup-rate 0.3 --files 5 --compress "$c" --seed 7 >/dev/null
    diff -r "$TMP/a-$c" "$TMP/b-$c" >/dev/null || fail "synth --compress $c is not deterministic"
    "$PY" - "$TMP/a-$c" "$ORACLE" <<'EOF' || fail "synth --compress $c: manifest disagrees with the corpus"
import json, os, subprocess, sys
root, oracle = sys.argv[1:]
manifest = json.load(open(os.path.join(root, "_SYNTH.json")))
stats = json.loads(subprocess.run([sys.executable, oracle, "--input", root, "--stats"],
                                  check=True, capture_output=True, text=True).stdout)
want = {"files": manifest["files"], "records": manifest["records"], "rejected": 0,
        "unique_keys": manifest["unique_keys"]}
if stats != want or manifest["duplicates"] != manifest["records"] - manifest["unique_keys"] \
        or manifest["duplicates"] != round(5000 * 0.3):
    print(f"manifest {manifest} vs corpus {stats}", file=sys.stderr)
    sys.exit(1)
EOF
  done
  "$BIN" synth --out "$TMP/c" --records 5000 --dup-rate 0.3 --files 5 --seed 8 >/dev/null
  if diff -r -x _SYNTH.json "$TMP/b-none" "$TMP/c" >/dev/null 2>&1; then fail "seeds 7 and 8 gave the same corpus"; fi
  set +e
  "$BIN" synth --out "$TMP/d" --records 10 --dup-rate 1.0 >/dev/null 2>&1
  local rc=$?
  set -e
  [[ $rc == 2 ]] || fail "synth --dup-rate 1.0: exit $rc, want 2"
  log "synth deterministic per seed; manifests match the corpora"
}

start=$SECONDS
case_incremental() {
  # Yesterday's corpus with --state, then today's crawl (new records plus a
  # re-crawled file of yesterday's) against the finished state: today's
  # output holds exactly the keys never seen before. The history's state is
  # written through collective MPI-IO, today's through the default (direct)
  # path: either reads the other's files.
  synth hist --records 20000 --dup-rate 0.2 --files 3 --compress zst --seed 11
  local today=$TMP/today
  mkdir -p "$today"
  "$BIN" synth --out "$today/new" --manifest "$META/today.json" --records 10000 --dup-rate 0.2 \
    --files 2 --compress gz --seed 12 >/dev/null
  cp "$IN/hist/part-00000.jsonl.zst" "$today/recrawl.jsonl.zst"
  dedup_ok "$TMP/out-hist" 1 --key-field id --state "$TMP/state" --checkpoint-io mpiio
  local start=$SECONDS
  set +e
  "$MPIEXEC" "$NP_FLAG" "$RANKS" --oversubscribe "$BIN" dedup --input "$today" \
    --output "$TMP/out-today" --key-field id --state "$TMP/state" \
    --metrics "$TMP/out-today/metrics.json" >"$TMP/out-today.log" 2>&1
  JOB_RC=$?
  set -e
  log "incremental dedup on $RANKS ranks -> exit $JOB_RC in $((SECONDS - start)) s"
  [[ $JOB_RC == 0 ]] || { cat "$TMP/out-today.log" >&2; fail "incremental run exited $JOB_RC"; }
  grep -q "incremental run" "$TMP/out-today.log" || fail "the second run did not load the state"
  local new_unique
  new_unique=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["unique_keys"])' \
    "$META/today.json")
  check_metrics "$TMP/out-today/metrics.json" "kept=$new_unique"
  "$PY" - "$IN/hist" "$today" "$TMP/out-hist" "$TMP/out-today" <<'PYEOF' ||
import json, os, subprocess, sys
def keys(root):
    out = []
    for d, _, names in os.walk(root):
        for n in names:
            if n.startswith(("_", ".")) or not ".jsonl" in n:
                continue
            p = os.path.join(d, n)
            if n.endswith(".zst"):
                data = subprocess.run(["zstd", "-dcq", p], check=True, capture_output=True).stdout
            elif n.endswith(".gz"):
                import gzip
                data = gzip.open(p).read()
            else:
                data = open(p, "rb").read()
            out += [json.loads(l)["id"] for l in data.splitlines() if l.strip()]
    return out
hist_in, today_in, hist_out, today_out = sys.argv[1:]
kh, kt = keys(hist_out), keys(today_out)
assert len(kt) == len(set(kt)), "a key twice in today's output"
assert not set(kh) & set(kt), "today's output repeats keys seen yesterday"
assert set(kh) | set(kt) == set(keys(hist_in)) | set(keys(today_in)), "a key was lost"
PYEOF
    fail "incremental outputs are not exactly the new keys"
  log "incremental: $new_unique new keys kept, yesterday's re-crawl dropped"
}

case_hotkey() {
  # One key ("id": "") is 55% of all records, spread over every file and so
  # over every rank; the rest repeat a little. A small --max-exchange-bytes
  # forces sub-rounds: the job must complete, exactly once, with the same
  # kept keys as a 1-rank run, the sub-rounds and combined copies counted.
  "$PY" - "$IN" <<'EOF'
import gzip, json, os, random, subprocess, sys
root = sys.argv[1]
rng = random.Random(12)
parts = [[] for _ in range(3)]
for i in range(60000):
    key = "" if rng.random() < 0.55 else f"doc-{rng.randrange(20000)}"
    parts[i % 3].append((json.dumps({"id": key, "n": i}) + "\n").encode())
open(os.path.join(root, "hot-0.jsonl"), "wb").write(b"".join(parts[0]))
with gzip.open(os.path.join(root, "hot-1.jsonl.gz"), "wb") as f:
    f.write(b"".join(parts[1]))
open(os.path.join(root, "hot-2.jsonl"), "wb").write(b"".join(parts[2]))
subprocess.run(["zstd", "-q", "--rm", os.path.join(root, "hot-2.jsonl")], check=True)
EOF
  dedup_ok "$TMP/out1" 1 --key-field id
  dedup_ok "$TMP/outN" "$RANKS" --key-field id --batch-bytes 65536 --max-exchange-bytes 4096
  oracle --output "$TMP/out1" --rejects-expected 0
  oracle --output "$TMP/outN" --rejects-expected 0 --compare-keys "$TMP/out1"
  check_metrics "$TMP/outN/metrics.json" "records=60000" "rejected=0" "batch_duplicates>30000"
  "$PY" - "$TMP/outN/metrics.json" <<'EOF' || fail "no sub-rounds counted"
import json, sys
m = json.load(open(sys.argv[1]))
assert m["subrounds"] > 2 * m["rounds"], (m["subrounds"], m["rounds"])
print(f"hot key: {m['rounds']} rounds in {m['subrounds']} sub-rounds, "
      f"{m['batch_duplicates']} copies combined before routing")
EOF
}

case_layers() {
  # A tiny --capacity and rounds far larger than a layer: every layer must
  # open before the sub-round that would overfill it (no layer ends above
  # its capacity, so the compound FPR bound holds), exactly once throughout.
  mixed_corpus
  local unique
  unique=$(manifest_sum unique_keys)
  dedup_ok "$TMP/out" "$RANKS" --key-field id --capacity 500 --batch-bytes 4194304 --fpr 0.01
  oracle --output "$TMP/out" --expect-unique "$unique" --rejects-expected 0
  check_metrics "$TMP/out/metrics.json" "kept=$unique"
  "$PY" - "$TMP/out/metrics.json" <<'EOF' || fail "a Bloom layer holds more keys than its capacity"
import json, sys
m = json.load(open(sys.argv[1]))
layers = m["filter"]["layer"]
assert len(layers) >= 3, f"only {len(layers)} layers for a tiny capacity"
for i, l in enumerate(layers):
    assert l["inserted"] <= l["capacity"], f"layer {i}: {l['inserted']} keys > capacity {l['capacity']}"
print("layers: " + ", ".join(f"{l['inserted']}/{l['capacity']}" for l in layers))
EOF
}

case_nodeexchange() {
  # The node-aware exchange (two steps: inside each node, then across nodes)
  # must give the same outputs, byte for byte, as the flat all-to-all at the
  # same rank count. Nodes of 2 consecutive ranks stand in for several
  # machines (BLOOMSHARD_RANKS_PER_NODE); small batches and a small exchange
  # budget make many rounds and sub-rounds.
  mixed_corpus
  local unique
  unique=$(manifest_sum unique_keys)
  dedup_ok "$TMP/flat" "$RANKS" --key-field id --batch-bytes 65536 --max-exchange-bytes 8192 \
    --exchange flat
  BLOOMSHARD_RANKS_PER_NODE=2 dedup_ok "$TMP/node" "$RANKS" --key-field id --batch-bytes 65536 \
    --max-exchange-bytes 8192 --exchange node
  grep -q "node-aware exchange: $((RANKS / 2)) nodes x 2 ranks" "$TMP/node.log" ||
    { cat "$TMP/node.log" >&2; fail "the node-aware exchange was not used"; }
  oracle --output "$TMP/node" --expect-unique "$unique" --rejects-expected 0
  diff -r -x metrics.json -x _rejects -x _bloomshard.lock "$TMP/flat" "$TMP/node" ||
    fail "node-aware outputs differ from the flat exchange's"
  log "node-aware exchange: outputs identical to the flat exchange's"
}

case_versions() {
  # U+1FB3 U+0304 and its NFD U+03B1 U+0304 U+0345: canonically equivalent.
  "$PY" - "$IN" <<'EOF'
import json, os, sys
with open(os.path.join(sys.argv[1], "greek.jsonl"), "w", encoding="utf-8") as f:
    for k in ["\u1fb3\u0304", "\u03b1\u0304\u0345", "\u1fbc\u0304", "plain"]:
        f.write(json.dumps({"id": k}, ensure_ascii=False) + "\n")
EOF
  # v2 (the default nfc-casefold): one key for the three spellings, + plain.
  dedup_ok "$TMP/out-v2" "$RANKS" --key-field id --normalize nfc-casefold
  oracle --output "$TMP/out-v2" --normalize nfc-casefold --expect-unique 2
  check_metrics "$TMP/out-v2/metrics.json" records=4 kept=2
  # v1, named: the old rules, three keys.
  dedup_ok "$TMP/out-v1" "$RANKS" --key-field id --normalize nfc-casefold/v1 --state "$TMP/state"
  oracle --output "$TMP/out-v1" --normalize nfc-casefold/v1 --expect-unique 3
  check_metrics "$TMP/out-v1/metrics.json" records=4 kept=3
  "$BIN" info --state "$TMP/state" | grep -q "nfc-casefold/v1" || fail "info does not name v1"
  # Today's crawl against the v1 state with the bare name: v1 rules kept.
  local today=$TMP/today
  mkdir -p "$today"
  "$PY" -c 'import json,sys; open(sys.argv[1],"w").write(json.dumps({"id":"\u03b1\u0304\u0345"})+"\n"+json.dumps({"id":"new"})+"\n")' "$today/t.jsonl"
  set +e
  "$MPIEXEC" "$NP_FLAG" "$RANKS" --oversubscribe "$BIN" dedup --input "$today" --output "$TMP/out-t" \
    --key-field id --normalize nfc-casefold --state "$TMP/state" --metrics "$TMP/out-t/metrics.json" \
    >"$TMP/out-t.log" 2>&1
  JOB_RC=$?
  set -e
  [[ $JOB_RC == 0 ]] || { cat "$TMP/out-t.log" >&2; fail "incremental on a v1 state: exit $JOB_RC"; }
  grep -q "saved with nfc-casefold/v1 rules; keeping them" "$TMP/out-t.log" || fail "no v1 note"
  check_metrics "$TMP/out-t/metrics.json" records=2 kept=1
  "$BIN" info --state "$TMP/state" | grep -q "nfc-casefold/v1" || fail "the state left v1"
  # A pinned v2 against the v1 state: refused, nothing mixed.
  mkdir -p "$today/2" && echo '{"id":"newer"}' >"$today/2/u.jsonl"
  set +e
  "$MPIEXEC" "$NP_FLAG" "$RANKS" --oversubscribe "$BIN" dedup --input "$today" --output "$TMP/out-u" \
    --key-field id --normalize nfc-casefold/v2 --state "$TMP/state" >"$TMP/out-u.log" 2>&1
  JOB_RC=$?
  set -e
  [[ $JOB_RC == 2 ]] || { cat "$TMP/out-u.log" >&2; fail "pinned v2 on a v1 state: exit $JOB_RC, want 2"; }
  grep -q "never mixes versions" "$TMP/out-u.log" || { cat "$TMP/out-u.log" >&2; fail "no mixing message"; }
  log "versions: v2 one key, v1 three; a v1 state kept v1; a pinned v2 refused"
}

skipped_count() { # METRICS: number of skipped_inputs
  "$PY" -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["skipped_inputs"]))' "$1"
}

case_skip() {
  # Healthy gz/zst/plain files and two .gz files cut short (one at 60 %, one
  # inside its gzip header region, i.e. nearly nothing readable).
  synth ok --records 12000 --dup-rate 0.3 --files 4 --compress gz --seed 401
  synth z --records 6000 --dup-rate 0.3 --files 2 --compress zst --seed 402
  synth bad --records 6000 --dup-rate 0.3 --files 2 --compress gz --seed 403
  local a=$IN/bad/part-00000.jsonl.gz b=$IN/bad/part-00001.jsonl.gz
  truncate -s $(($(stat -c %s "$a") * 6 / 10)) "$a"
  truncate -s 30 "$b"

  # 1. fail: exit 1, but checkpointed first.
  mkdir -p "$TMP/out"
  dedup "$TMP/out" "$RANKS" --key-field id --state "$TMP/state" --on-input-error fail \
    --batch-bytes 65536
  [[ $JOB_RC == 1 ]] || { cat "$TMP/out.log" >&2; fail "fail mode: exit $JOB_RC, want 1"; }
  grep -q "input error" "$TMP/out.log" || fail "fail mode: no input error reported"
  grep -q "checkpointed" "$TMP/out.log" || { cat "$TMP/out.log" >&2; fail "fail mode: no checkpoint"; }
  "$BIN" info --state "$TMP/state" | grep -q "generation" || fail "fail mode: no checkpoint in the state"

  # 2. Over --max-skipped-inputs (1 of 2 broken allowed): exit 3, checkpointed.
  dedup "$TMP/out" "$RANKS" --key-field id --state "$TMP/state" --max-skipped-inputs 1 \
    --batch-bytes 65536
  [[ $JOB_RC == 3 ]] || { cat "$TMP/out.log" >&2; fail "over the skip limit: exit $JOB_RC, want 3"; }
  grep -q "more broken inputs than --max-skipped-inputs 1" "$TMP/out.log" ||
    { cat "$TMP/out.log" >&2; fail "over the skip limit: no message"; }

  # 3. Resume with skip (the default) and room for both: completes; both
  # broken inputs are reported once, in metrics, summary and manifest.
  dedup_ok "$TMP/out" "$RANKS" --key-field id --state "$TMP/state" --batch-bytes 65536
  [[ $(skipped_count "$TMP/out/metrics.json") == 2 ]] || fail "metrics: skipped_inputs is not 2"
  grep -q "skipped 2 broken input(s)" "$TMP/out.log" || { cat "$TMP/out.log" >&2; fail "no skip summary"; }
  grep -q "bad/part-00000.jsonl.gz' from record" "$TMP/out.log" || fail "summary names no file"
  h5dump -d /manifest_json "$TMP/state/ckpt-$(cat "$TMP/state/LATEST").h5" |
    grep -o 'skipped.:' | wc -l | grep -qx 2 || fail "the manifest does not mark both inputs skipped"
  oracle --output "$TMP/out" --skipped-inputs "$TMP/out/metrics.json" --rejects-expected 0
  check_metrics "$TMP/out/metrics.json" rejected=0

  # 4. Again: the run is finished; nothing is read again.
  dedup_ok "$TMP/out" "$RANKS" --key-field id --state "$TMP/state"
  grep -q "already finished" "$TMP/out.log" || fail "a finished skip run was not recognized"

  # 5. Without --state, default options: one run, skips both, exactly once.
  dedup_ok "$TMP/out2" "$RANKS" --key-field id
  [[ $(skipped_count "$TMP/out2/metrics.json") == 2 ]] || fail "stateless: skipped_inputs is not 2"
  oracle --output "$TMP/out2" --skipped-inputs "$TMP/out2/metrics.json" --rejects-expected 0 \
    --compare-keys "$TMP/out"
  log "skip: 2 broken .gz skipped from the damage on, the rest exactly once"
}

case_changes() {
  # One rank reads in path order: a broken a.gz first stops a fail-mode run
  # (checkpointed) before b and c are started. Then: an unfinished started
  # input that changed is refused, also by --revalidate-inputs when the
  # records read from it are gone; replacing the damaged file with the good
  # one passes --revalidate-inputs; c removed and b changed (neither
  # started) are accepted changes; the resume completes, exactly once.
  synth a --records 3000 --dup-rate 0.2 --files 1 --compress gz --seed 501
  synth b --records 2000 --dup-rate 0.2 --files 1 --compress none --seed 502
  synth c --records 2000 --dup-rate 0.2 --files 1 --compress zst --seed 503
  local bad=$IN/a/part-00000.jsonl.gz
  cp -p "$bad" "$TMP/good.keep"
  truncate -s $(($(stat -c %s "$bad") / 2)) "$bad"
  dedup "$TMP/out" 1 --key-field id --state "$TMP/state" --on-input-error fail
  [[ $JOB_RC == 1 ]] || { cat "$TMP/out.log" >&2; fail "fail mode: exit $JOB_RC, want 1"; }

  truncate -s $(($(stat -c %s "$bad") - 2000)) "$bad"
  dedup "$TMP/out" 1 --key-field id --state "$TMP/state" --on-input-error fail
  [[ $JOB_RC == 2 ]] || { cat "$TMP/out.log" >&2; fail "changed started input: exit $JOB_RC, want 2"; }
  grep -q "changed after .* of its records were read" "$TMP/out.log" ||
    { cat "$TMP/out.log" >&2; fail "no message naming the changed input"; }
  dedup "$TMP/out" 1 --key-field id --state "$TMP/state" --on-input-error fail --revalidate-inputs
  [[ $JOB_RC == 2 ]] || { cat "$TMP/out.log" >&2; fail "revalidating a shorter prefix: exit $JOB_RC, want 2"; }
  grep -q "cannot be revalidated" "$TMP/out.log" || { cat "$TMP/out.log" >&2; fail "no revalidation message"; }

  cp "$TMP/good.keep" "$bad"  # the damaged file replaced by a good copy (new mtime, size)
  rm -r "$IN/c"
  echo '{"id":"added-before-start"}' >>"$IN/b/part-00000.jsonl"
  dedup_ok "$TMP/out" 1 --key-field id --state "$TMP/state" --on-input-error fail --revalidate-inputs
  grep -q "revalidated: the records read so far are the same" "$TMP/out.log" ||
    { cat "$TMP/out.log" >&2; fail "the replaced input was not revalidated"; }
  grep -q "c/part-00000.jsonl.zst' was removed before it was started" "$TMP/out.log" ||
    { cat "$TMP/out.log" >&2; fail "removal of a not-started input not reported"; }
  grep -q "b/part-00000.jsonl' changed before it was started" "$TMP/out.log" ||
    fail "change of a not-started input not reported"
  [[ $(skipped_count "$TMP/out/metrics.json") == 0 ]] || fail "an input was skipped"
  [[ ! -e $TMP/out/c ]] || fail "an output for the removed input exists"
  oracle --output "$TMP/out" --rejects-expected 0
  log "changes: changed started input refused unless revalidated; unstarted changes accepted"
}

# keyscheme: composite keys, --missing-field, --text-normalize and
# --key-digest against the oracle's own implementation of each rule.
keyscheme_corpus() {
  "$PY" - "$IN" <<'EOF'
import json, os, sys
root = sys.argv[1]
def line(**f):
    return (json.dumps(f, ensure_ascii=False) + "\n").encode()
rows = [
    # Tuples: ("ab","c") and ("a","bc") are two keys; a repeat is one.
    line(id="k1", url="ab", title="c", text="tuple one"),
    line(id="k2", url="a", title="bc", text="tuple two"),
    line(id="k3", url="ab", title="c", text="tuple one again"),
    line(id="k4", url="x", title="", text="empty title"),
    line(id="k5", url="x", text="no title: a reject, or (x, '') under --missing-field empty"),
    line(id="k6", url="", title="x", text="('', x) is not (x, '')"),
    # Text: one text under ws in CRLF, tab, NBSP, ideographic-space spellings.
    line(id="t1", url="u1", title="t", text="Hello  world\r\n"),
    line(id="t2", url="u2", title="t", text="Hello\tworld"),
    line(id="t3", url="u3", title="t", text="Hello\u00a0world"),
    line(id="t4", url="u4", title="t", text="\u3000Hello world\u3000"),
    line(id="t5", url="u5", title="t", text="HELLO\u2003WORLD"),   # ws-lower: the same text
    line(id="t6", url="u6", title="t", text="Hello\u200bworld"),   # ZWSP is not White_Space
    line(id="t7", url="u7", title="t", text="hello\u2029world\u0085"),
]
with open(os.path.join(root, "content.jsonl"), "wb") as f:
    f.write(b"".join(rows))
EOF
}

output_has() { # OUT_DIR ID: the record with this id was kept
  local out=$1 id=$2 text
  text=$(cat "$out/content.jsonl")
  [[ $text == *"\"id\": \"$id\""* ]]
}

case_keyscheme() {
  synth base --records 3000 --dup-rate 0.3 --files 3 --compress zst --seed 301
  keyscheme_corpus
  local records
  records=$(($(manifest_sum records) + 13))

  # 1. Tuples, missing field rejected (every synth record lacks a title).
  dedup_ok "$TMP/out-tuple" "$RANKS" --key-field url --key-field title --max-reject-fraction 1
  oracle --output "$TMP/out-tuple" --key-field url --key-field title --expect-unique 11
  check_metrics "$TMP/out-tuple/metrics.json" "records=$records" kept=11
  output_has "$TMP/out-tuple" k1 && output_has "$TMP/out-tuple" k2 ||
    fail "(ab,c) and (a,bc) are not both kept"
  ! output_has "$TMP/out-tuple" k3 || fail "the repeat of (ab,c) was kept"
  log "tuple keys: (ab,c) != (a,bc), the repeat dropped, missing fields rejected"

  # 2. Tuples, missing field as empty: (x,'') and (x, missing) are one key.
  dedup_ok "$TMP/out-empty" "$RANKS" --key-field url --key-field title --missing-field empty
  oracle --output "$TMP/out-empty" --key-field url --key-field title --missing-field empty \
    --rejects-expected 0
  output_has "$TMP/out-empty" k4 && ! output_has "$TMP/out-empty" k5 ||
    fail "(x, missing) is not the key of (x, '')"
  output_has "$TMP/out-empty" k6 || fail "('', x) was taken for (x, '')"

  # 3. Text keys: ws + sha256, ws-lower + xxh3-128, each against the oracle.
  dedup_ok "$TMP/out-ws" "$RANKS" --key-field text --text-normalize ws --key-digest sha256
  oracle --output "$TMP/out-ws" --key-field text --text-normalize ws --key-digest sha256 \
    --rejects-expected 0
  local id
  for id in t2 t3 t4; do ! output_has "$TMP/out-ws" $id || fail "ws kept $id, a repeat of t1"; done
  output_has "$TMP/out-ws" t5 && output_has "$TMP/out-ws" t6 || fail "ws merged t5 or t6"
  dedup_ok "$TMP/out-wsl" "$RANKS" --key-field text --text-normalize ws-lower \
    --key-digest xxh3-128
  oracle --output "$TMP/out-wsl" --key-field text --text-normalize ws-lower \
    --key-digest xxh3-128 --rejects-expected 0
  for id in t5 t7; do ! output_has "$TMP/out-wsl" $id || fail "ws-lower kept $id"; done
  log "text keys: ws and ws-lower (CRLF, tab, NBSP, U+3000, U+2003, U+2029, NEL) as the oracle"

  # 4. Digest keys keep the very records full keys keep; tier 2 holds 16 or
  #    32 bytes per key whatever the key's length.
  local d info keys bytes per
  for d in none xxh3-128 sha256; do
    dedup_ok "$TMP/out-d-$d" "$RANKS" --key-field id --key-digest "$d" --state "$TMP/st-$d"
    oracle --output "$TMP/out-d-$d" --key-field id --key-digest "$d" --rejects-expected 0
  done
  for d in xxh3-128 sha256; do
    diff -r -x _bloomshard.lock -x metrics.json "$TMP/out-d-none" "$TMP/out-d-$d" >/dev/null ||
      fail "--key-digest $d kept other records than full keys"
    info=$("$BIN" info --json --state "$TMP/st-$d")
    keys=$("$PY" -c 'import json,sys; print(json.loads(sys.argv[1])["exact_keys"])' "$info")
    bytes=$("$PY" -c 'import json,sys; print(json.loads(sys.argv[1])["exact_key_bytes"])' "$info")
    per=16
    [[ $d == sha256 ]] && per=32
    [[ $keys -gt 0 && $bytes == $((keys * per)) ]] ||
      fail "--key-digest $d: $bytes tier-2 bytes for $keys keys (want $per per key)"
  done
  log "digest keys: the same kept records as full keys; tier 2 holds 16 / 32 bytes per key"

  # 5. A state keeps its key scheme: today's crawl with another digest is
  #    refused naming both; with the same digest it runs incrementally.
  mkdir -p "$IN/today"
  "$BIN" synth --out "$IN/today" --manifest "$META/today.json" --records 200 --seed 302 >/dev/null
  dedup "$TMP/out-inc" "$RANKS" --key-field id --state "$TMP/st-sha256"
  local said
  said=$(cat "$TMP/out-inc.log")
  [[ $JOB_RC == 2 && $said == *"the state has sha256/v1, this job asks for none/v1"* ]] ||
    { echo "$said" >&2; fail "another --key-digest on a sha256 state: exit $JOB_RC"; }
  rm -rf "$TMP/out-inc"
  dedup_ok "$TMP/out-inc" "$RANKS" --key-field id --key-digest sha256 --state "$TMP/st-sha256"
  said=$(cat "$TMP/out-inc.log")
  [[ $said == *"incremental run"* ]] || fail "the sha256 state was not continued incrementally"
  check_metrics "$TMP/out-inc/metrics.json" kept=200
  log "a sha256 state refuses --key-digest none (naming both) and continues with sha256"
}

case "$CASE" in
  mixed | keyset | special | rejects | lines | synth | incremental | hotkey | layers | nodeexchange | \
    versions | skip | changes | keyscheme)
    "case_$CASE" ;;
  *) echo "run_dedup_case.sh: unknown case '$CASE'" >&2; exit 2 ;;
esac
log "PASS in $((SECONDS - start)) s"
