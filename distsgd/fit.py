"""Maximum-likelihood fits of the delay families of DESIGN §2 to measured times (§7), ranked by
AIC, each with its KS statistic and given back as a spec string :func:`~distsgd.delays.parse_delay`
reads; and :func:`fit_report`, the JSON of ``python -m distsgd fit``.

What each family's fit fixes (k counts the fitted parameters, a fitted shift included):

* ``exp``: loc = 0, λ = 1/mean (``expon.fit(floc=0)``); k = 1.
* ``shifted-exp``: ``expon.fit``: Δ̂ = min(x), 1/λ̂ = mean − min (the MLE); k = 2.  Δ̂ − Δ is
  Exp(nλ), so Δ̂ is on average 1/(nλ) too high and 1/λ̂ a factor (n − 1)/n too small; this is
  not corrected (AIC compares maximised likelihoods; the bias is one standard error of Δ̂).
* ``pareto``: ``pareto.fit(floc=0)``: x_m = min(x), α̂ = n/Σ log(x/x_m); k = 2.  The spec's
  ``pareto(xm, alpha)`` is scipy's ``pareto(b=alpha, scale=xm)``.
* ``lognormal``: ``lognorm.fit(floc=0)``: μ̂, σ̂ the mean and (1/n) standard deviation of log x; k = 2.
* ``normal`` (N(μ, σ²) conditioned on X ≥ 0): ``truncnorm.fit`` cannot tie the truncation point
  to loc and scale (a = −μ/σ), so the exact likelihood is maximised with scipy.optimize: σ in
  closed form given t = μ/σ, and ``minimize_scalar`` (bounded Brent) over t ≥ −30, the family's
  domain.  It is an exponential family: the likelihood depends on the data through n, Σx, Σx²
  only, so each step is O(1), and the MLE matches the mean and second moment of the data; k = 2.
* ``weibull``: ``weibull_min.fit(floc=0)``; k = 2.  scipy has no closed form here (a generic
  optimiser over all the times): above :data:`SUBSAMPLE` times it is fitted on a subsample of
  that many, drawn without replacement with seed :data:`SUBSAMPLE_SEED`; the log-likelihood,
  AIC and KS are still those of every time.
* ``uniform``: ``uniform.fit``: low = min(x), high = max(x) (the MLE; on average (b − a)/(n + 1)
  inside each end, not corrected); k = 2.

"With a shift where it helps": pareto, lognormal, normal and weibull are also fitted with a
shift Δ (k + 1), and the better of the two by AIC is kept.  The shift is scipy's MLE of loc
where that is well defined: ``pareto.fit`` and ``lognorm.fit`` with loc free (a root of the
profile likelihood; lognorm's is the interior local maximum) and ``weibull_min.fit`` with loc
free (on the subsample); for the truncated normal the MLE is Δ̂ = min(x) exactly (at fixed
location and scale, raising the truncation point raises every density).  When the MLE is
negative the constrained MLE (Δ ≥ 0) is the unshifted fit, and the shifted variant is left out.
When there is no interior maximum — lognormal without a root, Weibull with shape ≤ 1, whose
likelihood grows without bound as Δ → min(x) (or scipy's Weibull loc at or above min(x)) — the
shift is fixed by the rule Δ = max(0, min(x) − g), g the gap between the two smallest distinct
times, and the other parameters are fitted at it (the shift still counts in k).

Parameters are rounded to :data:`DIGITS` significant digits of their resolution (a location
to that many digits of the spread of the times, so a shift of 1000 on times 1000–1001 keeps
its decimals), the shift, x_m and low downwards and high upwards so that every time stays in
the support; the log-likelihood and KS are those of the rounded law, the one the spec gives.
"""

from __future__ import annotations

import dataclasses
import math
import re
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_EVEN, Decimal
from typing import Any

import numpy as np
from scipy import optimize, special, stats

from . import limits
from .delays import FAMILIES as _REGISTRY
from .delays import Delay, TruncatedNormal, parse_delay
from .params import ParameterError, shortest
from .random import generator
from .reasons import Phrase
from .traces import THRESHOLD, Trace

