#!/usr/bin/env bash
# Run every test on every core (pytest-xdist): pytest (unit, property and CLI tests) and lit (the
# filecheck tests of the dialects and passes, run by tests/test_lit.py in chunks so that the workers
# share them with the pytest tests). The exhaustive sweeps are marked `slow`: `./test.sh -m slow` runs
# them instead. `lit -v lit_tests` runs the lit tests alone.
set -euo pipefail
cd "$(dirname "$0")"
source .venv/bin/activate
# one BLAS thread per test worker: the workers already use every core
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
python -m pytest tests -n "${PYTEST_WORKERS:-auto}" --dist loadgroup "$@"
