"""E[X_{K:m}] for independent, non-identical workers (DESIGN §7).

``P(X_{K:m} > x) = P(N(x) < K)`` with ``N(x) = #{i : X_i ≤ x}``, a sum of independent
binomials ``Bin(n_g, F_g(x))`` over the groups g (a Poisson-binomial law).  Around a split
point c (near the median of X_{K:m}),
``E[X_{K:m}] = c − ∫_0^c P(N ≥ K) dx + ∫_c^∞ P(N < K) dx``, each integrand taken on the side
where it is small and computed as a sum of positive terms (no cancellation):
``P(N < K)`` from the pmfs of the N_g truncated at K, ``P(N ≥ K) = P(M ≤ m − K)`` from those of
the unfinished counts ``M_g ~ Bin(n_g, S_g(x))`` truncated at m − K + 1.  The line is split at
the quantiles each group's law would give X_{K:m} were every worker of that law
(:func:`distsgd.orderstats.breakpoints`, geometric in both tail probabilities), and at every
atom of a discrete law; composite Gauss–Legendre rules of two orders give the value and its
error.  A group's law may be a mixture (Markov slowdowns: ``(1 − π)F(x) + πF(x/s)``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import signal, stats

from .. import limits
from ..delays import Delay
from ..estimate import Estimate, infinite, numeric_kind, unavailable
from ..numerics.quadrature import GL_HI, GL_LO, gl_pieces
from ..orderstats import Law, breakpoints, kth_median
from ..reasons import Text

__all__ = ["Mixture", "kth_of_independent", "tail_index_of_kth"]

#: (weight, law) components of one group's law
Mixture = Sequence[tuple[float, Delay]]


def _cdf(mix: Mixture, x: np.ndarray) -> np.ndarray:
    return np.clip(sum(w * Law(d).cdf(x) for w, d in mix), 0.0, 1.0)


def _sf(mix: Mixture, x: np.ndarray) -> np.ndarray:
    return np.clip(sum(w * Law(d).sf(x) for w, d in mix), 0.0, 1.0)


def _below(counts: Sequence[int], probs: Sequence[np.ndarray], L: int) -> np.ndarray:
    """P(Σ_g Bin(n_g, p_g) < L) at every node (probs: one array of nodes per group), in chunks
    of nodes whose working arrays hold at most limits.CHUNK values."""
    size = probs[0].size
    # nodes are sorted, so a short chunk's p are close and its windows (_window) narrow
    step = max(1, limits.CHUNK // max(L, 1) if L <= 256 else min(64, limits.CHUNK // L))
    if size <= step:
        return _below_chunk(counts, probs, L)
    return np.concatenate([_below_chunk(counts, [p[i:i + step] for p in probs], L) for i in range(0, size, step)])


#: a binomial's mass beyond WINDOW_SD standard deviations plus WINDOW_PAD counts of its mean is
#: below 1e-30 (Bernstein: P(|B − np| ≥ t) ≤ 2·exp(−t²/(2(npq + t/3))), at most 2e-31 for
#: t = 12σ + 60 whatever σ), far below the 1e-16 the sums are accurate to
WINDOW_SD, WINDOW_PAD = 12.0, 60.0


def _window(n: int, p: np.ndarray, L: int) -> tuple[int, int]:
    """The counts j in [lo, hi) that carry Bin(n, p)'s mass (all but < 1e-30) for every p of a
    chunk, within [0, min(n, L − 1)]."""
    sd = np.sqrt(n * p * (1.0 - p))
    lo = int(max(0.0, math.floor(float(np.min(n * p - WINDOW_SD * sd)) - WINDOW_PAD)))
    hi = int(min(min(n, L - 1), math.ceil(float(np.max(n * p + WINDOW_SD * sd)) + WINDOW_PAD))) + 1
    return lo, hi


def _terms(counts: Sequence[int], probs: Sequence[np.ndarray], L: int) -> float:
    """About how many binomial terms :func:`_below` evaluates (its windows, node by node)."""
    total = 0.0
    for n, p in zip(counts, probs, strict=True):
        sd = np.sqrt(n * p * (1.0 - p))
        lo = np.maximum(0.0, np.floor(n * p - WINDOW_SD * sd - WINDOW_PAD))
        hi = np.minimum(min(n, L - 1), np.ceil(n * p + WINDOW_SD * sd + WINDOW_PAD)) + 1
        total += float(np.sum(np.maximum(hi - lo, 0.0)))
    return total


#: a group's count window up to this wide is convolved directly (shifted sums), wider by FFT
DIRECT_WIDTH = 24


def _convolve(acc: np.ndarray, pmf: np.ndarray) -> np.ndarray:
    """Row-wise full convolution: directly for a narrow ``pmf`` (e.g. a group of one worker, a
    Bernoulli), exact and without FFT round-off; by FFT otherwise."""
    w = pmf.shape[1]
    if w > DIRECT_WIDTH:
        return np.asarray(signal.fftconvolve(acc, pmf, axes=1))
    out = np.zeros((acc.shape[0], acc.shape[1] + w - 1))
    for k in range(w):
        out[:, k:k + acc.shape[1]] += acc * pmf[:, k:k + 1]
    return out


def _below_chunk(counts: Sequence[int], probs: Sequence[np.ndarray], L: int) -> np.ndarray:
    *first, last = range(len(counts))
    acc: np.ndarray | None = None
    off = 0
    for g in first:
        n = counts[g]
        lo, hi = _window(n, probs[g], L)
        if lo >= hi or off + lo >= L:  # every count of the chunk is ≥ L already
            return np.zeros(probs[g].size)
        pmf = stats.binom.pmf(np.arange(lo, hi)[None, :], n, probs[g][:, None])
        acc = pmf if acc is None else _convolve(acc, pmf)
        off += lo
        acc = np.maximum(acc[:, : L - off], 0.0)  # counts ≥ L dropped; FFT round-off
    n = counts[last]
    if acc is None:
        return np.asarray(stats.binom.cdf(L - 1, n, probs[last]), float)
    j = off + np.arange(acc.shape[1])
    cdf = stats.binom.cdf((L - 1 - j)[None, :], n, probs[last][:, None])
    return np.asarray(np.sum(acc * cdf, axis=1), float)


def tail_index_of_kth(groups: Sequence[tuple[int, Mixture]], K: int) -> float:
    """The tail index of X_{K:m}: X_{K:m} > x needs m − K + 1 workers above x, so it is the
    sum of the m − K + 1 smallest of the workers' tail indices (inf for light tails)."""
    alphas = np.sort(np.concatenate([np.full(n, min(d.tail_index for _, d in mix)) for n, mix in groups]))
    m = alphas.size
    need = alphas[: m - K + 1]
    return float(need.sum()) if np.isfinite(need).all() else math.inf