__all__ = ["Fit", "Fits", "fit_laws", "fit_report", "FAMILIES", "DIGITS", "SUBSAMPLE", "SUBSAMPLE_SEED"]

#: the parametric families of DESIGN §2 (the registry's families with parameters, in its order): a
#: tie in AIC keeps this order; ``_VARIANTS`` below holds the fitter of each
FAMILIES: tuple[str, ...] = tuple(name for name, cls in _REGISTRY.items() if cls.PARAMS)
#: significant digits of each parameter in the spec
DIGITS = 6
#: above this many times, a fit scipy does with a generic optimiser (weibull) runs on a subsample
SUBSAMPLE = 200_000
SUBSAMPLE_SEED = 0


@dataclass(frozen=True)
class Fit:
    """One fitted law: ``family`` (a name of §2), ``spec`` (what :func:`parse_delay` reads),
    ``params`` (spec keyword → value, the rounded values of the spec, ``shift`` when fitted),
    ``loglik`` (of every time under the spec's law), ``aic`` = 2k − 2·loglik with ``k`` fitted
    parameters, ``ks`` (the Kolmogorov–Smirnov statistic against the spec's law) and ``fixed``
    (what was fixed or how the fit was made; ``fixed_parts``: the same as phrases, which the
    dashboard translates)."""

    family: str
    spec: str
    params: dict[str, float]
    loglik: float
    aic: float
    ks: float
    fixed: str
    k: int
    fixed_parts: tuple[Phrase, ...] = field(default=(), compare=False, repr=False)

    def delay(self) -> Delay:
        """The fitted law: ``parse_delay(spec)``."""
        return parse_delay(self.spec)


class Fits(list[Fit]):
    """The fits, best (lowest AIC) first; ``skipped`` maps each variant that gave no fit (a
    family name, or ``family+shift`` for its shifted variant) to the reason."""

    def __init__(self, fits: list[Fit], skipped: dict[str, str]) -> None:
        super().__init__(fits)
        self.skipped = skipped


class _NoFit(Exception):
    """A fit that does not exist for these data (the reason is the message)."""


@dataclass(frozen=True)
class _Data:
    x: np.ndarray
    sorted: np.ndarray
    sub: np.ndarray  # x, or a seeded subsample of SUBSAMPLE times
    spread: float  # median − min (else max − min): the resolution of a location
    gap: float  # between the two smallest distinct times

    @property
    def min(self) -> float:
        return float(self.sorted[0])

    @property
    def note(self) -> tuple[Phrase, ...]:
        """That the fit used a subsample (nothing when it used every time)."""
        n = self.x.size
        return () if self.sub.size == n else (Phrase("fit_subsample", size=self.sub.size, n=n, seed=SUBSAMPLE_SEED),)


@dataclass
class _Raw:
    """A fit before rounding: spec keyword → value, and how to round each."""

    params: dict[str, float]
    k: int
    fixed: tuple[Phrase, ...]
    down: tuple[str, ...] = ()
    up: tuple[str, ...] = ()
    units: dict[str, float] = field(default_factory=dict)


def _rule_shift(d: _Data) -> float:
    return max(0.0, d.min - d.gap)


_RULE = Phrase("fit_shift_rule")
_LOC_ZERO = (Phrase("fit_loc_zero"),)


def _positive_shift(loc: float) -> None:
    """A fitted shift must be > 0: otherwise the best shift ≥ 0 is 0, which the unshifted fit is."""
    if not loc > 0:
        raise _NoFit(f"the MLE of the shift is {loc:.4g} ≤ 0: the best shift ≥ 0 is 0, the unshifted fit")


def _exp(d: _Data, shifted: bool) -> _Raw:
    if shifted:
        loc, scale = stats.expon.fit(d.x)
        return _Raw({"rate": 1.0 / scale, "shift": loc}, 2, (Phrase("fit_exp_shift"),), down=("shift",),
                    units={"shift": d.spread})
    _, scale = stats.expon.fit(d.x, floc=0)
    return _Raw({"rate": 1.0 / scale}, 1, _LOC_ZERO)


