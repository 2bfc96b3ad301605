"""Composite Gauss–Legendre rules and the one power-law tail extrapolation the analytic core uses."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["GL_HI", "GL_LO", "GL_CELL", "gl_pieces", "power_tail"]

#: Gauss–Legendre rules on [-1, 1]: the main rule, a coarser one for the error estimate, and
#: the 4-point rule used inside one lattice cell
GL_HI = np.polynomial.legendre.leggauss(20)
GL_LO = np.polynomial.legendre.leggauss(10)
GL_CELL = np.polynomial.legendre.leggauss(4)


def gl_pieces(edges: np.ndarray, rule: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights of a composite Gauss–Legendre rule on consecutive [edges[i], edges[i+1]]."""
    a, b = edges[:-1, None], edges[1:, None]
    xi, wi = rule
    x = 0.5 * (a + b) + 0.5 * (b - a) * xi[None, :]
    w = 0.5 * (b - a) * wi[None, :]
    return x, w


def power_tail(x1: float, q1: float, x2: float, q2: float, power: int = 1) -> float:
    """``∫_{x2}^∞ p·x^{p−1} S(x) dx`` for the power law ``S(x) = q2 (x/x2)^{−β}`` through the
    tail probabilities ``S(x1) = q1`` and ``S(x2) = q2`` (x1 < x2): ``p·x2^p·q2/(β − p)``, and
    ``inf`` when β ≤ p (the p-th moment of the tail diverges).  p = 1 is the tail's share of a
    mean, p = 2 of a second moment.

    >>> power_tail(1.0, 1.0, 2.0, 0.25)   # S(x) = x⁻², ∫_2^∞ x⁻² dx = 1/2
    0.5
    """
    beta = math.log(q1 / q2) / math.log(x2 / x1)
    if beta <= power:
        return math.inf
    scale = float(power)
    for _ in range(power):  # p·x2^p by products: inf on overflow, not an OverflowError
        scale *= x2
    return scale * q2 / (beta - power)
