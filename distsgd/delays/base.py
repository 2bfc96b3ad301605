"""The generic part of every delay law X = Δ + Y: validation of the parameters, the shift,
sampling, cdf/sf/pdf/ppf/isf through scipy.stats, and the hooks a family overrides where it
knows better (closed-form order statistics, the law of a sum, atoms).

cdf/sf/ppf/isf/pdf come from ``scipy.stats`` (loc = Δ); ``sample`` uses direct numpy samplers
where one exists (inverse-cdf otherwise).  ``isf`` is kept separate from ``ppf`` so that upper
order statistics of many workers keep their precision (``isf(v)`` for tiny ``v`` rather than
``ppf(1 − v)``).
"""

from __future__ import annotations

import dataclasses
import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

import numpy as np

from .. import limits
from ..estimate import Estimate
from ..numerics.quadrature import GL_HI, GL_LO, gl_pieces
from ..params import Domain, ParameterError
from ..params import shortest as _fmt
from ..random import generator

__all__ = ["Delay", "SHIFT", "THETA", "ParamView"]

# Domains are declared once, here, next to each family (DESIGN §2.1).  Their bounds keep every
# law *representable*: samples, their squares and sums of 1e7 of them stay finite, the mean
# and variance are finite floats unless truly infinite (never NaN).  The reasons for each
# bound are in distsgd/limits.py: time scales within [TIME_SCALE_MIN, TIME_SCALE_MAX] =
# [1e-9, 1e6], Pareto α ≥ 1/4, Weibull k ≥ 0.02, lognormal μ within [-20, 14] and σ ≤ 10.
_T_MIN, _T_MAX = limits.TIME_SCALE_MIN, limits.TIME_SCALE_MAX
assert (1e-6, 1e9) == (1 / _T_MAX, round(1 / _T_MIN)), "the rate domain below is 1/the time scales"

#: the shift Δ is a time: at most the largest time scale
SHIFT = Domain("shift", 0.0, _T_MAX, symbol="Δ", doc="constant part of every delay (Δ + Y)")
#: the argument θ of the moment-generating function E[e^{θX}] (DESIGN §12.3)
THETA = Domain("theta", 0.0, math.inf, high_open=True, symbol="θ", doc="argument of E[exp(θX)]")
#: tail probabilities at which the generic E[e^{θY}] splits the line above the median:
#: 2^-1 … 2^-66, then every 2^-4 down to ≈1e-300 (as the order-statistic quadrature)
_MGF_Q = np.concatenate([2.0 ** -np.arange(1, 67), 2.0 ** -np.arange(70, 997, 4)])
_MGF_P = 2.0 ** -np.arange(1, 61)
#: the generic E[e^{θY}] is trusted when the integrand at the last breakpoint is below e^-40 of
#: its peak, and the two Gauss–Legendre orders agree to this relative error; else it says inf
_MGF_TAIL_DROP = 40.0
_MGF_REL_TOL = 1e-9


@dataclass(frozen=True)
class ParamView:
    """How a dashboard shows one parameter of a family (the library itself never reads it): the
    control's ``key`` (also its URL key), its ``label`` (an English message id, translated where a
    catalogue has it), the ``default`` value, the slider's ``step`` and a ``help`` text ("": none).
    The range is the parameter's :class:`~distsgd.params.Domain`, which the dashboard may narrow."""

    key: str
    label: str
    default: float
    step: float = 0.01
    help: str = ""


#: the variable of a shifted density: f(x) = g(x − Δ)
_SHIFTED_VAR = "(x-\\Delta)"


def _array(x: Any, name: str) -> np.ndarray:
    """``x`` as a float array, or ParameterError naming ``name`` (no NaN allowed)."""
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError, OverflowError):
        raise ParameterError(name, "not_numbers", type=type(x).__name__) from None
    if np.isnan(a).any():
        raise ParameterError(name, "not_nan")
    return a


def _probabilities(q: Any, name: str = "q") -> np.ndarray:
    a = _array(q, name)
    if not (np.all(a >= 0.0) and np.all(a <= 1.0)):
        raise ParameterError(name, "probabilities")
    return a


def _size(size: Any) -> Any:
    """A sample size (None, an int or a tuple of ints) whose product is at most limits.MAX_SAMPLE_SIZE."""
    if size is None:
        return None
    dims = size if isinstance(size, (tuple, list)) else (size,)
    out = []
    total = 1
    for d in dims:
        if isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, np.integer)):
            raise ParameterError("size", "size_type", size=size)
        if d < 0:
            raise ParameterError("size", "size_negative", size=size)
        out.append(int(d))
        total *= int(d)
    if total > limits.MAX_SAMPLE_SIZE:
        raise ParameterError("size", "size_cap", cap=limits.MAX_SAMPLE_SIZE, total=total)
    return tuple(out) if isinstance(size, (tuple, list)) else out[0]


