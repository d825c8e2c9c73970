#!/usr/bin/env bash
# The mutation gate: tests/mutation/run.py (see its docstring). CI runs the protocol set:
#   tests/mutation/run.sh --set protocol --runs 5
exec python3 "$(dirname "$0")/run.py" "$@"
