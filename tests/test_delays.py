"""Delay distributions: spec round-trips, validation messages, moments and laws."""

import math

import numpy as np
import pytest

from distsgd import ParameterError, parse_delay
from distsgd.delays import DELAY_NAMES, Empirical
from scenarios import DATA, DELAYS

SPECS = list(DELAYS.values()) + [
    "exp(rate=0.1, shift=3)", "pareto(xm=0.5, alpha=1.5, shift=2)", "pareto(xm=2,alpha=0.8)",
    "uniform(low=0, high=1e-3)", "normal(mean=-1, std=2)", "lognormal(mu=-3.5, sigma=2, shift=0.25)",
    " weibull ( shape = 3 , scale = 0.2 ) ", "EXP(rate=1)", "exponential(rate=4)",
]


@pytest.mark.parametrize("spec", SPECS)
def test_spec_round_trips(spec):
    d = parse_delay(spec)
    again = parse_delay(str(d))
    assert again == d and hash(again) == hash(d)
    assert str(again) == str(d)


def test_exp_with_shift_prints_as_shifted_exp():
    assert str(parse_delay("exp(rate=2, shift=0.5)")) == "shifted-exp(rate=2, shift=0.5)"
    assert str(parse_delay("shifted-exp(rate=2, shift=0)")) == "exp(rate=2)"


@pytest.mark.parametrize("spec, parameter, words", [
    ("pareto(xm=1", "delay", "malformed"),
    ("pareto(xm=1, alpha=2.5", "delay", "malformed"),
    ("gamma(k=1)", "delay", "unknown distribution 'gamma'"),
    ("", "delay", "expected a spec"),
    ("exp(rate=-1)", "rate", "[1e-6, 1e9]"),
    ("exp(rate=0)", "rate", "[1e-6, 1e9]"),
    ("exp(rate=nan)", "rate", "a number"),
    ("exp(rate=inf)", "rate", "a number"),
    ("exp(rate=abc)", "rate", "'abc'"),
    ("exp()", "rate", "missing"),
    ("exp", "rate", "missing"),
    ("exp(rate=1, rate=2)", "rate", "given twice"),
    ("exp(rate=1, alpha=2)", "alpha", "not a parameter of exp"),
    ("exp(rate=1, shift=-0.5)", "shift", "[0, 1e6]"),
    ("exp(rate=1e-300)", "rate", "[1e-6, 1e9]"),
    ("exp(rate=5e-324)", "rate", "[1e-6, 1e9]"),
    ("shifted-exp(rate=1)", "shift", "missing"),
    ("pareto(xm=1)", "alpha", "missing"),
    ("pareto(xm=0, alpha=2)", "xm", "[1e-9,"),
    ("pareto(xm=1, alpha=-2)", "alpha", "[0.25,"),
    ("pareto(xm=1, alpha=0.1)", "alpha", "[0.25,"),
    ("lognormal(mu=0, sigma=0)", "sigma", "(0,"),
    ("normal(mean=1, std=-1)", "std", "[1e-9,"),
    ("normal(mean=-100, std=1)", "mean", "mean/std"),
    ("weibull(shape=0, scale=1)", "shape", "[0.02,"),
    ("weibull(shape=1e-300, scale=1)", "shape", "[0.02,"),
    ("weibull(shape=0.01, scale=1)", "shape", "[0.02,"),
    ("weibull(shape=1, scale=1e7)", "scale", "[1e-9, 1e6]"),
    ("lognormal(mu=300, sigma=1)", "mu", "[-20, 14]"),
    ("uniform(low=0, high=5e-324)", "high", "[1e-9,"),
    ("uniform(low=2, high=1)", "high", "greater than low"),
    ("uniform(low=-1, high=1)", "low", "[0,"),
    ("exp(rate 1)", "delay", "key=value"),
    ("exp(rate=)", "rate", "no value"),
    ("empirical()", "file", "missing"),
    ("empirical(file=/nonexistent/trace.csv)", "file", "cannot read"),
])
def test_bad_specs_name_the_parameter(spec, parameter, words):
    with pytest.raises(ParameterError) as info:
        parse_delay(spec)
    assert info.value.parameter == parameter
    assert words in str(info.value)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("text, words", [
    ("1.0\n", "at least 2"),
    ("time\n1\n-2\n", "> 0"),
    ("1\n2\nabc\n", "line 3"),
])
def test_bad_traces(tmp_path, text, words):
    p = tmp_path / "t.csv"
    p.write_text(text)
    with pytest.raises(ParameterError, match=words):
        parse_delay(f"empirical(file={p})")


