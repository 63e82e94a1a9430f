#!/usr/bin/env bash
# The MPI transport of a one-node job (comm/transport_defaults.hpp), through
# the real launcher and the real MPI_Init: with nobody's choice in the
# environment, a 2-rank dedup names ob1 (Open MPI then never loads the CM
# PML: its pml_base_verbose log does not register it) and says so in the
# metrics (mpi_pml_default = "ob1"); with BLOOMSHARD_MPI_TRANSPORT=keep, or
# a PML already in the environment, Open MPI chooses (CM registered, field
# ""). A singleton (no launcher at all) names ob1 too. Outputs are checked
# to be the input's first copies each time.
#
# usage: transport_default.sh BLOOMSHARD --mpiexec M --np-flag F --python P
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse transport_default.sh "BIN" "$@"
harness_tmp transport "transport default"

# The suite's environment names pml and btl for every test; this one needs
# the launcher's plain environment.
unset OMPI_MCA_pml OMPI_MCA_btl OMPI_MCA_mtl BLOOMSHARD_MPI_TRANSPORT
mkdir -p "$TMP/in"
printf '{"id":"a","n":1}\n{"id":"b","n":2}\n{"id":"a","n":3}\n' >"$TMP/in/x.jsonl"
printf '{"id":"a","n":1}\n{"id":"b","n":2}\n' >"$TMP/want"

# run NAME [ENV=VALUE...]: a 2-rank job; leaves its log and metrics in $TMP.
run() {
  local name=$1
  shift
  rm -rf "$TMP/out"
  env "$@" OMPI_MCA_pml_base_verbose=10 timeout 120 "$MPIEXEC" "$NP_FLAG" 2 "$BIN" dedup \
    --input "$TMP/in" --output "$TMP/out" --key-field id --capacity 1000 \
    --metrics "$TMP/$name.json" >"$TMP/$name.log" 2>&1 ||
    { cat "$TMP/$name.log" >&2; fail "$name: the job failed"; }
  cmp -s "$TMP/out/x.jsonl" "$TMP/want" || fail "$name: output is not the first copies"
}
field() {  # NAME: the metrics' mpi_pml_default
  "$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["mpi_pml_default"])' "$TMP/$1.json"
}
cm_registered() { grep -q 'components_register: found loaded component cm' "$TMP/$1.log"; }

run auto
[[ $(field auto) == ob1 ]] || fail "auto: mpi_pml_default is '$(field auto)', want ob1"
! cm_registered auto || fail "auto: Open MPI still loaded the CM PML (ob1 not named)"
grep -q 'select: component ob1 selected' "$TMP/auto.log" || fail "auto: ob1 not selected"

run keep BLOOMSHARD_MPI_TRANSPORT=keep
[[ -z $(field keep) ]] || fail "keep: mpi_pml_default is '$(field keep)', want ''"
cm_registered keep || fail "keep: CM not loaded: Open MPI did not choose for itself"

run user OMPI_MCA_pml=^ucx
[[ -z $(field user) ]] || fail "user's pml: mpi_pml_default is '$(field user)', want ''"
cm_registered user || fail "user's pml: the user's PML setting was overridden"
# Without any launcher: a singleton, one process, ob1 as well.
rm -rf "$TMP/out"
env OMPI_MCA_pml_base_verbose=10 timeout 120 "$BIN" dedup --input "$TMP/in" --output "$TMP/out" \
  --key-field id --capacity 1000 --metrics "$TMP/single.json" >"$TMP/single.log" 2>&1 ||
  { cat "$TMP/single.log" >&2; fail "singleton: the job failed"; }
cmp -s "$TMP/out/x.jsonl" "$TMP/want" || fail "singleton: output is not the first copies"
[[ $(field single) == ob1 ]] || fail "singleton: mpi_pml_default is '$(field single)', want ob1"
! cm_registered single || fail "singleton: Open MPI still loaded the CM PML"
echo "transport default: ob1 named for a one-node job and a singleton; keep and a user's pml respected"
