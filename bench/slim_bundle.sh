#!/usr/bin/env bash
# Repack the TileLang bundle of ../shared/gpu/make_bundle.sh (.gpu/site.tar.xz) to fit beside this checkout in the
# 64 MiB that travels with a device run: its 56 MB and the tracked tree's 14 MB did not (2026-12-07). Drops what
# nothing imports on the GPU machine (z3's command-line binary, a top-level tests/ and docs/ some wheels
# unpack) and adds threadpoolctl (a dependency the bundle lacks; its wheel in .gpu/wheels, fetched here if
# missing). 56 -> 39 MB, about 2 minutes on 2 cores. Run it from the checkout's root after make_bundle.sh.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
[[ -f .gpu/site.tar.xz ]] || { echo "error: no .gpu/site.tar.xz: run ../shared/gpu/make_bundle.sh first" >&2; exit 1; }
mkdir -p .gpu/wheels
wheel=.gpu/wheels/threadpoolctl-3.6.0-py3-none-any.whl
[[ -f $wheel ]] || python3 -m pip download -q --no-deps threadpoolctl==3.6.0 -d .gpu/wheels
work=$(mktemp -d)
tar -C "$work" -xJf .gpu/site.tar.xz
rm -rf "$work"/z3_solver-*.data "$work"/tests "$work"/docs
python3 -m zipfile -e "$wheel" "$work"
tar -C "$work" -cf - . | xz -9 -T0 > .gpu/site.tar.xz.new
mv .gpu/site.tar.xz.new .gpu/site.tar.xz
rm -rf "$work"
ls -la .gpu/site.tar.xz