def test_every_family_has_a_spec():
    assert set(DELAY_NAMES) >= {"exp", "shifted-exp", "pareto", "lognormal", "normal", "weibull",
                                "uniform", "empirical"}


@pytest.mark.parametrize("key", list(DELAYS))
def test_sample_matches_mean_cdf_and_ppf(key):
    d = parse_delay(DELAYS[key])
    rng = np.random.default_rng(7)
    x = d.sample(rng, 200_000)
    assert x.shape == (200_000,) and np.all(x >= 0)
    se = math.sqrt(d.var / x.size)
    assert abs(x.mean() - d.mean) <= 4 * se
    qs = np.array([0.05, 0.25, 0.5, 0.75, 0.95])
    xq = d.ppf(qs)
    emp = (x[:, None] <= xq[None, :]).mean(axis=0)
    # the empirical cdf at the quantiles is within 4 binomial standard errors of q (or above it for atoms)
    tol = 4 * np.sqrt(qs * (1 - qs) / x.size)
    assert np.all(emp >= qs - tol)
    if key != "empirical":
        assert np.all(np.abs(emp - qs) <= tol)
        assert np.allclose(d.cdf(xq), qs, atol=1e-9)
        assert np.allclose(d.sf(xq), 1 - qs, atol=1e-9)
        assert np.allclose(d.isf(1 - qs), xq, rtol=1e-7)


def test_known_moments():
    assert parse_delay("exp(rate=4)").mean == pytest.approx(0.25)
    assert parse_delay("shifted-exp(rate=4, shift=1)").var == pytest.approx(1 / 16)
    p = parse_delay("pareto(xm=2, alpha=3)")
    assert p.mean == pytest.approx(3.0) and p.var == pytest.approx(3 * 4 / (4 * 1))
    assert math.isinf(parse_delay("pareto(xm=1, alpha=2)").var)
    assert math.isinf(parse_delay("pareto(xm=1, alpha=1)").mean)
    assert parse_delay("uniform(low=1, high=3)").var == pytest.approx(4 / 12)
    w = parse_delay("weibull(shape=2, scale=1)")
    assert w.mean == pytest.approx(math.gamma(1.5))
    ln = parse_delay("lognormal(mu=0.5, sigma=0.3)")
    assert ln.mean == pytest.approx(math.exp(0.5 + 0.045))
    tn = parse_delay("normal(mean=0, std=1)")  # half-normal
    assert tn.mean == pytest.approx(math.sqrt(2 / math.pi))


def test_isf_keeps_precision_in_the_far_tail():
    for spec in ("exp(rate=1)", "pareto(xm=1, alpha=2)", "weibull(shape=0.5, scale=1)"):
        d = parse_delay(spec)
        x = d.isf(1e-300)
        assert np.isfinite(x) and x > d.isf(1e-200) > d.isf(1e-100)
    assert parse_delay("exp(rate=1)").isf(1e-300) == pytest.approx(300 * math.log(10))


@pytest.mark.parametrize("spec, nlu", [
    ("exp(rate=1)", True), ("shifted-exp(rate=1, shift=2)", True), ("uniform(low=0, high=1)", True),
    ("normal(mean=1, std=1)", True), ("weibull(shape=1.5, scale=1)", True),
    ("weibull(shape=0.5, scale=1)", False), ("pareto(xm=1, alpha=3)", False),
    ("lognormal(mu=0, sigma=1)", False),
])
def test_nlu_flags(spec, nlu):
    assert parse_delay(spec).is_nlu is nlu


def test_nlu_flag_agrees_with_the_definition_numerically():
    # check sf(s+t) ≤ sf(s) sf(t) on a grid for the families declared NLU, and find a violation
    # for those declared not NLU
    grid = np.linspace(0.01, 5, 120)
    for spec in ("uniform(low=0.2, high=2)", "normal(mean=1, std=0.7)", "weibull(shape=2, scale=1)",
                 "pareto(xm=0.3, alpha=2)", "weibull(shape=0.6, scale=1)", "lognormal(mu=0, sigma=1.5)"):
        d = parse_delay(spec)
        s, t = np.meshgrid(grid, grid)
        holds = np.all(d.sf(s + t) <= d.sf(s) * d.sf(t) + 1e-12)
        assert holds == d.is_nlu, spec