def _pareto(d: _Data, shifted: bool) -> _Raw:
    if shifted:
        alpha, loc, xm = stats.pareto.fit(d.x)
        _positive_shift(loc)
        return _Raw({"xm": xm, "alpha": alpha, "shift": loc}, 3, (Phrase("fit_pareto_shift"),),
                    down=("xm", "shift"), units={"xm": d.spread, "shift": d.spread})
    alpha, _, xm = stats.pareto.fit(d.x, floc=0)
    return _Raw({"xm": xm, "alpha": alpha}, 2, (*_LOC_ZERO, Phrase("fit_xm_min")), down=("xm",),
                units={"xm": d.spread})


def _lognormal(d: _Data, shifted: bool) -> _Raw:
    loc, fixed = 0.0, _LOC_ZERO
    if shifted:
        _, loc, _ = stats.lognorm.fit(d.x)
        _positive_shift(loc)
        fixed = (Phrase("fit_shift_interior"),)
        if loc >= d.min - 8 * np.spacing(d.min):  # scipy's answer when there is no interior maximum
            loc, fixed = _rule_shift(d), (_RULE,)
        loc = _round(loc, d.spread, ROUND_FLOOR)
    sigma, _, scale = stats.lognorm.fit(d.x, floc=loc)
    params = {"mu": math.log(scale), "sigma": sigma} | ({"shift": loc} if shifted else {})
    return _Raw(params, 2 + shifted, fixed, down=("shift",), units={"mu": sigma, "shift": d.spread})


def _weibull(d: _Data, shifted: bool) -> _Raw:
    loc, fixed = 0.0, _LOC_ZERO
    if shifted:
        shape, loc, _ = stats.weibull_min.fit(d.sub)
        _positive_shift(loc)
        fixed = (Phrase("fit_shift_scipy"),)
        if shape <= 1 or loc >= d.min:
            loc, fixed = _rule_shift(d), (_RULE,)
        loc = _round(loc, d.spread, ROUND_FLOOR)
    shape, _, scale = stats.weibull_min.fit(d.sub, floc=loc)
    params = {"shape": shape, "scale": scale} | ({"shift": loc} if shifted else {})
    return _Raw(params, 2 + shifted, (*fixed, *d.note), down=("shift",),
                units={"scale": scale / max(1.0, shape), "shift": d.spread})


def _truncnorm_mle(y: np.ndarray) -> tuple[float, float, bool]:
    """(μ, σ) maximising Σ log[φ((y − μ)/σ) / (σ Φ(μ/σ))] over μ/σ ≥ −30 (the family's domain),
    and whether μ/σ is at that bound (the likelihood still rising towards an exponential).

    With t = μ/σ and z = 1/σ (data scaled by c, moments m1, m2) minus the mean log-likelihood is
    −log z + m2 z²/2 − t m1 z + t²/2 + log Φ(t) (without ½ log 2π); at fixed t its minimum over z is
    the positive root of m2 z² − t m1 z − 1 = 0, so the profile in t is minimised by Brent's method
    (one-dimensional and O(1) per step; unimodal, as the likelihood is log-concave in the natural
    parameters, so its upper level sets are intervals in t).  Truncation raises the mean and
    lowers the spread, so t ≤ mean/sd of the data: the bracket's upper end."""
    c = math.sqrt(float(np.mean(y * y)))
    m1, m2 = float(np.mean(y)) / c, float(np.mean((y / c) ** 2))
    lo, hi = TruncatedNormal.MIN_MEAN_STDS, m1 / math.sqrt(max(m2 - m1 * m1, 1e-300)) + 1.0

    def z_of(t: float) -> float:  # the positive root, in the form without cancellation
        r = math.sqrt(t * t * m1 * m1 + 4 * m2)
        return (t * m1 + r) / (2 * m2) if t >= 0 else 2 / (r - t * m1)

    def nll(t: float) -> float:
        z = z_of(t)
        return -math.log(z) + m2 * z * z / 2 - t * m1 * z + t * t / 2 + float(special.log_ndtr(t))

    res = optimize.minimize_scalar(nll, bounds=(lo, max(hi, lo + 1.0)), method="bounded",
                                   options={"xatol": 1e-9})
    if not res.success:
        raise _NoFit(f"the optimiser did not converge: {res.message}")
    t = float(res.x)
    sigma = c / z_of(t)
    return t * sigma, sigma, t < lo + 1e-3


