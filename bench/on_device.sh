#!/usr/bin/env bash
# On the GPU machine (the device tool, with `.gpu` carried): unpack the TileLang bundle that
# ../shared/gpu/make_bundle.sh built, install this checkout into /tmp/cl, then run the command given.
#   bash bench/on_device.sh python bench/gpu_suite.py run .gpu/suite --out $OUT/results.json
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ! -d /tmp/site/tilelang ]]; then
  mkdir -p /tmp/site && tar -C /tmp/site -xJf .gpu/site.tar.xz
fi
# threadpoolctl (a dependency since session 46) is not in the bundle: carry its wheel in .gpu/wheels
# (`pip download --no-deps threadpoolctl==3.6.0 -d .gpu/wheels`); the machine has no network
if ! PYTHONPATH=/tmp/site python -c "import threadpoolctl" 2>/dev/null; then
  python -m zipfile -e .gpu/wheels/threadpoolctl-3.6.0-py3-none-any.whl /tmp/site
fi
# `python -m pip`: the console scripts (cleave, cleave-opt) then run with the python that has torch
python -m pip install -q --no-deps --no-build-isolation --target /tmp/cl --upgrade . >/dev/null 2>&1
export PYTHONPATH=/tmp/site:/tmp/cl PATH=/tmp/cl/bin:$PATH TILELANG_CACHE_DIR=${TILELANG_CACHE_DIR:-/tmp/tlcache}
"$@"
