"""Hand-written numpy (float64) references for the graphs in examples/.

One function per example, named like the graph, arguments named like its inputs.
They are the independent check of the tgraph interpreter.
"""

from __future__ import annotations

import numpy as np


def _attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, scale: float) -> np.ndarray:
    """softmax(Q K^T * scale) V over the last dim, without max subtraction (as the graphs)."""
    q, k, v = (np.asarray(a, dtype=np.float64) for a in (q, k, v))
    e = np.exp(q @ np.swapaxes(k, -1, -2) * scale)
    return (e / e.sum(axis=-1, keepdims=True)) @ v


SCALE_128 = 1.0 / np.sqrt(128.0)
SCALE_192 = 1.0 / np.sqrt(192.0)  # DeepSeek MLA: qk_head_dim 192, not 576


def mha(q, k, v):
    return _attention(q, k, v, SCALE_128)


def gqa(q, k, v):
    return _attention(q, k, v, SCALE_128)


def mqa(q, k, v):
    return _attention(q, k, v, SCALE_128)


def mla(q, k, v):
    return _attention(q, k, v, SCALE_192)


def gqa_decode(q, k, v):
    return _attention(q, k, v, SCALE_128)


def mha_decode(q, k, v):
    return _attention(q, k, v, SCALE_128)


def mla_decode(q, k, v):
    return _attention(q, k, v, SCALE_192)


def matmul(a, b):
    return np.asarray(a, np.float64) @ np.asarray(b, np.float64)


def rmsnorm_matmul(x, w):
    x = np.asarray(x, np.float64)
    n = x / np.sqrt(np.mean(x * x, axis=1, keepdims=True))
    return n @ np.asarray(w, np.float64)


def swiglu(x, wg, wu):
    x = np.asarray(x, np.float64)
    g = x @ np.asarray(wg, np.float64)
    u = x @ np.asarray(wu, np.float64)
    return g / (1.0 + np.exp(-g)) * u


def matmul_matmul(a, b, c):
    a, b, c = (np.asarray(t, np.float64) for t in (a, b, c))
    return (a @ b) @ c


def matmul_rowsum(a, b):
    return (np.asarray(a, np.float64) @ np.asarray(b, np.float64)).sum(axis=1, keepdims=True)


REFERENCES = {
    "mha": mha,
    "gqa": gqa,
    "mqa": mqa,
    "mla": mla,
    "gqa_decode": gqa_decode,
    "mha_decode": mha_decode,
    "mla_decode": mla_decode,
    "matmul": matmul,
    "rmsnorm_matmul": rmsnorm_matmul,
    "swiglu": swiglu,
    "matmul_matmul": matmul_matmul,
    "matmul_rowsum": matmul_rowsum,
}