def _normal(d: _Data, shifted: bool) -> _Raw:
    shift = _round(d.min, d.spread, ROUND_FLOOR) if shifted else 0.0
    mu, sigma, bound = _truncnorm_mle(d.x - shift)
    fixed = (Phrase("fit_truncated_shift" if shifted else "fit_truncated_zero"), Phrase("fit_truncnorm"),
             *((Phrase("fit_normal_at_bound"),) if bound else ()))
    return _Raw({"mean": mu, "std": sigma} | ({"shift": shift} if shifted else {}), 2 + shifted, fixed,
                down=("shift",), up=("mean", "std") if bound else (), units={"mean": sigma, "shift": d.spread})


def _uniform(d: _Data, shifted: bool) -> _Raw:
    low, width = stats.uniform.fit(d.x)
    return _Raw({"low": low, "high": low + width}, 2, (Phrase("fit_uniform"),), down=("low",),
                up=("high",), units={"low": d.spread, "high": d.spread})


#: (variant, family, shifted: None when the family has no shift variant, fitter)
_VARIANTS: tuple[tuple[str, str, bool | None, Callable[[_Data, bool], _Raw]], ...] = (
    ("exp", "exp", False, _exp), ("shifted-exp", "shifted-exp", True, _exp),
    ("pareto", "pareto", False, _pareto), ("pareto+shift", "pareto", True, _pareto),
    ("lognormal", "lognormal", False, _lognormal), ("lognormal+shift", "lognormal", True, _lognormal),
    ("normal", "normal", False, _normal), ("normal+shift", "normal", True, _normal),
    ("weibull", "weibull", False, _weibull), ("weibull+shift", "weibull", True, _weibull),
    ("uniform", "uniform", None, _uniform),
)


def _round(x: float, unit: float, mode: str) -> float:
    """``x`` to DIGITS significant digits of min(|x|, unit), rounded by ``mode`` (a decimal
    rounding); float(the decimal) keeps the direction (rounding to a float is monotone)."""
    x = float(x)
    if not math.isfinite(x) or x == 0:
        return x
    scale = min(abs(x), abs(unit)) if math.isfinite(unit) and unit else abs(x)
    exp = max(math.floor(math.log10(scale)), math.floor(math.log10(abs(x))) - 15) - (DIGITS - 1)
    return float(Decimal(repr(x)).quantize(Decimal(1).scaleb(exp), rounding=mode))


def _loglik(family: str, p: dict[str, float], d: _Data) -> float:
    """Σ log f(x) of every time under the law the (rounded) parameters give."""
    shift, x = p.get("shift", 0.0), d.x
    if family == "normal":  # closed form: scipy's truncnorm.logpdf is ~10× slower
        y, mu, sigma = x - shift, p["mean"], p["std"]
        if y.min() < 0:
            return -math.inf
        norm = math.log(sigma) + 0.5 * math.log(2 * math.pi) + float(special.log_ndtr(mu / sigma))
        return -x.size * norm - float(np.sum((y - mu) ** 2)) / (2 * sigma * sigma)
    law = {"exp": lambda: stats.expon(loc=shift, scale=1 / p["rate"]),
           "shifted-exp": lambda: stats.expon(loc=shift, scale=1 / p["rate"]),
           "pareto": lambda: stats.pareto(p["alpha"], loc=shift, scale=p["xm"]),
           "lognormal": lambda: stats.lognorm(p["sigma"], loc=shift, scale=math.exp(p["mu"])),
           "weibull": lambda: stats.weibull_min(p["shape"], loc=shift, scale=p["scale"]),
           "uniform": lambda: stats.uniform(loc=p["low"] + shift, scale=p["high"] - p["low"])}[family]()
    return float(np.sum(law.logpdf(x)))