def kth_of_independent(groups: Sequence[tuple[int, Mixture]], K: int, work: float = limits.ANALYTIC_WORK
                       ) -> Estimate:
    """E[X_{K:m}] and its standard deviation for independent workers in groups of i.i.d. laws
    (module doc); ``work`` bounds the binomial terms evaluated (beyond it: unavailable)."""
    counts = [n for n, _ in groups]
    mixes = [mix for _, mix in groups]
    m = sum(counts)
    alpha = tail_index_of_kth(groups, K)
    if alpha <= 1:
        return infinite(Text.of("method_kth_infinite", n=m - K + 1, alpha=alpha))
    if all(d.atoms is not None for mix in mixes for _, d in mix):  # exact sums: only the split point
        return _discrete_kth(counts, mixes, K, kth_median(_pooled(groups, m), K, m), work)  # type: ignore[arg-type]
    edges, c = _edges(groups, K, m)
    lo_edges, up_edges = edges[edges <= c], edges[edges >= c]

    def nodes(edges: np.ndarray, rule: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        if edges.size < 2:
            return np.empty(0), np.empty(0)
        x, w = gl_pieces(edges, rule)
        return x.ravel(), w.ravel()

    # every node's probabilities first (cheap): the binomial terms they need decide the budget
    with np.errstate(all="ignore"):
        rules = []
        for rule in (GL_HI, GL_LO):
            (xl, wl), (xu, wu) = nodes(lo_edges, rule), nodes(up_edges, rule)
            rules.append((xl, wl, [_sf(mx, xl) for mx in mixes], xu, wu, [_cdf(mx, xu) for mx in mixes]))
    nodes_n = sum(xl.size + xu.size for xl, _, _, xu, _, _ in rules)
    # the binomial terms of the windows, and each group's convolution into the running sum
    # (≈ its width × the running width, or an FFT of it) at every node
    terms = sum(_terms(counts, pl, m - K + 1) + _terms(counts, pu, K) for _, _, pl, _, _, pu in rules) \
        + nodes_n * (len(counts) - 1) * max(K, m - K + 1) * 8
    if terms > work:
        return unavailable(Text.of("method_pb_integral_budget", terms=terms, work=work))

    def integrals(xl: np.ndarray, wl: np.ndarray, pl: list[np.ndarray], xu: np.ndarray, wu: np.ndarray,
                  pu: list[np.ndarray]) -> tuple[float, float, float, float]:
        f = _below(counts, pl, m - K + 1) if xl.size else xl   # P(M ≤ m − K)
        s = _below(counts, pu, K) if xu.size else xu          # P(N < K)
        return (float(np.sum(wl * f)), float(np.sum(wu * s)), float(np.sum(wl * 2 * (c - xl) * f)),
                float(np.sum(wu * 2 * (xu - c) * s)))

    with np.errstate(all="ignore"):
        i_f, i_s, j_f, j_s = integrals(*rules[0])
        i_f2, i_s2, _, _ = integrals(*rules[1])
    mean = c - i_f + i_s
    err = abs((i_s - i_f) - (i_s2 - i_f2)) + 4e-16 * (abs(c) + abs(i_f) + abs(i_s))
    var = j_f + j_s - (mean - c) ** 2
    std = math.sqrt(max(var, 0.0)) if alpha > 2 else math.inf
    method = Text.of("method_pb_quadrature" if len(groups) > 1 else "method_pb_quadrature_one",
                     groups=len(groups))
    return Estimate(mean, numeric_kind(mean, err), method, std=std, error=err)


def _discrete_kth(counts: list[int], mixes: list[Mixture], K: int, c: float, work: float) -> Estimate:
    """Every law discrete (a trace's times): P(X_{K:m} > x) is constant between consecutive
    atoms, so the integrals are exact sums, one term per atom (c snapped to an atom)."""
    m = sum(counts)
    pts = np.unique(np.concatenate([[0.0], *[np.asarray(d.atoms, float) for mix in mixes for _, d in mix]]))
    c = float(pts[max(0, int(np.searchsorted(pts, c, side="right")) - 1)])
    nxt = np.append(pts[1:], pts[-1])  # beyond the largest atom every worker has finished
    left, right = pts < c, pts >= c
    xl, al, bl = pts[left], pts[left], nxt[left]
    xu, au, bu = pts[right], pts[right], nxt[right]
    with np.errstate(all="ignore"):
        pl, pu = [_sf(mx, xl) for mx in mixes], [_cdf(mx, xu) for mx in mixes]
    terms = _terms(counts, pl, m - K + 1) + _terms(counts, pu, K) + pts.size * (len(counts) - 1) * max(K, m - K + 1)
    if terms > work:
        return unavailable(Text.of("method_pb_sum_budget", terms=terms, work=work))
    f = _below(counts, pl, m - K + 1) if xl.size else xl  # P(X_{K:m} ≤ x) = P(M ≤ m − K) left of c
    s = _below(counts, pu, K) if xu.size else xu          # P(X_{K:m} > x) = P(N < K) right of c
    mean = c - float(np.sum(f * (bl - al))) + float(np.sum(s * (bu - au)))
    second = float(np.sum(f * ((c - al) ** 2 - (c - bl) ** 2))) + float(np.sum(s * ((bu - c) ** 2 - (au - c) ** 2)))
    var = second - (mean - c) ** 2
    return Estimate(mean, "numerical", Text.of("method_pb_sum" if len(counts) > 1 else "method_pb_sum_one",
                                               atoms=pts.size, groups=len(counts)),
                    std=math.sqrt(max(var, 0.0)), error=4e-16 * pts.size * abs(mean))


class _Pooled:
    """The pooled law G = Σ_c w_c F_c of every worker's mini-batch (weights sum to 1), with the
    ppf/isf :func:`breakpoints` asks for, by bisection between the components' quantiles.
    Σ_i F_i(x) = m·G(x): the count N(x) has the same mean as for m i.i.d. workers of law G and a
    smaller variance, so X_{K:m} moves from 0 to 1 where G's own X_{K:m} does, only faster."""

    def __init__(self, parts: list[tuple[float, Delay]]) -> None:
        self.parts = parts
        self.lower = min(float(d.support[0]) for _, d in parts)
        self.upper = max(float(d.support[1]) for _, d in parts)

    def _invert(self, q: np.ndarray, upper: bool) -> np.ndarray:
        q = np.asarray(q, float)
        guesses = np.array([Law(d).isf(q) if upper else Law(d).ppf(q) for _, d in self.parts])
        a, b = np.nanmin(guesses, axis=0), np.nanmax(guesses, axis=0)
        a = np.where(np.isfinite(a), a, self.lower)
        b = np.where(np.isfinite(b), b, np.minimum(np.maximum(2 * np.abs(a), 1.0) * 1e300, self.upper))
        for _ in range(200):  # geometric in the tails, arithmetic near the middle
            mid = np.where((a > 0) & (b / np.maximum(a, 1e-300) > 4), np.sqrt(a * b), (a + b) / 2)
            val = _sf(self.parts, mid) > q if upper else _cdf(self.parts, mid) < q
            a, b = np.where(val, mid, a), np.where(val, b, mid)
            if np.all(b - a <= 1e-13 * np.abs(b)):
                break
        return b

    def ppf(self, p: np.ndarray) -> np.ndarray:
        return self._invert(p, upper=False)

    def isf(self, q: np.ndarray) -> np.ndarray:
        return self._invert(q, upper=True)


def _pooled(groups: Sequence[tuple[int, Mixture]], m: int) -> _Pooled:
    return _Pooled([(n / m * w, d) for n, mix in groups for w, d in mix])


def _edges(groups: Sequence[tuple[int, Mixture]], K: int, m: int) -> tuple[np.ndarray, float]:
    """The breakpoints (sorted, finite, ≥ 0) and the split point c: the quantiles of the pooled
    law's X_{K:m}, and every atom of a discrete law."""
    pooled = _pooled(groups, m)
    lo, c, up, _q = breakpoints(pooled, K, m)  # type: ignore[arg-type]
    pts: list[np.ndarray] = [lo, up, np.array([c])]
    for _, d in pooled.parts:
        pts.append(np.asarray(d.support, float))  # a shift is a kink of the integrand
        atoms = d.atoms
        if atoms is not None:
            pts.append(np.asarray(atoms, float))
    edges = np.unique(np.concatenate(pts))
    return edges[np.isfinite(edges) & (edges >= 0.0)], float(c)