def test_empirical_is_the_resampling_law():
    d = parse_delay(DELAYS["empirical"])
    assert isinstance(d, Empirical) and d.values.size == 500
    raw = np.loadtxt(DATA / "trace.csv", delimiter=",", skiprows=2)[:, 0]
    assert d.mean == pytest.approx(raw.mean())
    assert d.var == pytest.approx(raw.var())
    assert d.cdf(np.median(raw)) == pytest.approx(np.mean(raw <= np.median(raw)))
    x = d.sample(np.random.default_rng(1), 1000)
    assert np.isin(x, raw).all()
    # ppf is the generalised inverse: F(ppf(q)) ≥ q and ppf(q) is an observed value
    q = np.linspace(0.001, 0.999, 50)
    assert np.all(d.cdf(d.ppf(q)) >= q - 1e-12)
    assert np.allclose(d.isf(1 - q), d.ppf(q)) or np.all(d.cdf(d.isf(1 - q)) >= q - 1e-12)


def test_empirical_from_values_and_shift():
    d = Empirical.from_values([1.0, 2.0, 3.0], name="upload.csv", shift=0.5)
    assert d.mean == pytest.approx(2.5)
    assert d == Empirical.from_values([1.0, 2.0, 3.0], shift=0.5)
    assert d != Empirical.from_values([1.0, 2.0, 3.0])
    with pytest.raises(ParameterError, match="file"):
        Empirical.from_values([1.0, float("nan")])


LATEX_SPECS = [
    "exp(rate=2)", "pareto(xm=1, alpha=2.5)", "lognormal(mu=0, sigma=0.75)", "normal(mean=1, std=0.5)",
    "weibull(shape=0.7, scale=1)", "uniform(low=0.5, high=1.5)", f"empirical(file={DATA / 'trace.csv'})",
]
#: the parameter symbols each family's density must show intact (they contain the letter x
#: where a naive str.replace("x", …) would break them)
LATEX_SYMBOLS = {
    "exp": ["\\lambda"], "pareto": ["x_m", "\\alpha"], "lognormal": ["\\mu", "\\sigma", "\\ln"],
    "normal": ["\\mu", "\\sigma", "\\varphi", "\\Phi"], "weibull": ["k", "s"], "uniform": ["a", "b"],
    "empirical": ["\\textstyle", "\\sum_i", "\\delta", "x_i"],
}
SHIFTED_VAR = "(x-\\Delta)"


def _variables(body):
    """Occurrences of the variable x as a token of its own (not in x_m, x_i, \\max, \\textstyle)."""
    import re
    return len(re.findall(r"(?<![A-Za-z\\_])x(?![A-Za-z_])", body))


@pytest.mark.parametrize("spec", LATEX_SPECS)
def test_latex_of_a_shift_is_the_density_in_x_minus_delta(spec):
    """f(x) = g(x − Δ): the shifted density is the unshifted one with its *variable* replaced.
    The old code did str.replace("x", "(x-\\Delta)") on the whole string: a shifted Pareto
    showed (x-\\Delta)_m for x_m, a shifted trace \\te(x-\\Delta)tstyle."""
    import re
    plain = parse_delay(spec)
    shifted = parse_delay(spec[:-1] + ", shift=0.25)")
    assert plain.label and plain.latex.startswith("f(x) = ") and shifted.latex.startswith("f(x) = ")
    body = plain.latex[len("f(x) = "):]
    sbody, _, tail = shifted.latex[len("f(x) = "):].rpartition(",\\quad \\Delta = ")
    assert tail == "0.25"
    for sym in LATEX_SYMBOLS[plain.name]:
        assert sym in body and sym in sbody, (sym, sbody)
    # the variable appears, and every occurrence of it (and only those) is substituted
    n = _variables(body)
    assert n >= 1 and sbody.count(SHIFTED_VAR) == n, (body, sbody)
    assert not re.search(r"[A-Za-z\\]\(x-\\Delta\)|\(x-\\Delta\)[A-Za-z_]", sbody), sbody
    assert sbody.replace(SHIFTED_VAR, "x") == body
    assert _variables(sbody.replace(SHIFTED_VAR, "")) == 0  # no x left unsubstituted
