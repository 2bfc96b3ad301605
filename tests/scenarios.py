"""The one table of scenarios and what each row must give (DESIGN §2, §6).

Rows: every scheme × every delay family (with and without a shift, Pareto with finite
variance, with infinite variance and with an infinite mean) × m ∈ {4, 64, 1000} (1000 is the
dashboard's maximum) × K at 1, m/2 and m (and 2m + 1 for the batch schemes, which allow K > m,
at the two smaller m) × local SGD with H ∈ {1, 4} and a communication time D ∈ {0, 0.5}.

Everything a row is checked against is computed *here*, from the model of DESIGN §2 and
independently of the code under test:

* :func:`expected_kind` — which kind of analytic result the row must carry, from the
  families' closed forms and the schemes' theory (stated in the docstring);
* :func:`os_mean` — ``E[X_{k:n}]``: closed forms (exponential, Pareto, uniform), a finite
  binomial sum for a trace, ``scipy.integrate.quad`` of ``P(X_{k:n} > x)`` for the others,
  with the family's cdf/sf written out below;
* :func:`law_mean` and friends — E[X] per family, the finiteness of moments of the simulated
  statistic (a confidence interval needs a finite variance), NLU by definition for a trace.

``DELAYS`` (one representative per family, as before) is also used by test_delays.py and
test_engines.py; the crosscheck table uses the larger ``LAWS``.
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import integrate, special, stats

from distsgd.reasons import Phrase, Text

DATA = Path(__file__).parent / "data"
TRACE = DATA / "trace.csv"


# ----------------------------------------------------------------------------------------
# delay laws
# ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Law:
    """A delay law of DESIGN §2, by family and parameters (the spec string is derived)."""

    key: str
    family: str  # exp, pareto, lognormal, normal, weibull, uniform, empirical
    params: tuple[tuple[str, float], ...] = ()
    shift: float = 0.0
    values: tuple[float, ...] = ()  # an empirical law's times (empty: tests/data/trace.csv)

    def __getitem__(self, name: str) -> float:
        return dict(self.params)[name]

    @property
    def spec(self) -> str:
        if self.family == "empirical":
            body = f"file={TRACE}"
        else:
            body = ", ".join(f"{k}={v:g}" for k, v in self.params)
        name = self.family
        if self.family == "exp" and self.shift:
            name = "shifted-exp"
        if self.shift:
            body += f", shift={self.shift:g}"
        return f"{name}({body})"


def _law(key: str, family: str, shift: float = 0.0, **params: float) -> Law:
    return Law(key, family, tuple(params.items()), shift)


#: one law per family and variant; "+d" keys are the shifted variants of a family
LAWS: dict[str, Law] = {law.key: law for law in [
    _law("exp", "exp", rate=2.0),
    _law("shifted-exp", "exp", 0.5, rate=1.0),
    _law("pareto", "pareto", xm=1.0, alpha=2.5),              # finite variance
    _law("pareto-heavy", "pareto", xm=1.0, alpha=1.5),        # the dashboard's preset: Var[X] = ∞
    _law("pareto-infmean", "pareto", xm=1.0, alpha=0.8),      # E[X] = ∞
    _law("lognormal", "lognormal", mu=0.0, sigma=0.75),
    _law("normal", "normal", mean=1.0, std=0.5),
    _law("weibull-dfr", "weibull", shape=0.7, scale=1.0),
    _law("weibull-ifr", "weibull", 0.2, shape=1.5, scale=1.0),
    _law("uniform", "uniform", low=0.5, high=1.5),
    _law("empirical", "empirical"),
    # a shift in every family (the exponential's and the increasing-hazard Weibull's are above)
    _law("pareto+d", "pareto", 0.3, xm=1.0, alpha=2.5),
    _law("pareto-heavy+d", "pareto", 0.3, xm=1.0, alpha=1.5),
    _law("lognormal+d", "lognormal", 0.3, mu=0.0, sigma=0.75),
    _law("normal+d", "normal", 0.3, mean=1.0, std=0.5),
    _law("weibull-dfr+d", "weibull", 0.3, shape=0.7, scale=1.0),
    _law("uniform+d", "uniform", 0.3, low=0.5, high=1.5),
    _law("empirical+d", "empirical", 0.05),  # Δ = 5 median trace times (a communication round)
]}

#: the laws that also get rows at m = 1000 (the shifted variants stop at m = 64)
LAWS_AT_LARGE_M = ("exp", "shifted-exp", "pareto", "pareto-heavy", "pareto-infmean", "lognormal", "normal",
                   "weibull-dfr", "weibull-ifr", "uniform", "empirical")

#: one representative of each family (used by test_delays.py and test_engines.py too)
DELAYS: dict[str, str] = {k: LAWS[k].spec for k in (
    "exp", "shifted-exp", "pareto", "lognormal", "normal", "weibull-dfr", "weibull-ifr", "uniform", "empirical")}


@functools.cache
def _trace_file_values() -> np.ndarray:
    """The first column of tests/data/trace.csv (a '#' comment line and a header line first)."""
    rows = [ln for ln in TRACE.read_text().splitlines() if ln.strip() and not ln.startswith("#")]
    return np.sort(np.array([float(r.split(",")[0]) for r in rows[1:]]))


def trace_values(law: Law) -> np.ndarray:
    """An empirical law's times, sorted, without the shift."""
    return np.sort(np.array(law.values)) if law.values else _trace_file_values()


