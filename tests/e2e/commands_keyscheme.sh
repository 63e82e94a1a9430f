#!/usr/bin/env bash
# query and merge on states with a key scheme: a digest +
# text-rule state answers queries with the job's own key rules (the oracle:
# Python's hashlib-free rule "same text after ws" on the records), merge
# unions two such states, and refuses to merge states whose key schemes
# differ, naming the item.
# usage: commands_keyscheme.sh BIN RANKS [--mpiexec M] [--np-flag F] [--python P]
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse commands_keyscheme.sh "BIN RANKS" "$@"
harness_tmp cmdks "commands keyscheme"
mkdir -p "$TMP/a" "$TMP/b" "$TMP/q"
# History a: texts 0..1999 with messy white space (each twice); b: 1500..2999.
# Queries: 1000..3999 written plainly; hits are 1000..2999 against a+b.
"$PY" - "$TMP" <<'PY'
import json, sys
t = sys.argv[1]
def w(path, ids, messy):
    with open(path, "w", encoding="utf-8") as f:
        for i in ids:
            text = ("  Doc\u00a0%d \t\r\n text  " if messy else "Doc %d text") % i
            f.write(json.dumps({"id": text}, ensure_ascii=False) + "\n")
w(t + "/a/a.jsonl", [i % 2000 for i in range(4000)], True)
w(t + "/b/b.jsonl", range(1500, 3000), True)
w(t + "/q/q.jsonl", range(1000, 4000), False)
PY
KS=(--key-digest sha256 --text-normalize ws)
mpi "$RANKS" dedup --input "$TMP/a" --output "$TMP/oa" --state "$TMP/A" "${KS[@]}" >/dev/null
mpi "$RANKS" dedup --input "$TMP/b" --output "$TMP/ob" --state "$TMP/B" "${KS[@]}" >/dev/null
mpi "$RANKS" dedup --input "$TMP/b" --output "$TMP/oc" --state "$TMP/N" --text-normalize ws >/dev/null  # no digest
n=$(wc -l <"$TMP/oa/a.jsonl")
((n == 2000)) || fail "A kept $n records, expected 2000"
mpi "$RANKS" query --state "$TMP/A" --input "$TMP/q" --output "$TMP/qa" --emit hits >/dev/null
n=$(wc -l <"$TMP/qa/q.jsonl")
((n == 1000)) || fail "query against A: $n hits, expected 1000 (texts 1000..1999)"
mpi "$RANKS" merge --from "$TMP/A" --from "$TMP/B" --into "$TMP/C" >/dev/null
mpi "$RANKS" query --state "$TMP/C" --input "$TMP/q" --output "$TMP/qc" --emit hits >/dev/null
"$PY" - "$TMP/qc/q.jsonl" <<'PY' || fail "query against the merge: hits differ from texts 1000..2999"
import json, sys
got = [json.loads(l)["id"] for l in open(sys.argv[1], encoding="utf-8")]
assert got == ["Doc %d text" % i for i in range(1000, 3000)], (len(got), got[:3])
PY
info=$("$BIN" info --state "$TMP/C")
[[ $info == *"digest=sha256/v1"* && $info == *"text=ws/v1"* ]] || fail "merged state lost its key scheme: $info"
set +e
out=$(mpi "$RANKS" merge --from "$TMP/A" --from "$TMP/N" --into "$TMP/D" 2>&1)
rc=$?
set -e
((rc != 0)) || fail "merging a sha256 state with a full-key one was accepted"
[[ $out == *"digest"* ]] || fail "the refusal does not name the digest: $out"
[[ ! -e $TMP/D ]] || fail "a refused merge left $TMP/D"
echo "[commands keyscheme] $RANKS ranks: query and merge follow the states' key scheme"
