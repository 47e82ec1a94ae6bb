#!/usr/bin/env bash
# Run every test: pytest (unit, property and CLI tests) on every core, and lit (filecheck tests of the
# dialects and passes). The exhaustive sweeps are marked `slow`: `./test.sh -m slow` runs them instead.
set -euo pipefail
cd "$(dirname "$0")"
source .venv/bin/activate
# one BLAS thread per test worker: the workers already use every core
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
python -m pytest tests -n "${PYTEST_WORKERS:-auto}" --dist loadgroup "$@"
lit -q lit_tests
