"""Theory of the error of decentralised SGD on a graph (DESIGN §12.4): the mixing matrix W checked
and its spectrum, the exact expected curves of d-psgd on the model problem per eigenmode of W, and
Koloskova et al.'s rate as an order-of-magnitude guide.  The simulations of every node's model are
in :mod:`distsgd.error.graph_simulate`.

W is a dense array or a scipy.sparse matrix, symmetric with rows summing to 1 (as Metropolis–Hastings
weights are).  Three numbers describe the m models x_1 … x_m: the error of their average
``f(x̄) − f*``, the mean node error ``(1/m) Σ_i f(x_i) − f*`` and the consensus distance
``(1/m) Σ_i ‖x_i − x̄‖²``.

>>> import numpy as np
>>> from distsgd.error import Problem
>>> P = Problem(eta=0.1, L=1.0, mu=1.0, sigma2=0.0, b=1, f0=1.0, dim=1)
>>> complete = np.full((3, 3), 1 / 3)
>>> dpsgd_exact(P, complete, [0, 1, 2]).average.round(6).tolist()    # noiseless: (1 − η)^{2k} F0
[1.0, 0.81, 0.6561]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from .. import limits
from ..params import ParameterError
from .problem import Problem

__all__ = ["check_mixing", "MixingSpectrum", "GraphExact", "dpsgd_exact", "KoloskovaGuide", "koloskova_guide"]

#: eigenvalues closer than this are one eigenvalue (one group of modes with one recursion)
EIGEN_TOL = 1e-12
#: largest |w_ij − w_ji| and |Σ_j w_ij − 1| accepted (Metropolis–Hastings weights are exact to ~1e-16)
MIXING_TOL = 1e-9


# -- the mixing matrix and its spectrum -----------------------------------------------------------

def check_mixing(W: Any) -> sp.csr_array:
    """W as a CSR array, checked: square, finite, symmetric, rows summing to 1."""
    shape = W.shape if sp.issparse(W) else np.shape(W)
    if len(shape) != 2 or shape[0] != shape[1] or shape[0] < 1:
        raise ParameterError("W", "graph_array_shape", what="W", shape=shape, expected="(m, m)")
    A = sp.csr_array(W if sp.issparse(W) else np.asarray(W, dtype=float), dtype=float)
    gap = abs(A - A.T).max() if A.nnz else 0.0
    gap = max(float(gap), float(np.abs(A.sum(axis=1) - 1.0).max()))
    if not (np.isfinite(A.data).all() and gap <= MIXING_TOL):
        raise ParameterError("W", "mixing_matrix", gap=gap)
    return A


@dataclass(frozen=True, eq=False)
class MixingSpectrum:
    """The eigenvalues of a symmetric W whose rows sum to 1, grouped: ``values`` distinct (ascending),
    ``counts`` their multiplicities (Σ counts = m).  The all-ones vector is an eigenvector of
    eigenvalue 1, so one mode of the group ``values == 1`` is the average model's and the other
    m − 1 modes are orthogonal to it (consensus modes)."""

    values: np.ndarray
    counts: np.ndarray

    @property
    def m(self) -> int:
        return int(self.counts.sum())

    @property
    def unit(self) -> int:
        """Index of the eigenvalue 1 in ``values``."""
        return int(np.flatnonzero(self.values == 1.0)[0])

    @property
    def spectral_gap(self) -> float:
        """δ = 1 − max |λ| over the m − 1 consensus modes (0 for a disconnected graph; 1 for m = 1)."""
        rest = self.counts.copy()
        rest[self.unit] -= 1
        lam = np.abs(self.values[rest > 0])
        return 1.0 - float(lam.max()) if lam.size else 1.0

    @classmethod
    def from_eigenvalues(cls, eigenvalues: Any) -> MixingSpectrum:
        """Group the m eigenvalues of W (e.g. from a closed form); the one nearest 1 becomes exactly 1."""
        lam = np.sort(np.asarray(eigenvalues, dtype=float).ravel())
        if lam.size < 1 or not np.isfinite(lam).all() or np.abs(lam).max() > 1 + MIXING_TOL \
                or np.abs(lam - 1).min() > MIXING_TOL:
            raise ParameterError("W", "mixing_spectrum")
        lam[np.argmin(np.abs(lam - 1))] = 1.0
        lam = np.clip(lam, -1.0, 1.0)
        starts = np.flatnonzero(np.r_[True, np.diff(lam) > EIGEN_TOL])
        values = lam[starts]
        values[-1] = 1.0  # the last group holds the 1 set above
        return cls(values, np.diff(np.r_[starts, lam.size]))

    @classmethod
    def from_matrix(cls, W: Any, max_m: int = limits.GRAPH_EXACT_MAX_M) -> MixingSpectrum:
        """Eigenvalues of a checked W (dense symmetric eigensolver, O(m³): m ≤ ``max_m``)."""
        A = check_mixing(W)
        m = A.shape[0]
        if m > max_m:
            raise ParameterError("m", "graph_exact_nodes", m=m, cap=max_m)
        D = A.toarray()
        return cls.from_eigenvalues(np.linalg.eigvalsh(0.5 * (D + D.T)))


# -- the exact expected curves of d-psgd ------------------------------------------------------------

def _geom_sum(r: np.ndarray, mult: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Σ_g mult_g Σ_{j<k} r_gc^j for r (G, d) ≥ 0 and each k of k (K,): (K, d).  The inner sum is
    expm1(k ln r)/expm1(ln r) (accurate near r = 1), k at r = 1, 0 at k = 0."""
    one = r == 1.0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        lr = np.log(r)
        weight = np.where(one, 0.0, mult[:, None] / np.expm1(lr))  # (G, d)
        kf = k.astype(float)[:, None, None]
        terms = np.expm1(np.where(kf > 0, kf * lr, 0.0))  # (K, G, d); k = 0 → 0
        out = np.einsum("kgd,gd->kd", terms, weight)
    return out + k.astype(float)[:, None] * (mult[:, None] * one).sum(axis=0)