# -- the family's functions, written out (Y = X − Δ ≥ 0) ---------------------------------

def _sf_cdf(law: Law, y: float) -> tuple[float, float]:
    """(P(Y > y), P(Y ≤ y)), each computed directly (no 1 − x where x is near 1)."""
    f = law.family
    if y <= 0.0:
        return 1.0, 0.0
    if f == "lognormal":
        z = (math.log(y) - law["mu"]) / law["sigma"]
        return float(special.ndtr(-z)), float(special.ndtr(z))
    if f == "weibull":
        u = (y / law["scale"]) ** law["shape"]
        return math.exp(-u), -math.expm1(-u)
    if f == "normal":  # N(μ, σ²) conditioned on ≥ 0
        mu, sd = law["mean"], law["std"]
        p0 = special.ndtr(mu / sd)
        return (float(special.ndtr((mu - y) / sd) / p0),
                float((special.ndtr((y - mu) / sd) - special.ndtr(-mu / sd)) / p0))
    raise ValueError(f)


def _quantile(law: Law, p: float, upper: bool) -> float:
    """The y with P(Y ≤ y) = p (upper=False) or P(Y > y) = p (upper=True): breakpoints only."""
    f = law.family
    if f == "lognormal":
        z = special.ndtri(p)
        return math.exp(law["mu"] + law["sigma"] * (-z if upper else z))
    if f == "weibull":
        u = -math.log(p) if upper else -math.log1p(-p)
        return law["scale"] * u ** (1.0 / law["shape"])
    if f == "normal":
        mu, sd = law["mean"], law["std"]
        p0 = special.ndtr(mu / sd)
        if upper:
            return max(mu - sd * special.ndtri(p * p0), 0.0)
        return max(mu + sd * special.ndtri(special.ndtr(-mu / sd) + p * p0), 0.0)
    raise ValueError(f)


def law_mean(law: Law) -> float:
    """E[X] from the family's formula (∞ for Pareto with α ≤ 1)."""
    f, d = law.family, law.shift
    if f == "exp":
        return d + 1.0 / law["rate"]
    if f == "pareto":
        a = law["alpha"]
        return math.inf if a <= 1 else d + a * law["xm"] / (a - 1)
    if f == "lognormal":
        return d + math.exp(law["mu"] + law["sigma"] ** 2 / 2)
    if f == "normal":
        a = law["mean"] / law["std"]
        return d + law["mean"] + law["std"] * stats.norm.pdf(a) / stats.norm.cdf(a)
    if f == "weibull":
        return d + law["scale"] * math.gamma(1 + 1 / law["shape"])
    if f == "uniform":
        return d + (law["low"] + law["high"]) / 2
    if f == "empirical":
        return d + float(np.mean(trace_values(law)))
    raise ValueError(f)


def law_var_finite(law: Law) -> bool:
    """Var[X] < ∞: every family here except Pareto with α ≤ 2."""
    return not (law.family == "pareto" and law["alpha"] <= 2)