def _finish(family: str, raw: _Raw, d: _Data) -> Fit:
    """Round, check the domain (``parse_delay``), and the log-likelihood of every time."""
    mode = {**{k: ROUND_FLOOR for k in raw.down}, **{k: ROUND_CEILING for k in raw.up}}
    params = {k: _round(v, raw.units.get(k, math.inf), mode.get(k, ROUND_HALF_EVEN)) for k, v in raw.params.items()}
    spec = f"{family}({', '.join(f'{k}={shortest(v)}' for k, v in params.items())})"
    parse_delay(spec)  # ParameterError when a parameter is outside its domain
    loglik = _loglik(family, params, d)
    if not math.isfinite(loglik):
        raise _NoFit(f"{spec}: the log-likelihood is {loglik} (a time outside the support, or a density of 0)")
    return Fit(family, spec, params, loglik, 2 * raw.k - 2 * loglik, math.nan, "; ".join(map(str, raw.fixed)), raw.k,
               raw.fixed)


def _with_ks(fit: Fit, d: _Data) -> Fit:
    """The fit with its KS statistic against the spec's law (computed only for the fits kept)."""
    return dataclasses.replace(fit, ks=float(stats.kstest(d.sorted, fit.delay().cdf, method="asymp").statistic))


def _data(times: Any) -> _Data:
    try:
        x = np.array(times, dtype=float).ravel()
    except (TypeError, ValueError, OverflowError):
        raise ParameterError("times", "expected_times", type=type(times).__name__) from None
    if x.size > limits.EMPIRICAL_MAX_VALUES:
        raise ParameterError("times", "times_cap", count=x.size, cap=limits.EMPIRICAL_MAX_VALUES)
    if x.size and not (np.all(np.isfinite(x)) and x.min() > 0):
        raise ParameterError("times", "times_positive")
    xs = np.sort(x)
    sub = x if x.size <= SUBSAMPLE else generator(SUBSAMPLE_SEED).choice(x, SUBSAMPLE, replace=False)
    spread = float(np.median(xs) - xs[0]) if x.size else 0.0
    spread = spread or (float(xs[-1] - xs[0]) if x.size else 0.0)
    above = xs[xs > xs[0]] if x.size else xs
    return _Data(x, xs, sub, spread, float(above[0] - xs[0]) if above.size else 0.0)


def fit_laws(times: Any, *, shift: bool | None = None) -> Fits:
    """Maximum-likelihood fits of every family of DESIGN §2 to ``times`` (positive, finite), best
    AIC first (the module's docstring says what each fit fixes).  ``shift``: None fits the
    families that have a shift variant both ways and keeps the better by AIC, True only with the
    shift fitted, False only without (``shifted-exp`` is a shifted variant, ``exp`` an unshifted
    one, ``uniform`` has none: its low is a location).  A variant that gives no fit — scipy's
    :class:`~scipy.stats.FitError`, a parameter outside its domain, no MLE — is listed with the
    reason in ``.skipped``; nothing else is caught.

    >>> rng = np.random.default_rng(1)
    >>> fits = fit_laws(0.5 + rng.exponential(1 / 2.0, 5000))
    >>> fits[0].spec, fits[0].k
    ('shifted-exp(rate=2.00951, shift=0.500109)', 2)
    >>> [f.family for f in fits]
    ['shifted-exp', 'weibull', 'normal', 'lognormal', 'pareto', 'exp', 'uniform']
    >>> list(fits.skipped)     # its MLE of the shift is negative: the unshifted Pareto is kept
    ['pareto+shift']
    """
    d = _data(times)
    best: dict[str, Fit] = {}
    skipped: dict[str, str] = {}
    for variant, family, shifted, fitter in _VARIANTS:
        if shift is not None and shifted is not None and shifted != shift:
            continue
        if not d.gap > 0:  # fewer than 2 distinct times
            skipped[variant] = f"needs at least 2 distinct times (got {d.x.size}, {np.unique(d.x).size} distinct)"
            continue
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore", RuntimeWarning)  # scipy's optimisers; the results are checked
                fit = _finish(family, fitter(d, bool(shifted)), d)
        except (stats.FitError, ParameterError, _NoFit) as exc:
            skipped[variant] = str(exc)
            continue
        if family not in best or fit.aic < best[family].aic:
            best[family] = fit
    order = {f: i for i, f in enumerate(FAMILIES)}
    return Fits([_with_ks(f, d) for f in sorted(best.values(), key=lambda f: (f.aic, order[f.family]))], skipped)


