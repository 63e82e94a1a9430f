#!/usr/bin/env bash
# Job chain for clusters where a job may not requeue itself: submits N runs of
# slurm/dedup.sbatch, each depending on the previous one (afterany), all on
# the same job file and hence the same state dir. A run that checkpoints
# (exit 75) ends; the next one resumes from LATEST. The run that finishes
# the job (or fails for good) writes a stop file, and the remaining runs exit
# at once without doing anything.
#
#   slurm/chain.sh [--runs N] [--stop FILE] [sbatch options --] JOB.ini [extra bloomshard args]
#   e.g. slurm/chain.sh --runs 6 -t 4:00:00 -N 2 -- jobs/corpus-dedup.ini
#
#   --runs N      number of chained jobs (default 5)
#   --stop FILE   the stop file (default ./bloomshard-chain-<pid>-<time>.stop);
#                 the chain refuses to start if it exists
# Any other option before "--" (or before the .ini) goes to sbatch.
# Prints the job ids, one per line (the first is the chain's head).
set -euo pipefail

RUNS=5
STOP=""
SBATCH_OPTS=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --runs) RUNS=$2; shift 2 ;;
    --stop) STOP=$2; shift 2 ;;
    --) shift; break ;;
    *.ini) break ;;
    *) SBATCH_OPTS+=("$1"); shift ;;
  esac
done
if [[ $# -lt 1 || ! -r $1 ]]; then
  echo "usage: slurm/chain.sh [--runs N] [--stop FILE] [sbatch options --] JOB.ini [extra args]" >&2
  exit 2
fi
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || { echo "chain.sh: --runs wants a positive count, got '$RUNS'" >&2; exit 2; }

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
STOP=${STOP:-$PWD/bloomshard-chain-$$-$(date +%s).stop}
[[ $STOP == /* ]] || STOP=$PWD/$STOP
if [[ -e $STOP ]]; then
  echo "chain.sh: stop file $STOP exists (an earlier chain finished); remove it first" >&2
  exit 2
fi

prev=""
for ((i = 1; i <= RUNS; i++)); do
  dep=()
  [[ -n $prev ]] && dep=(--dependency="afterany:$prev")
  # BLOOMSHARD_REQUEUE=0: a checkpointed run exits 75 instead of requeueing;
  # the next link of the chain is the "requeue".
  prev=$(BLOOMSHARD_REQUEUE=0 BLOOMSHARD_CHAIN_STOP=$STOP \
    sbatch --parsable --no-requeue "${dep[@]}" "${SBATCH_OPTS[@]}" "$HERE/dedup.sbatch" "$@")
  prev=${prev%%;*} # --parsable prints "id[;cluster]"
  echo "$prev"
done
echo "chain.sh: $RUNS jobs, stop file $STOP" >&2