@dataclass(frozen=True, eq=False)
class GraphExact:
    """Exact expectations of d-psgd after k iterations: ``average`` E[f(x̄(k))] − f*, ``nodes``
    E[(1/m) Σ_i f(x_i(k))] − f*, ``consensus`` E[(1/m) Σ_i ‖x_i(k) − x̄(k)‖²]."""

    iterations: np.ndarray
    average: np.ndarray
    nodes: np.ndarray
    consensus: np.ndarray
    spectral_gap: float

    METHOD = "exact expectation per eigenmode of W (linear recursions of the mean and the variance)"


def dpsgd_exact(problem: Problem, mixing: Any, iterations: Any,
                max_work: float = limits.GRAPH_EXACT_WORK) -> GraphExact:
    """E[f(x̄(k))] − f*, the mean node error and the consensus distance of d-psgd on the model problem
    (DESIGN §3), exactly, at each k of ``iterations`` (a 1-D array of non-negative integers, e.g.
    ``np.arange(n + 1)`` for k = 0 … n), vectorised over k.

    ``x_i(k+1) = Σ_j w_ij x_j(k) − η (h ⊙ x_i(k) + ξ_i(k))``, every x_i(0) = w₀.  Per coordinate c and
    eigenmode l of W (λ_l, orthonormal u_l) the mode y = u_lᵀ X_c follows
    ``y(k+1) = (λ_l − η h_c) y(k) − η ξ̃``, ξ̃ ~ N(0, σ²/(b d)) independent across modes (an
    orthonormal transform of i.i.d. node noise).  Only the mode u = 1/√m (λ = 1) has a mean, √m w₀;
    every mode has the variance ``η² σ²/(b d) Σ_{j<k} a^{2j}``, a = λ_l − η h_c.  Hence x̄ follows
    sync's recursion with batch m — ``E[x̄_c²] = w₀² a^{2k} + (η² σ²/(b d m)) Σ_{j<k} a^{2j}``, a = 1 − η h_c
    (:func:`distsgd.error.exact_error` of sync with m workers) — and the topology enters only the
    consensus distance ``(1/m) Σ_{l ≠ mean mode} Var y_l`` per coordinate; the mean node error is
    ``f(x̄)`` plus ½ Σ_c h_c times it.  ``mixing``: W (checked) or its :class:`MixingSpectrum`.
    """
    spec = mixing if isinstance(mixing, MixingSpectrum) else MixingSpectrum.from_matrix(mixing)
    k = np.asarray(iterations)
    if k.ndim != 1 or k.dtype.kind not in "iuf" or not (np.isfinite(k) & (k == np.round(k)) & (k >= 0)).all():
        raise ParameterError("iterations", "graph_iterations")
    k = k.astype(np.int64)
    h, w0, eta, m = problem.h, problem.w0, problem.eta, spec.m
    v = (eta * problem.noise_sd) ** 2  # variance one step adds to every mode
    rest = spec.counts.astype(float)
    rest[spec.unit] -= 1.0  # the consensus modes: all but the mean mode
    lam, mult = spec.values[rest > 0], rest[rest > 0]
    work = float(k.size) * (lam.size + 1) * h.size
    if work > max_work:
        raise ParameterError("iterations", "graph_exact_work", work=work, cap=max_work)
    a1 = 1.0 - eta * h
    r = (lam[:, None] - eta * h) ** 2  # (G, d): a² of each consensus group
    r1, one = (a1**2)[None, :], np.ones(1)
    avg = np.empty(k.size)
    cons = np.empty(k.size)
    nodes = np.empty(k.size)
    step = int(max(1, limits.CHUNK // ((lam.size + 1) * h.size)))
    for s in range(0, k.size, step):
        kc = k[s:s + step]
        with np.errstate(over="ignore", invalid="ignore"):
            second = (w0 * a1 ** kc[:, None]) ** 2 + v / m * _geom_sum(r1, one, kc)  # E[x̄_c²], (K, d)
            cons_c = v / m * _geom_sum(r, mult, kc)  # (K, d)
        avg[s:s + step] = 0.5 * second @ h
        cons[s:s + step] = cons_c.sum(axis=1)
        nodes[s:s + step] = avg[s:s + step] + 0.5 * cons_c @ h
    return GraphExact(k, avg, nodes, cons, spec.spectral_gap)


# -- Koloskova et al.'s rate, as an order-of-magnitude guide ----------------------------------------

@dataclass(frozen=True, eq=False)
class KoloskovaGuide:
    """The form of Koloskova et al.'s rate with its unknown constants set to 1 (not a bound):
    ``values`` against ``iterations`` (None when the theorem's assumptions fail; ``note`` says why)."""

    iterations: np.ndarray
    values: np.ndarray | None
    p: float | None
    note: str = ""
    kind: str = "order_of_magnitude"

    METHOD = ("Koloskova et al. (ICML 2020), Theorem 2, strongly convex: σ̄²/(μ m T) + L σ̄²/(μ² p T²) + "
              "F0·exp(−μ p T / L), constants unknown (set to 1): an order-of-magnitude guide, not a bound")


def koloskova_guide(problem: Problem, m: int, spectral_gap: float, iterations: Any) -> KoloskovaGuide:
    """Order-of-magnitude guide for d-psgd after T iterations from Koloskova, Loizou, Boreiri, Jaggi,
    Stich, *A Unified Theory of Decentralized SGD with Changing Topology and Local Updates*, ICML 2020,
    Theorem 2 (strongly convex case): with a step size tuned to the target, E f − f* ≤ ε after

        T = Õ( σ̄²/(μ n ε) + √L (ζ̄ τ + σ̄ √(p τ)) / (μ p √ε) + (L τ/(μ p)) log(1/ε) )

    iterations (n nodes; σ̄² the gradient noise at the optimum; ζ̄² the spread of the nodes' gradients
    at the optimum; τ the rounds over which the topology mixes; p the expected consensus rate,
    E‖XW − X̄‖² ≤ (1 − p)‖X − X̄‖²; the error is a weighted average over t of f(x̄(t)) − f* plus
    μ‖x̄ − x*‖²).  For a fixed symmetric W, p = 1 − max_{l≥2} λ_l² = δ(2 − δ).  On the model problem
    every node has the same f (ζ̄ = 0), W is fixed (τ = 1), σ̄² = σ²/b, n = m; solving each term for ε:

        guide(T) = σ̄²/(μ m T) + L σ̄²/(μ² p T²) + F0 · exp(−μ p T / L).

    The constants and logarithms inside Õ are not reproduced here (they could not be recalled with
    confidence), so this is an order-of-magnitude guide, **not a bound**: it may lie below the true
    error.  It is the rate of a step size tuned to each T, not of the run's η.  The paper analyses
    x_i ← Σ_j w_ij (x_j − η g_j); d-psgd here mixes the models and adds the own gradient — the same
    recursion for x̄, a different one for the consensus.  Assumptions checked: μ > 0 (always here)
    and p > 0 (a connected graph); ad-psgd (asynchronous, stale gradients) is outside the theorem.
    T = 0 gives inf (F0 without noise).
    """
    T = np.asarray(iterations, dtype=float)
    delta = float(spectral_gap)
    if not (0.0 < delta <= 1.0):
        return KoloskovaGuide(T, None, None, f"the guide needs a connected graph (spectral gap δ = {delta:g})")
    p = delta * (2.0 - delta)
    mu, L, s2 = problem.mu, float(problem.h.max()), problem.sigma2 / problem.b
    with np.errstate(divide="ignore"):
        noise = s2 / (mu * m * T) + L * s2 / (mu**2 * p * T**2) if s2 > 0 else np.zeros_like(T)
    values = noise + problem.f0 * np.exp(-mu * p * T / L)
    return KoloskovaGuide(T, values, p)
