#!/bin/sh
# with_venv.sh PYTHON SCRIPT ARGS... — run SCRIPT with the project's venv Python, or exit 77 (ctest: skipped)
# when the venv is absent (scripts/setup.sh creates it with matplotlib, pandas, jsonschema).
py=$1
shift
if [ ! -x "$py" ]; then
  echo "skipped: no venv Python at $py (run scripts/setup.sh)"
  exit 77
fi
exec "$py" "$@"