@dataclass(frozen=True, kw_only=True)
class Delay(ABC):
    """A non-negative delay X = Δ + Y with Y from a named family."""

    shift: float = 0.0

    name: ClassVar[str]
    PARAMS: ClassVar[tuple[Domain, ...]]
    #: spec keyword → dataclass field, where they differ (``mean`` is taken by the property)
    FIELDS: ClassVar[dict[str, str]] = {}
    #: how each field moves when every time is multiplied by s (:meth:`scaled`): a time is
    #: multiplied by s, a rate divided by s, a log-location shifted by log s
    SCALING: ClassVar[dict[str, str]] = {}
    # -- what a dashboard shows (declared here, so a new family reaches it with no other edit) --
    #: the dashboard's label of each spec name the class is registered under (English); a name
    #: not here is shown as itself
    TITLES: ClassVar[dict[str, str]] = {}
    #: spec names under which the dashboard offers no shift Δ (``exp``: the plain exponential)
    UNSHIFTED: ClassVar[tuple[str, ...]] = ()
    #: each parameter's :class:`ParamView` by spec keyword; :meth:`views` makes one for the others
    VIEWS: ClassVar[dict[str, ParamView]] = {}

    def __post_init__(self) -> None:
        for dom in self.PARAMS + (SHIFT,):
            attr = self.FIELDS.get(dom.name, dom.name)
            object.__setattr__(self, attr, dom.check(getattr(self, attr), dom.name))
        self._check_joint()

    def _check_joint(self) -> None:  # noqa: B027 - optional hook, empty by default
        """Constraints between parameters (e.g. low < high)."""

    # -- the family, without the shift ------------------------------------------------
    @abstractmethod
    def _scipy(self) -> Any:
        """The frozen scipy distribution of Y (shift not included)."""

    @cached_property
    def _dist(self) -> Any:
        return self._scipy()

    def _sample_base(self, rng: np.random.Generator, size: Any) -> np.ndarray:
        return self._dist.ppf(rng.random(size))

    # -- public interface ---------------------------------------------------------------
    @classmethod
    def views(cls) -> tuple[ParamView, ...]:
        """How a dashboard shows each parameter of :attr:`PARAMS`, in order: the declared
        :attr:`VIEWS` entry, else key ``<family>_<keyword>``, label ``<family> <symbol>``, the
        domain's value nearest 1 as default, a step of 1 (integer) or 0.01."""
        return tuple(cls.VIEWS.get(d.name) or ParamView(f"{cls.name}_{d.name}", f"{cls.name} {d.symbol or d.name}",
                                                        d.clamp(1.0), 1.0 if d.integer else 0.01)
                     for d in cls.PARAMS)

    def parameters(self) -> dict[str, float]:
        """The family parameters by spec keyword (shift excluded), in declaration order."""
        return {d.name: getattr(self, self.FIELDS.get(d.name, d.name)) for d in self.PARAMS}

    def scaled(self, s: float) -> Delay:
        """The law of s·X (the shift scaled too), in the same family: a straggler s times slower
        (DESIGN §7).  A ParameterError names the family parameter that leaves its domain."""
        if s == 1.0:
            return self
        change: dict[str, Any] = {"shift": self.shift * s}
        for f, how in self.SCALING.items():
            v = getattr(self, f)
            change[f] = v * s if how == "time" else v / s if how == "rate" else v + math.log(s)
        return dataclasses.replace(self, **change)

    def sample(self, rng: Any, size: Any = None) -> np.ndarray:
        """``size`` i.i.d. draws of X (vectorised); ``rng`` a Generator or a seed."""
        size = _size(size)
        x = np.asarray(self._sample_base(generator(rng), size), dtype=float)
        return x + self.shift if self.shift else x

    # public cdf/sf/pdf/ppf/isf validate their argument, then call the family's _cdf … _isf
    # (infinite values at the ends, ppf(1) = ∞ or x = ±∞, are results, not warnings)
    def cdf(self, x: Any) -> np.ndarray:
        with np.errstate(all="ignore"):
            return self._cdf(_array(x, "x"))

    def sf(self, x: Any) -> np.ndarray:
        with np.errstate(all="ignore"):
            return self._sf(_array(x, "x"))

    def pdf(self, x: Any) -> np.ndarray:
        with np.errstate(all="ignore"):
            return self._pdf(_array(x, "x"))

    def ppf(self, q: Any) -> np.ndarray:
        """Quantile function: the smallest x with P(X ≤ x) ≥ q, for q in [0, 1]."""
        with np.errstate(all="ignore"):
            return self._ppf(_probabilities(q))

    def isf(self, q: Any) -> np.ndarray:
        """Inverse survival function: the x with P(X > x) = q (precise for tiny q)."""
        with np.errstate(all="ignore"):
            return self._isf(_probabilities(q))

    def _cdf(self, x: np.ndarray) -> np.ndarray:
        return self._dist.cdf(x - self.shift)

    def _sf(self, x: np.ndarray) -> np.ndarray:
        return self._dist.sf(x - self.shift)

    def _pdf(self, x: np.ndarray) -> np.ndarray:
        return self._dist.pdf(x - self.shift)

    def _ppf(self, q: np.ndarray) -> np.ndarray:
        return self._dist.ppf(q) + self.shift

    def _isf(self, q: np.ndarray) -> np.ndarray:
        return self._dist.isf(q) + self.shift

    @property
    def mean(self) -> float:
        return float(self._dist.mean()) + self.shift

    @property
    def var(self) -> float:
        """Variance of X: a finite float, or ``inf`` only when it truly diverges (never NaN)."""
        return float(self._dist.var())

    @property
    def std(self) -> float:
        return math.sqrt(self.var)

    @property
    def tail_index(self) -> float:
        """α such that P(X > x) decays like x^{-α}: E[X^p] < ∞ iff p < α.  ``inf`` for the
        families with every moment finite (all but Pareto; a trace is bounded)."""
        return math.inf

    @property
    def support(self) -> tuple[float, float]:
        lo, hi = self._dist.support()
        return float(lo) + self.shift, float(hi) + self.shift

    @cached_property
    def is_nlu(self) -> bool:
        """New-longer-than-used: P(X > s+t | X > t) ≤ P(X > s) for all s, t ≥ 0.

        A shift keeps the property (for s or t < Δ the inequality is monotonicity of sf), and
        it cannot give it to the parametric families that lack it (their tails decide); a
        measured trace is checked with its shift.  Computed once per object.
        """
        return self._nlu()

    @abstractmethod
    def _nlu(self) -> bool: ...

    # -- what a family knows in closed form (the generic versions live in orderstats.py) ---------
    def order_statistic(self, k: int, n: int) -> Estimate | None:
        """E[X_{k:n}] (with its ``std``) in closed form, or None: then :mod:`distsgd.orderstats`
        integrates ``I_{1−F(x)}(n−k+1, k)``.  ``k``, ``n`` are already checked."""
        return None

    def sum_law(self, count: int) -> tuple[Any, float] | None:
        """The law of a sum of ``count`` copies of X as (a frozen scipy law of the sum of the
        unshifted parts, count·Δ), where the family knows it; else None."""
        return None

    @property
    def memoryless(self) -> bool:
        """P(X > s + t | X > t) = P(X > s): only the unshifted exponential."""
        return False

    # -- the moment-generating function (d-psgd's upper bound, DESIGN §12.3) --------------------------
    @property
    def mgf_radius(self) -> float:
        """sup{θ : E[e^{θX}] < ∞}: 0 under a power tail (the default when :attr:`tail_index` is
        finite), else inf unless the family says otherwise (the exponential's rate, 0 for the
        lognormal and Weibull k < 1).  :meth:`log_mgf` is inf for θ ≥ it."""
        return 0.0 if math.isfinite(self.tail_index) else math.inf

    def log_mgf(self, theta: float) -> float:
        """ln E[e^{θX}] for θ ≥ 0, ``inf`` where it diverges or cannot be certified.

        X = Δ + Y gives θΔ + ln E[e^{θY}].  E[e^{θY}] comes from the family's closed form
        (:meth:`_log_mgf`), else a finite sum over a discrete law's atoms, else the quadrature
        ``E[e^{θY}] = e^{θa} + θ ∫_a^∞ e^{θy} P(Y > y) dy`` (a the lower end of Y's support; by
        parts) on pieces split at quantiles of Y down to tail probability 1e-300, in log space;
        it says inf when the integrand has not decayed by e^-40 at the last piece (the function
        may not exist) or two Gauss–Legendre orders disagree — a bound built on it stays valid.

        >>> from distsgd.delays import parse_delay
        >>> round(parse_delay("exp(rate=2)").log_mgf(1.0), 12) == round(math.log(2.0), 12)   # λ/(λ−θ)
        True
        """
        theta = THETA.check(theta, "theta")
        if theta == 0.0:
            return 0.0
        if theta >= self.mgf_radius:
            return math.inf
        y = self._log_mgf(theta)
        if y is None:
            y = self._log_mgf_generic(theta)
        return theta * self.shift + y

    def _log_mgf(self, theta: float) -> float | None:
        """ln E[e^{θY}] of the unshifted part in closed form, or None (generic); 0 < θ < radius."""
        return None

    def _log_mgf_generic(self, theta: float) -> float:
        """ln E[e^{θY}]: a finite sum over atoms, else the quadrature of :meth:`log_mgf`."""
        atoms = self.atoms
        if atoms is not None:
            u = np.unique(np.asarray(atoms, float))  # shifted support points
            mass = np.diff(np.concatenate([[0.0], self._cdf(u)]))
            keep = mass > 0
            z = theta * (u[keep] - self.shift) + np.log(mass[keep])
            top = float(z.max())
            return top + math.log(float(np.exp(z - top).sum()))
        lo, hi = (v - self.shift for v in self.support)
        with np.errstate(all="ignore"):
            inner = np.concatenate([self._ppf(_MGF_P[::-1]), self._isf(_MGF_Q)]) - self.shift
        edges = np.unique(np.clip(inner[np.isfinite(inner)], lo, hi))
        edges = np.unique(np.concatenate([[lo], edges, [hi] if math.isfinite(hi) else []]))

        def log_integrand(y: np.ndarray) -> np.ndarray:
            with np.errstate(all="ignore"):
                return theta * y + np.log(self._sf(y + self.shift))

        g_edges = log_integrand(edges)
        sums = []
        peak = -math.inf
        parts = []
        for rule in (GL_HI, GL_LO):
            x, w = gl_pieces(edges, rule)
            g = log_integrand(x)
            parts.append((g, w))
            peak = max(peak, float(np.max(g, initial=-math.inf)), float(np.max(g_edges, initial=-math.inf)))
        if not math.isfinite(peak):
            return theta * lo  # Y = lo almost surely
        if not math.isfinite(hi) and not g_edges[-1] < peak - _MGF_TAIL_DROP:
            return math.inf  # the integrand has not decayed: the function may not exist
        for g, w in parts:
            sums.append(float(np.sum(w * np.exp(np.where(np.isfinite(g), g - peak, -np.inf)))))
        hi_sum, lo_sum = sums
        if not (hi_sum > 0 and abs(hi_sum - lo_sum) <= _MGF_REL_TOL * hi_sum):
            return math.inf  # cannot certify the value
        return float(np.logaddexp(theta * lo, math.log(theta) + peak + math.log(hi_sum)))

    @property
    def atoms(self) -> np.ndarray | None:
        """The support points of a discrete law (a trace; shift included), None for a density."""
        return None

    @property
    def constant(self) -> float | None:
        """The value of X when it is a constant (a trace of equal values), else None."""
        return None

    @property
    def jump_spacing(self) -> float | None:
        """The distance between the density's two jumps inside the support (the uniform's
        b − a), else None: lattices whose step divides it keep the error expansion regular."""
        return None

    @property
    def key(self) -> str:
        """A short string that identifies the law exactly (a cache key): the spec string for
        the parametric families (it round-trips through :func:`parse_delay`)."""
        return str(self)

    @property
    def label(self) -> str:
        """Short human label, e.g. ``Δ + Exp(λ=2)`` with numbers filled in."""
        base = self._label()
        return f"{_fmt(self.shift)} + {base}" if self.shift else base

    @abstractmethod
    def _label(self) -> str: ...

    @property
    def latex(self) -> str:
        """The density of X in LaTeX (for st.latex): ``f(x) = g(x)``, or with a shift
        ``f(x) = g(x − Δ)`` — the family's density written in the variable ``(x-\\Delta)``."""
        if self.shift:
            return "f(x) = " + self._latex(_SHIFTED_VAR) + ",\\quad \\Delta = " + _fmt(self.shift)
        return "f(x) = " + self._latex("x")

    @abstractmethod
    def _latex(self, v: str) -> str:
        """The density of the unshifted family in the variable ``v`` (with its parameters)."""

    def spec_items(self) -> list[tuple[str, float | str]]:
        items: list[tuple[str, float | str]] = list(self.parameters().items())
        if self.shift:
            items.append(("shift", self.shift))
        return items

    def __str__(self) -> str:
        args = ", ".join(f"{k}={_fmt(v) if isinstance(v, float) else v}" for k, v in self.spec_items())
        return f"{self.name}({args})"


