#!/usr/bin/env bash
# Run every test: pytest (unit, property and CLI tests) and lit (filecheck tests of the dialects and passes).
set -euo pipefail
cd "$(dirname "$0")"
source .venv/bin/activate
python -m pytest tests "$@"
lit -q lit_tests
