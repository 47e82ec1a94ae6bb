"""Probe (GPU): host time of one TileLang kernel launch per execution backend, and with TileLang
allocating the outputs (`out_idx`, what `run` uses) against outputs passed in.

A small elementwise kernel (y = 2 x on [256, 256] f16: the GPU work is about 1 us, so calls back to
back are host-bound), with static and with a dynamic row count; PyTorch's own `torch.mul(x, 2)` beside
it. Each number: the median over 5 rounds of 2000 calls back to back, synchronized at the end, us a call.

    bash bench/on_device.sh python bench/probes/launcher_backends.py    (writes $OUT/launcher_backends.json)
"""

from __future__ import annotations

import json
import os
import statistics
import time

import tilelang
import tilelang.language as T
import torch

N = 256


def doubled(dynamic: bool):
    M = T.dynamic("m") if dynamic else N

    @T.prim_func
    def f(X: T.Tensor((M, N), "float16"), Y: T.Tensor((M, N), "float16")):
        with T.Kernel(T.ceildiv(M, 32), threads=128) as bx:
            for i, j in T.Parallel(32, N):
                if bx * 32 + i < M:
                    Y[bx * 32 + i, j] = X[bx * 32 + i, j] * T.float16(2)

    return f


def per_call_us(fn, n: int = 2000, rounds: int = 5) -> float:
    for _ in range(50):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) / n * 1e6)
    return statistics.median(times)


def main() -> None:
    x = torch.randn(N, N, device="cuda", dtype=torch.float16)
    y = torch.empty_like(x)
    rows: dict[str, float | str] = {"torch.mul(x, 2)": per_call_us(lambda: torch.mul(x, 2)),
                                    "torch.mul(x, 2, out=y)": per_call_us(lambda: torch.mul(x, 2, out=y))}
    for backend in ("tvm_ffi", "cython", "nvrtc", "torch"):
        for dynamic in (False, True):
            for into in (False, True):
                name = f"{backend} {'dynamic' if dynamic else 'static'} {'outputs passed' if into else 'out_idx'}"
                try:
                    k = tilelang.compile(doubled(dynamic), out_idx=None if into else [1], execution_backend=backend, target="cuda")
                    fn = (lambda k=k: k(x, y)) if into else (lambda k=k: k(x))
                    got = fn()
                    assert torch.equal(y if into else got, x * 2), "wrong result"
                    rows[name] = per_call_us(fn)
                except Exception as e:  # noqa: BLE001 - a backend this machine lacks is recorded
                    rows[name] = f"failed: {str(e).splitlines()[0][:160] if str(e) else type(e).__name__}"
                print(f"{name:45s} {rows[name]}", flush=True)
    out = os.environ.get("OUT", ".")
    with open(os.path.join(out, "launcher_backends.json"), "w") as f:
        json.dump({"gpu": torch.cuda.get_device_name(), "tilelang": tilelang.__version__, "us_per_call": rows}, f, indent=1)


if __name__ == "__main__":
    main()