def _json(x: Any) -> Any:
    """JSON has no NaN/inf: map them to None (numbers as Python floats)."""
    if isinstance(x, (float, np.floating)):
        return float(x) if math.isfinite(x) else None
    return x


#: the labels of a trace whose step labels are integers, one a line: each the canonical text of an
#: integer of at most 15 digits (no sign but "-", no leading zero, so ``str(int(label)) == label``,
#: and |n| < 10**15 < 2**53, which every JSON reader holds exactly)
_INTEGER_LINES = re.compile(r"(?:-?(?:0|[1-9][0-9]{0,14})\n)*")


def _step_label_type(steps: Sequence[str]) -> Callable[[str], int | str]:
    """How a trace's step labels go into JSON: ``int`` when every label of ``steps`` (the trace's
    distinct labels) is the text of an integer (``"550"``, ``"-3"``; not ``"0550"``, ``"+5"``,
    ``"5.0"``, ``"1_000"`` or one over 15 digits), else ``str`` (the file's text) — one type for
    every label of a trace, and ``str(label)`` gives the file's text back either way.

    >>> _step_label_type(["1", "550", "-3"])("550"), _step_label_type(["1", "s550"])("1")
    (550, '1')
    """
    text = "\n".join(steps) + "\n"
    whole = _INTEGER_LINES.fullmatch(text) is not None and text.count("\n") == len(steps)  # no "\n" in a label
    return int if whole else str


def fit_report(trace: Trace, threshold: float = 1.2, *, fits: list[Fit] | None = None) -> dict[str, Any]:
    """The JSON of ``python -m distsgd fit`` (DESIGN §7): counts, the per-worker summary
    (:meth:`Trace.summary`), every flagged worker, and the fits of the pooled times best first
    (``fits`` when the caller already has them).  Worker ids are the file's text; a step label
    (``from_step``) is an int when every step label of the trace is an integer's text, else the
    file's text (:func:`_step_label_type`).

    >>> from distsgd.traces import trace_from_times
    >>> r = fit_report(trace_from_times([[1.0, 1.1, 0.9], [2.0, 2.2, 1.8]]))
    >>> r["workers"], r["steps"], r["stragglers"], r["fits"][0]["family"]
    (2, 3, ['2'], 'uniform')
    """
    thr = float(THRESHOLD.check(threshold))
    rows = trace.summary(thr)
    fitted = fit_laws(trace.pooled) if fits is None else fits
    label = _step_label_type(trace.steps)
    return {
        "workers": trace.m, "steps": len(trace.steps), "dropped_steps": trace.dropped_steps,
        "duplicates": trace.duplicates,
        "per_worker": [{k: _json(r[k]) for k in ("worker", "mean", "median", "slowdown", "straggler")}
                       | {"from_step": None if r["from_step"] is None else label(r["from_step"])} for r in rows],
        "stragglers": [r["worker"] for r in rows if r["straggler"]],
        "fits": [{"family": f.family, "spec": f.spec, "aic": _json(f.aic), "ks": _json(f.ks)} for f in fitted],
    }
