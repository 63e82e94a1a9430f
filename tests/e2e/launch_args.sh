# Sourced by the e2e and fault scripts: the options each takes after its
# positional arguments, --mpiexec M, --np-flag F and --python P (or
# --np-flag=F and so on; defaults mpiexec, -n, python3), into MPIEXEC,
# NP_FLAG and PY. Any other argument ends the script with exit 2, naming
# SCRIPT.
launch_args() { # SCRIPT ARGS...
  local script=$1
  shift
  MPIEXEC=mpiexec NP_FLAG=-n PY=python3
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --mpiexec) MPIEXEC=$2; shift 2 ;;
      --np-flag) NP_FLAG=$2; shift 2 ;;
      --python) PY=$2; shift 2 ;;
      # The one-word forms: a launcher flag that starts with '-' (-n) is
      # passed as --np-flag=-n, the form Python's argparse needs too.
      --mpiexec=*) MPIEXEC=${1#*=}; shift ;;
      --np-flag=*) NP_FLAG=${1#*=}; shift ;;
      --python=*) PY=${1#*=}; shift ;;
      *) echo "$script: unknown argument '$1'" >&2; exit 2 ;;
    esac
  done
}
