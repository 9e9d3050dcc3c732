#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Fits the coefficients of the contract's erf (docs/numerics.md, "erf(x)"; models/include/tpu/vpu.h).

  scripts/fit_erf.py     prints both sets as fp32 patterns (about 15 s)

erf(a) = a + a*Q(a^2) on [0, 1] and 1 - exp(L(a)) on [1, 4], L ~ log(erfc(a)). Each set is a
minimax fit by Lawson's iteration (iteratively reweighted least squares on 300 Chebyshev nodes)
of the error the result sees: Q's relative to erf(a)/a, L's absolute, weighted by
erfc(a)/erf(a) (not below 1e-3), against mpmath's erf and erfc at 40 digits. The coefficients
are then rounded to fp32; the error the fp32 evaluation reaches is measured over every input by
`tpu_sweep --sweep vpu-erf`. Needs python3-mpmath (Debian), not the build.

Written by hand: mpmath has no minimax fitter for a weighted relative error; NumPy's polyfit
(not available here) is plain least squares.
"""
import struct

import mpmath as mp

mp.mp.dps = 40
NODES = 300
ITERS = 60


def fp32_bits(x):
    return struct.unpack("<I", struct.pack("<f", float(x)))[0]


def lawson(f, weight, degree, lo, hi, var=lambda x: x):
    """Coefficients c of sum c_j var(x)^j minimizing max |weight(x) (sum - f(x))| on [lo, hi]."""
    xs = [lo + (hi - lo) * (1 - mp.cos(mp.pi * (i + mp.mpf(1) / 2) / NODES)) / 2
          for i in range(NODES)]
    ys, ws = [f(x) for x in xs], [weight(x) for x in xs]
    phis = [[var(x) ** j for j in range(degree + 1)] for x in xs]
    lam = [mp.mpf(1) / NODES] * NODES
    best = None
    for _ in range(ITERS):
        a, b = mp.matrix(degree + 1, degree + 1), mp.matrix(degree + 1, 1)
        for i in range(NODES):
            s = lam[i] * ws[i] ** 2
            for p in range(degree + 1):
                b[p] += s * phis[i][p] * ys[i]
                for q in range(degree + 1):
                    a[p, q] += s * phis[i][p] * phis[i][q]
        c = mp.lu_solve(a, b)
        errs = [abs(ws[i] * (sum(c[j] * phis[i][j] for j in range(degree + 1)) - ys[i]))
                for i in range(NODES)]
        worst = max(errs)
        if best is None or worst < best[0]:
            best = (worst, [c[j] for j in range(degree + 1)])
        total = sum(lam[i] * errs[i] for i in range(NODES))
        lam = [lam[i] * errs[i] / total for i in range(NODES)]
    return best


def small_q(z):  # erf(a)/a - 1 at z = a^2
    if z == 0:
        return 2 / mp.sqrt(mp.pi) - 1
    a = mp.sqrt(z)
    return mp.erf(a) / a - 1


def small_w(z):  # a/erf(a): Q's error relative to erf(a)/a
    if z == 0:
        return mp.sqrt(mp.pi) / 2
    a = mp.sqrt(z)
    return a / mp.erf(a)


def main():
    switch, clamp = mp.mpf(1), mp.mpf(4)
    sets = [
        ("s", "Q(z) = erf(a)/a - 1, z = a^2, a in [0, 1]",
         lawson(small_q, small_w, 6, mp.mpf(0), switch ** 2)),
        ("l", "L(a) = log(erfc(a)), a in [1, 4]",
         lawson(lambda a: mp.log(mp.erfc(a)), lambda a: max(mp.erfc(a) / mp.erf(a), mp.mpf("1e-3")),
                9, switch, clamp)),
    ]
    for name, what, (worst, coeffs) in sets:
        print(f"{what}: weighted error {mp.nstr(worst, 3)}")
        print("  " + " ".join(f"{name}{j}=0x{fp32_bits(c):08X}" for j, c in enumerate(coeffs)))


if __name__ == "__main__":
    main()
