#!/usr/bin/env python3
"""The error of bf16 Winograd F(2x2, 3x3) and F(4x4, 3x3) against the exact 3x3 convolution.

One output tile of a 3x3 convolution with C input and K output channels: bf16 inputs (ReLU'd
normals) and bf16 weights (He-scaled normals), the transformed input V and weights U rounded to
bf16 as the bf16 Winograd kernels round them, the products summed in f32, the output transform
exact. Prints each form's relative RMS error against the exact result of the same bf16 operands,
and, for scale, that of rounding the exact result once to bf16.

    .venv/bin/python tools/bench/winograd_bf16_error.py [--channels 256] [--outputs 64] [--seed 0]
"""
import argparse

import numpy as np


def bf16(x):
    """x rounded to the nearest bf16 (ties to even), as float32."""
    bits = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    return rounded.astype(np.uint32).view(np.float32)


# Interpolation points 0, 1, -1, 2, -2 and infinity (F(4x4)); 0, 1, -1 and infinity (F(2x2)).
F4 = (
    np.array([[4, 0, -5, 0, 1, 0], [0, -4, -4, 1, 1, 0], [0, 4, -4, -1, 1, 0],
              [0, -2, -1, 2, 1, 0], [0, 2, -1, -2, 1, 0], [0, 4, 0, -5, 0, 1]], np.float64),
    np.array([[1 / 4, 0, 0], [-1 / 6, -1 / 6, -1 / 6], [-1 / 6, 1 / 6, -1 / 6],
              [1 / 24, 1 / 12, 1 / 6], [1 / 24, -1 / 12, 1 / 6], [0, 0, 1]], np.float64),
    np.array([[1, 1, 1, 1, 1, 0], [0, 1, -1, 2, -2, 0], [0, 1, 1, 4, 4, 0], [0, 1, -1, 8, -8, 1]], np.float64),
)
F2 = (
    np.array([[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]], np.float64),
    np.array([[1, 0, 0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0, 0, 1]], np.float64),
    np.array([[1, 1, 1, 0], [0, 1, -1, -1]], np.float64),
)


def direct(d, g, m):
    out = np.zeros((g.shape[0], m, m))
    for i in range(m):
        for j in range(m):
            out[:, i, j] = np.einsum("kcab,cab->k", g, d[:, i:i + 3, j:j + 3])
    return out


def winograd(d, g, form):
    bt, gm, at = form
    v = bf16(np.einsum("ij,cjk,lk->cil", bt, d, bt)).astype(np.float64)
    u = bf16(np.einsum("ij,kcjl,ml->kcim", gm, g, gm)).astype(np.float64)
    m = np.einsum("kcij,cij->kij", u, v).astype(np.float32).astype(np.float64)
    return np.einsum("ij,kjl,ml->kim", at, m, at)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--channels", type=int, default=256)
    ap.add_argument("--outputs", type=int, default=64)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    d = bf16(np.maximum(rng.standard_normal((a.channels, 6, 6)), 0)).astype(np.float64)
    g = bf16(rng.standard_normal((a.outputs, a.channels, 3, 3)) * np.sqrt(2 / (9 * a.channels))).astype(np.float64)

    def rel(err, ref):
        return float(np.sqrt((err ** 2).mean() / (ref ** 2).mean()))

    exact4 = direct(d, g, 4)
    exact2 = direct(d[:, :4, :4], g, 2)
    print(f"C {a.channels}, K {a.outputs}: relative RMS error against the exact convolution")
    print(f"  F(2x2, 3x3), V and U in bf16: {rel(winograd(d[:, :4, :4], g, F2) - exact2, exact2):.2e}")
    print(f"  F(4x4, 3x3), V and U in bf16: {rel(winograd(d, g, F4) - exact4, exact4):.2e}")
    print(f"  the exact result rounded to bf16 once: {rel(bf16(exact4) - exact4, exact4):.2e}")


if __name__ == "__main__":
    main()