@functools.cache
def law_nlu(law: Law) -> bool:
    """New-longer-than-used, P(X > s+t) ≤ P(X > s)·P(X > t) for all s, t ≥ 0 (DESIGN §2).

    Families, from their hazard rates: exponential (constant), uniform and the truncated normal
    (log-concave densities: increasing hazard), Weibull k ≥ 1 (increasing hazard) are NLU, and a
    shift keeps that; Pareto, lognormal and Weibull k < 1 have hazards that fall to 0, so
    P(X > s+t | X > t) → 1 as t → ∞ and they are not, shift or not.  A trace is checked on
    the definition: its sf is a step function, constant on [x_j, x_{j+1}), so the worst pairs
    are s, t ∈ {0} ∪ {x_j} (the smallest s + t for given sf(s), sf(t)).
    """
    f = law.family
    if f in ("exp", "uniform", "normal"):
        return True
    if f == "weibull":
        return law["shape"] >= 1
    if f in ("pareto", "lognormal"):
        return False
    x = trace_values(law) + law.shift
    pts = np.concatenate([[0.0], np.unique(x)])

    def sf(t: np.ndarray) -> np.ndarray:
        return 1.0 - np.searchsorted(x, t, side="right") / x.size

    return bool(np.all(sf(pts[:, None] + pts[None, :]) <= sf(pts)[:, None] * sf(pts)[None, :] + 1e-12))


# -- order statistics -----------------------------------------------------------------------

CLOSED_FORM_FAMILIES = ("exp", "pareto", "uniform", "empirical")


def os_finite(law: Law, k: int, n: int, power: int = 1) -> bool:
    """E[X_{k:n}^power] < ∞.  Only Pareto has a tail heavy enough to matter here:
    P(X_{k:n} > x) ~ C(n, n−k+1) (x_m/x)^{α(n−k+1)}, so the power-th moment is finite iff
    α(n−k+1) > power."""
    if law.family == "pareto":
        return law["alpha"] * (n - k + 1) > power
    return True


@functools.cache
def os_mean(law: Law, k: int, n: int) -> float:
    """E[X_{k:n}], the k-th smallest of n i.i.d. copies of X, computed independently.

    Closed forms (DESIGN §2): exponential Δ + Σ_{i=n−k+1}^{n} 1/(λi) (Rényi); Pareto
    Δ + x_m Γ(n+1)Γ(n−k+1−1/α)/(Γ(n−k+1)Γ(n+1−1/α)); uniform Δ + a + (b−a)k/(n+1).  A trace:
    Σ_j x_j P(X_{k:n} = x_j) with P(X_{k:n} ≤ x) = P(Bin(n, F(x)) ≥ k).  Otherwise
    Δ + ∫_0^∞ P(Bin(n, F(y)) < k) dy by scipy quad, split at quantiles of X_{k:n}.
    """
    f, d = law.family, law.shift
    if not os_finite(law, k, n):
        return math.inf
    if f == "exp":
        return d + math.fsum(1.0 / i for i in range(n - k + 1, n + 1)) / law["rate"]
    if f == "pareto":
        a, g = law["alpha"], special.gammaln
        return d + law["xm"] * math.exp(g(n + 1) + g(n - k + 1 - 1 / a) - g(n - k + 1) - g(n + 1 - 1 / a))
    if f == "uniform":
        return d + law["low"] + (law["high"] - law["low"]) * k / (n + 1)
    if f == "empirical":
        v = trace_values(law)
        x = np.unique(v)
        F = np.searchsorted(v, x, side="right") / v.size
        below = special.bdtrc(k - 1, n, F)  # P(X_{k:n} ≤ x_j) = P(Bin(n, F(x_j)) ≥ k)
        pmf = np.diff(np.concatenate([[0.0], below]))
        return d + math.fsum(x * pmf)
    return d + _os_quad(law, k, n)


