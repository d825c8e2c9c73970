#!/usr/bin/env bash
# The mutation gate (docs/VERIFICATION.md, "Mutation gate"): every protocol mutant must be killed in every run.
#   tests/mutation/run.sh                 the protocol mutants, 5 runs each (what CI runs)
#   tests/mutation/run.sh --group all     also the arithmetic and tracking mutants
#   tests/mutation/run.sh --only 'R5|W1' --runs 1
# Builds in build/mutation (its own tree copy and build dir); prints the table.
set -euo pipefail
cd "$(dirname "$0")/../.."
exec python3 tests/mutation/mutate.py "$@"