def _os_quad(law: Law, k: int, n: int) -> float:
    def survival(y: float) -> float:  # P(Y_{k:n} > y)
        S, F = _sf_cdf(law, y)
        if F <= 0.5:
            return float(special.bdtr(k - 1, n, F))  # P(Bin(n, F) ≤ k − 1)
        return float(special.bdtrc(n - k, n, S))  # P(Bin(n, S) ≥ n − k + 1), precise for small S

    lo_p = [1e-15, 1e-10, 1e-6, 1e-3, 0.05, 0.25, 0.5]
    up_q = [0.25, 0.05, 1e-3, 1e-6, 1e-10, 1e-15, 1e-22, 1e-30]
    pts = [_quantile(law, float(stats.beta.ppf(p, k, n - k + 1)), upper=False) for p in lo_p]
    pts += [_quantile(law, float(stats.beta.ppf(q, n - k + 1, k)), upper=True) for q in up_q]
    edges = np.unique(np.clip(np.concatenate([[0.0], pts]), 0.0, None))
    edges = edges[np.isfinite(edges)]
    total = math.fsum(integrate.quad(survival, a, b, epsabs=0.0, epsrel=1e-12, limit=200)[0]
                      for a, b in itertools.pairwise(edges))
    # beyond the last edge P(X_{k:n} > y) < 1e-30: the tail is negligible for these families
    return total


def gamma_max_mean(m: int, H: int, rate: float) -> float:
    """E[max of m i.i.d. Gamma(H, λ)] = ∫_0^∞ (1 − G(x)^m) dx, by scipy quad on pieces."""
    g = stats.gamma(H, scale=1.0 / rate)
    f = lambda x: -math.expm1(m * g.logcdf(x)) if x > 0 else 1.0  # noqa: E731
    edges = [0.0] + [float(g.isf(q)) for q in (0.5, 1e-2 / m, 1e-6 / m, 1e-12 / m, 1e-20 / m)]
    return math.fsum(integrate.quad(f, a, b, epsabs=0, epsrel=1e-13, limit=200)[0]
                     for a, b in itertools.pairwise(edges))


# ----------------------------------------------------------------------------------------
# scenarios
# ----------------------------------------------------------------------------------------

MS = (4, 64, 1000)
LARGE_M = 1000
SCHEMES = ("sync", "k-sync", "k-batch-sync", "async", "k-async", "k-batch-async", "local-sgd")
LOCAL = ((1, 0.0), (1, 0.5), (4, 0.0), (4, 0.5))  # (H, D)

ITERATIONS = 40_000
#: delays drawn per row at most: the precision of a row's mean is set by the draws it averages
#: (an iteration of k-batch-sync with K = 129 averages 129 pushes), so a row whose iteration
#: draws many delays runs fewer iterations, down to ITERATIONS_MIN.  At ~10⁶ draws the
#: half-widths were 0.05–1 % of the mean; at 5·10⁵ they are √2 wider (the tolerance is each
#: row's own interval), for half the time of the m = 64 rows
DRAWS = 500_000
#: the fewest iterations of any row (m = 1000 with K ≥ m/2, local SGD at m ≥ 64 with H = 4):
#: enough batches for the batch-means interval of a long run.  These rows' iterations are nearly
#: independent (each waits for at least half of the m workers, or averages H·m steps) and each
#: averages ≥ 500 draws; the tolerance is the run's own interval, so fewer iterations widen it
ITERATIONS_MIN = 2_000


@dataclass(frozen=True)
class Scenario:
    scheme: str
    m: int
    K: int | None
    H: int | None
    law: Law
    D: float = 0.0

    @property
    def delay(self) -> str:
        return self.law.spec

    @property
    def delay_key(self) -> str:
        return self.law.key

    @property
    def id(self) -> str:
        extra = f"-K{self.K}" if self.K is not None else ""
        if self.H is not None:
            extra = f"-H{self.H}-D{self.D:g}"
        return f"{self.scheme}-m{self.m}{extra}-{self.law.key}"

    @property
    def slow(self) -> bool:
        return self.m >= LARGE_M

    @property
    def draws_per_iteration(self) -> int:
        """Delays an iteration of the Monte Carlo averages: one order statistic (sync, k-sync,
        local SGD with H = 1), K pushes (the renewal schemes), m sums of H delays (local SGD)."""
        if self.scheme in ("sync", "k-sync") or (self.scheme == "local-sgd" and self.H == 1):
            return 1
        if self.scheme == "local-sgd":
            return self.m * (self.H or 1)
        return self.K or 1

    @property
    def iterations(self) -> int:
        return max(ITERATIONS_MIN, min(ITERATIONS, DRAWS // self.draws_per_iteration))


def _ks(scheme: str, m: int) -> list[int | None]:
    if scheme in ("sync", "async", "local-sgd"):
        return [None]
    ks: list[int | None] = sorted({1, max(1, m // 2), m})
    if scheme in ("k-batch-sync", "k-batch-async") and m < LARGE_M:
        ks.append(2 * m + 1)  # the batch schemes allow K > m (the dashboard keeps K ≤ m)
    return ks


def scenarios() -> list[Scenario]:
    out = []
    for law in LAWS.values():
        for scheme in SCHEMES:
            for m in MS:
                if m >= LARGE_M and law.key not in LAWS_AT_LARGE_M:
                    continue
                for K in _ks(scheme, m):
                    if scheme == "local-sgd":
                        out.extend(Scenario(scheme, m, None, H, law, D) for H, D in LOCAL)
                    else:
                        out.append(Scenario(scheme, m, K, None, law))
    return out


# ----------------------------------------------------------------------------------------
# what each row must give
# ----------------------------------------------------------------------------------------

def _os_kind(law: Law, k: int, n: int) -> str:
    if not os_finite(law, k, n):
        return "infinite"
    return "exact" if law.family in CLOSED_FORM_FAMILIES else "numerical"


def expected_kind(sc: Scenario) -> str:  # noqa: C901 - the oracle, case by case
    """The kind of E[T] the analytic code must report for this row, from DESIGN §2:

    * sync and k-sync are E[X_{m:m}] and E[X_{K:m}]: ``exact`` where the order statistic has a
      closed form (exponential with any shift, Pareto, uniform, and a trace — a finite sum),
      ``numerical`` (quadrature) for lognormal, truncated normal and Weibull, ``infinite``
      when it diverges (Pareto with α(m−K+1) ≤ 1).
    * async and k-batch-async are K·E[X]/m by the elementary renewal theorem: ``exact``,
      ``infinite`` when E[X] = ∞ (Pareto α ≤ 1).
    * k-async: K = 1 is async and K = m is sync (every pusher waits for all); the memoryless
      exponential without shift gives (H_m − H_{m−K})/λ, ``exact``; otherwise E[X_{K:m}] is
      an ``upper_bound`` when X is new-longer-than-used, else nothing is known: ``unavailable``.
    * k-batch-sync: exponential without shift is a Poisson superposition, K/(mλ), ``exact``;
      K = 1 is the first of m first completions, E[X_{1:m}] (kinds as for k-sync); otherwise
      ∫ P(N(t) < K) dt, ``numerical``, and ``infinite`` iff m·α ≤ 1 for Pareto (T lies between
      X_{1:m}, whose tail is x^{−mα}, and the time the fastest worker alone needs for K jobs,
      whose tail is ≤ (K·x^{−α})^m up to constants).
    * local SGD, per local step: H = 1 is E[X_{m:m}] + D (kinds as for sync); for H > 1 the
      maximum of m sums of H delays is ``numerical`` (quadrature of the Gamma law for the
      exponential, lattice convolutions otherwise), ``infinite`` when E[X] = ∞.
    """
    law, m, K = sc.law, sc.m, sc.K
    memoryless = law.family == "exp" and law.shift == 0
    mean_finite = math.isfinite(law_mean(law))
    if sc.scheme == "sync":
        return _os_kind(law, m, m)
    if sc.scheme == "k-sync":
        return _os_kind(law, K, m)
    if sc.scheme in ("async", "k-batch-async"):
        return "exact" if mean_finite else "infinite"
    if sc.scheme == "k-async":
        if K == 1:
            return "exact" if mean_finite else "infinite"
        if K == m:
            return _os_kind(law, m, m)
        if memoryless:
            return "exact"
        return "upper_bound" if law_nlu(law) else "unavailable"
    if sc.scheme == "k-batch-sync":
        if memoryless:
            return "exact"
        if K == 1:
            return _os_kind(law, 1, m)
        if law.family == "pareto" and m * law["alpha"] <= 1:
            return "infinite"
        return "numerical"
    if sc.scheme == "local-sgd":
        if sc.H == 1:
            return _os_kind(law, m, m)
        return "numerical" if mean_finite else "infinite"
    raise ValueError(sc.scheme)


def statistic_has_finite_variance(sc: Scenario) -> bool:
    """Is the variance of what the Monte Carlo averages finite (so that its CI means something)?

    * an order statistic X_{K:m} (sync, k-sync, local SGD with H = 1, k-async with K = m):
      finite iff E[X_{K:m}²] < ∞, for Pareto iff α(m−K+1) > 2;
    * k-batch-sync: T lies between X_{1:m} and the fastest worker's time for K jobs, both with
      tails of order x^{−mα}: finite iff m·α > 2 (K = 1 is X_{1:m}, the same condition);
    * the long runs (async, k-async with K < m, k-batch-async) and local SGD with H > 1 add up
      single delays: their batch means need Var[X] < ∞.
    """
    law, m, K = sc.law, sc.m, sc.K
    if sc.scheme == "sync" or (sc.scheme == "local-sgd" and sc.H == 1) or (sc.scheme == "k-async" and K == m):
        return os_finite(law, m, m, power=2)
    if sc.scheme == "k-sync":
        return os_finite(law, K, m, power=2)
    if sc.scheme == "k-batch-sync":
        return not (law.family == "pareto" and m * law["alpha"] <= 2)
    return law_var_finite(law)


def reference(sc: Scenario) -> float | None:
    """The value E[T] must have, from the formulas above, where one is known independently:
    the order-statistic rows, the renewal rates, the Poisson superposition, the Gamma maximum
    of local SGD with exponential delays, and — for the k-async bound — E[X_{K:m}]."""
    law, m, K = sc.law, sc.m, sc.K
    memoryless = law.family == "exp" and law.shift == 0
    if sc.scheme == "sync":
        return os_mean(law, m, m)
    if sc.scheme == "k-sync":
        return os_mean(law, K, m)
    if sc.scheme in ("async", "k-batch-async") or (sc.scheme == "k-async" and K == 1):
        return (K or 1) * law_mean(law) / m
    if sc.scheme == "k-async":
        return os_mean(law, K, m)  # exact for K = m and memoryless; the bound otherwise
    if sc.scheme == "k-batch-sync":
        if memoryless:
            return K / (m * law["rate"])
        if K == 1:
            return os_mean(law, 1, m)
        return None
    if sc.scheme == "local-sgd":
        if sc.H == 1:
            return os_mean(law, m, m) + sc.D
        if law.family == "exp":
            return (sc.H * law.shift + gamma_max_mean(m, sc.H, law["rate"]) + sc.D) / sc.H
        return None
    raise ValueError(sc.scheme)


def local_sgd_bounds(sc: Scenario) -> tuple[float, float]:
    """Pathwise bounds on the runtime per local step of local SGD, S_i = X_i1 + … + X_iH:
    max_i S_i ≤ Σ_h max_i X_ih, and max_i S_i ≥ S_j for j the worker with the slowest first
    step (its later steps are independent of that choice), so
    (E[X_{m:m}] + (H−1)E[X] + D)/H ≤ E[T] ≤ E[X_{m:m}] + D/H."""
    top, mean = os_mean(sc.law, sc.m, sc.m), law_mean(sc.law)
    H = sc.H
    return (top + (H - 1) * mean + sc.D) / H, top + sc.D / H


# ----------------------------------------------------------------------------------------
# what every row's analytic result must say of itself
# ----------------------------------------------------------------------------------------

#: the fields of a method's phrase that hold English of their own (the rest: numbers, names, formulas)
_WORDED = {"method", "then", "bound", "other", "why", "per_step", "heavy"}


def translatable(method: object) -> None:
    """An analytic result's method is made of reason phrases all the way down (reasons.Text), so
    the dashboard can write it in every language: no English joined on as plain text."""
    def check(p: Phrase, where: str) -> None:
        for k, v in p.fields.items():
            if k in _WORDED:
                assert isinstance(v, (Text, Phrase)), f"{where}.{k} is plain text: {v!r}"
                check(v.phrase if isinstance(v, Text) else v, f"{where}.{k}")

    assert isinstance(method, Text), f"the method is plain text: {method!r}"
    check(method.phrase, method.phrase.code)
