"""Fitting laws to a measured trace and who is slow in it (DESIGN §7): ``distsgd.fit`` and
``python -m distsgd fit``, on synthetic traces whose truth the test plants (fixed seeds)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

import distsgd.fit as fit_module
from distsgd.delays import parse_delay
from distsgd.fit import SUBSAMPLE, fit_laws, fit_report
from distsgd.traces import load_trace
from tests.test_cli import cli as run  # main() in a kept child process: no interpreter a call
from tests.test_cli_clusters import write_pai

KEYS = {"workers", "steps", "dropped_steps", "duplicates", "per_worker", "stragglers", "fits"}
WORKER_KEYS = {"worker", "mean", "median", "slowdown", "straggler", "from_step"}
FIT_KEYS = {"family", "spec", "aic", "ks"}


def _long_csv(times: np.ndarray, workers: list[str], steps: list[str]) -> str:
    """A long-layout file: one row per (worker, step), steps in order, workers within each."""
    rows = ["worker,step,duration"]
    rows += [f"{w},{s},{float(times[i, j])!r}" for j, s in enumerate(steps) for i, w in enumerate(workers)]
    return "\n".join(rows) + "\n"


def _planted(m: int = 16, n: int = 300, seed: int = 1) -> tuple[np.ndarray, list[str], list[str]]:
    """m workers × n steps of lognormal noise (σ = 0.1) around 1, workers w3 and w11 (those there
    are) twice as slow."""
    t = np.random.default_rng(seed).lognormal(0.0, 0.1, (m, n))
    t[[i for i in (3, 11) if i < m]] *= 2.0
    return t, [f"w{i}" for i in range(m)], [str(j + 1) for j in range(n)]


# -- who is slow ------------------------------------------------------------------------------


def test_the_planted_persistent_stragglers_are_exactly_the_ones_flagged() -> None:
    t, workers, steps = _planted()
    report = fit_report(load_trace(_long_csv(t, workers, steps).encode(), name="planted.csv"))
    assert report["stragglers"] == ["w3", "w11"]
    rows = {r["worker"]: r for r in report["per_worker"]}
    assert list(rows) == workers  # the file's ids, in the file's order
    for w in ("w3", "w11"):
        assert rows[w]["straggler"] and rows[w]["from_step"] is None
        assert rows[w]["slowdown"] == pytest.approx(2.0, rel=0.05)
    assert not any(r["straggler"] for w, r in rows.items() if w not in ("w3", "w11"))
    assert report["workers"] == 16 and report["steps"] == 300 and report["dropped_steps"] == 0


def test_an_emerging_straggler_is_flagged_from_about_where_it_slows_down() -> None:
    """Worker e7 is 4× slow from its 600th step of 1000 on; the step labels (5000, 5010, …) are
    the file's, so ``from_step`` must be a label, within 10% of the steps (±100 steps) of the truth."""
    m, n, at = 16, 1000, 600
    t = np.random.default_rng(2).lognormal(0.0, 0.1, (m, n))
    t[7, at:] *= 4.0
    labels = [str(5000 + 10 * j) for j in range(n)]
    report = fit_report(load_trace(_long_csv(t, [f"e{i}" for i in range(m)], labels).encode(), name="e.csv"))
    assert report["stragglers"] == ["e7"]
    row = report["per_worker"][7]
    assert row["straggler"] and row["slowdown"] < 1.2  # slow over 40% of the steps only: not persistent
    assert type(row["from_step"]) is int and str(row["from_step"]) in labels  # integer labels: an int
    assert abs(labels.index(str(row["from_step"])) - at) <= n // 10
    assert all(r["from_step"] is None for i, r in enumerate(report["per_worker"]) if i != 7)


# -- the fits ---------------------------------------------------------------------------------


def test_the_fit_of_a_lognormal_recovers_mu_and_sigma_within_their_standard_errors() -> None:
    """Fisher information of (μ, σ): SE(μ̂) = σ/√n, SE(σ̂) = σ/√(2n); within 3 of them."""
    mu, sigma, n = 0.3, 0.5, 20_000
    x = np.random.default_rng(3).lognormal(mu, sigma, n)
    fits = fit_laws(x)
    assert fits[0].family == "lognormal"
    # here the shift does not pay for its parameter in AIC (on about 1 seed in 30 it does)
    assert "shift" not in fits[0].params and fits[0].k == 2
    best = fits[0].params
    assert abs(best["mu"] - mu) <= 3 * sigma / math.sqrt(n)
    assert abs(best["sigma"] - sigma) <= 3 * sigma / math.sqrt(2 * n)
    plain = next(f for f in fit_laws(x, shift=False) if f.family == "lognormal")
    assert plain.spec == fits[0].spec


def test_the_fit_of_a_shifted_exponential_recovers_the_shift_and_the_rate() -> None:
    """Δ̂ = min(x): Δ̂ − Δ ~ Exp(nλ), within 5/(nλ) (P(more) = e⁻⁵) and not below Δ by more than
    the rounding of the spec; SE(λ̂) = λ/√n, within 3 of them."""
    shift, rate, n = 0.5, 2.0, 20_000
    x = shift + np.random.default_rng(4).exponential(1 / rate, n)
    fits = fit_laws(x)
    best = fits[0]
    assert best.family == "shifted-exp" and best.k == 2
    assert parse_delay(best.spec).shift == best.params["shift"]
    assert -1e-6 <= best.params["shift"] - shift <= 5 / (n * rate)
    assert best.params["shift"] <= x.min()
    assert abs(best.params["rate"] - rate) <= 3 * rate / math.sqrt(n)


def test_the_truncated_normal_fit_is_its_mle_it_matches_the_first_two_moments() -> None:
    """N(1, 0.8²) conditioned on X ≥ 0 (11% cut off) is an exponential family in (x, x²): its MLE
    gives the law whose mean and second moment are the sample's."""
    rng = np.random.default_rng(5)
    y = rng.normal(1.0, 0.8, 40_000)
    x = y[y > 0][:20_000]
    fit = next(f for f in fit_laws(x, shift=False) if f.family == "normal")
    law = parse_delay(fit.spec)
    assert law.mean == pytest.approx(x.mean(), rel=2e-5)
    assert law.var + law.mean**2 == pytest.approx(np.mean(x**2), rel=2e-5)
    assert fit.params["mean"] == pytest.approx(1.0, abs=0.05) and fit.params["std"] == pytest.approx(0.8, abs=0.03)


def _k(family: str, params: dict[str, float]) -> int:
    """Fitted parameters: the family's own plus a fitted shift (shifted-exp's shift is its own)."""
    return {"exp": 1}.get(family, 2) + ("shift" in params and family != "shifted-exp")


def _scipy_law(family: str, p: dict[str, float]):  # the test's own reading of each spec
    s = p.get("shift", 0.0)
    if family == "normal":
        return stats.truncnorm(-p["mean"] / p["std"], np.inf, loc=p["mean"] + s, scale=p["std"])
    return {"exp": lambda: stats.expon(loc=s, scale=1 / p["rate"]),
            "shifted-exp": lambda: stats.expon(loc=s, scale=1 / p["rate"]),
            "pareto": lambda: stats.pareto(p["alpha"], loc=s, scale=p["xm"]),
            "lognormal": lambda: stats.lognorm(p["sigma"], loc=s, scale=math.exp(p["mu"])),
            "weibull": lambda: stats.weibull_min(p["shape"], loc=s, scale=p["scale"]),
            "uniform": lambda: stats.uniform(loc=p["low"] + s, scale=p["high"] - p["low"])}[family]()


SAMPLES = {
    "shifted lognormal": lambda rng: 0.5 + rng.lognormal(0.0, 0.6, 3000),
    "pareto": lambda rng: 2.0 * (1 + rng.pareto(2.5, 3000)),
    "shifted weibull": lambda rng: 1.0 + 2.0 * rng.weibull(1.8, 3000),
    "uniform": lambda rng: rng.uniform(2.0, 5.0, 3000),
    "exponential": lambda rng: rng.exponential(3.0, 3000),
    "weibull, over the subsample size": lambda rng: 2.0 * rng.weibull(1.5, SUBSAMPLE + 50_000),
}


@pytest.mark.parametrize("name", SAMPLES)
def test_every_fit_is_scored_on_the_law_its_spec_gives(name: str) -> None:
    """For every fit: the spec parses back to ``params``, inside the family's domain, with every
    time in its support; loglik is Σ log f over *all* the times under the test's own scipy reading
    of the spec, AIC = 2k − 2 loglik with k counting a fitted shift, KS is kstest's statistic, the
    mean is the law's; best AIC first."""
    x = SAMPLES[name](np.random.default_rng(6))
    fits = fit_laws(x)
    assert len(fits) >= 5 and [f.aic for f in fits] == sorted(f.aic for f in fits)
    assert len({f.family for f in fits}) == len(fits)
    for f in fits:
        law = f.delay()
        assert {**law.parameters(), **({"shift": law.shift} if law.shift else {})} == f.params, f.spec
        assert law.name == ("exp" if f.family == "shifted-exp" else f.family)
        ref = _scipy_law(f.family, f.params)
        assert f.loglik == pytest.approx(float(np.sum(ref.logpdf(x))), rel=1e-9, abs=1e-6), f.spec
        assert f.k == _k(f.family, f.params) and f.aic == pytest.approx(2 * f.k - 2 * f.loglik, rel=1e-12)
        assert f.ks == pytest.approx(stats.kstest(x, law.cdf).statistic, rel=1e-9, abs=1e-12)
        assert law.support[0] <= x.min()
        if math.isfinite(law.mean):
            assert law.mean == pytest.approx(float(ref.mean()), rel=1e-6), f.spec
    weibull = next(f for f in fits if f.family == "weibull")
    assert ("subsample of 200000" in weibull.fixed) == (x.size > SUBSAMPLE)
    assert fits[0].delay().mean == pytest.approx(x.mean(), rel=0.05)


def test_a_location_keeps_the_digits_of_the_spread_not_only_of_its_own_size() -> None:
    """1000 + Exp(1): six digits of 1000 would round the shift to 0.01, far more than the
    1/n it is known to; six digits of the spread keep it."""
    x = 1000.0 + np.random.default_rng(7).exponential(1.0, 2000)
    fit = next(f for f in fit_laws(x) if f.family == "shifted-exp")
    assert 0 <= x.min() - fit.params["shift"] < 1e-5
    rate = repr(fit.params["rate"]).replace(".", "").lstrip("0")
    assert len(rate) <= 6  # the rate: six significant digits


def test_a_family_that_cannot_fit_is_left_out_with_its_reason() -> None:
    x = np.random.default_rng(8).uniform(1000.0, 1001.0, 2000)  # Pareto's α̂ ≈ 2000: above its domain
    fits = fit_laws(x, shift=False)
    assert "pareto" not in {f.family for f in fits} and "alpha" in fits.skipped["pareto"]
    assert fits[0].family == "uniform"
    assert "shifted-exp" not in {f.family for f in fits} and "pareto+shift" not in fits.skipped  # not tried
    same = fit_laws(np.full(10, 3.0))
    assert list(same) == [] and set(same.skipped) >= {"exp", "uniform", "lognormal+shift"}
    assert all("2 distinct" in why for why in same.skipped.values())


def test_only_a_failed_fit_is_caught_not_a_programming_error(monkeypatch: pytest.MonkeyPatch) -> None:
    x = np.random.default_rng(9).lognormal(0.0, 0.5, 500)

    def failed(*args: object, **kwargs: object) -> None:
        raise stats.FitError("planted failure")

    monkeypatch.setattr(fit_module.stats.lognorm, "fit", failed)
    fits = fit_laws(x)
    assert "lognormal" not in {f.family for f in fits} and "planted failure" in fits.skipped["lognormal"]

    def broken(*args: object, **kwargs: object) -> None:
        raise TypeError("a bug")

    monkeypatch.setattr(fit_module.stats.lognorm, "fit", broken)
    with pytest.raises(TypeError, match="a bug"):
        fit_laws(x)


@pytest.mark.parametrize("bad", [[1.0, -2.0], [1.0, float("nan")], [0.0, 1.0], [1.0, math.inf]])
def test_bad_times_are_refused_naming_them(bad: list[float]) -> None:
    with pytest.raises(ValueError, match="times"):
        fit_laws(np.array(bad))


# -- the report and the command line ----------------------------------------------------------


def _check_contract(d: dict) -> None:
    assert set(d) == KEYS
    assert all(type(d[k]) is int for k in ("workers", "steps", "dropped_steps", "duplicates"))
    for r in d["per_worker"]:
        assert set(r) == WORKER_KEYS and isinstance(r["worker"], str) and type(r["straggler"]) is bool
        assert all(type(r[k]) is float for k in ("mean", "median", "slowdown"))
        assert r["from_step"] is None or type(r["from_step"]) in (int, str)
    assert all(isinstance(w, str) for w in d["stragglers"])
    assert d["fits"] and all(set(f) == FIT_KEYS for f in d["fits"])
    for f in d["fits"]:
        assert isinstance(f["family"], str) and isinstance(f["spec"], str)
        assert type(f["aic"]) is float and type(f["ks"]) is float and 0 <= f["ks"] <= 1
        parse_delay(f["spec"])
    assert [f["aic"] for f in d["fits"]] == sorted(f["aic"] for f in d["fits"])


def test_cli_fit_json_is_exactly_the_contract(tmp_path) -> None:
    t, workers, steps = _planted()
    text = _long_csv(t, workers, steps) + "w0,1,5.0\nw0,301,1.0\n"  # a duplicate (kept: the first), a step of one
    path = tmp_path / "trace.csv"
    path.write_text(text)
    code, out, err = run("fit", "--trace", str(path), "--json")
    assert code == 0, err
    d = json.loads(out)
    _check_contract(d)
    assert (d["workers"], d["steps"], d["dropped_steps"], d["duplicates"]) == (16, 301, 1, 1)
    assert d["stragglers"] == ["w3", "w11"] and [r["worker"] for r in d["per_worker"]] == workers
    assert d == json.loads(json.dumps(fit_report(load_trace(path))))  # the CLI prints the report


def test_cli_fit_reads_a_pai_shaped_trace_with_the_documented_mapping(tmp_path) -> None:
    rng = np.random.default_rng(10)
    t = rng.uniform(100, 140, (6, 40))
    t[2] *= 1.5
    path = write_pai(tmp_path / "pai.csv", t, "worker")
    code, out, err = run("fit", "--trace", str(path), "--trace-columns",
                         "worker=worker,step=time,duration=batch_time_norm", "--json")
    assert code == 0, err
    d = json.loads(out)
    _check_contract(d)
    assert d["workers"] == 6 and d["steps"] == 40 and d["stragglers"] == ["worker2"]
    code, _, err = run("fit", "--trace", str(path))
    assert code == 2 and "--trace-columns" in err and len(err.strip().splitlines()) == 1


def test_cli_fit_a_bad_row_is_named_by_its_line(tmp_path) -> None:
    t, workers, steps = _planted(m=4, n=5)
    lines = _long_csv(t, workers, steps).splitlines()
    lines[7] = lines[7].rsplit(",", 1)[0] + ",-3"  # data row 7 is line 8 (the header is line 1)
    path = tmp_path / "bad.csv"
    path.write_text("\n".join(lines) + "\n")
    code, out, err = run("fit", "--trace", str(path), "--json")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "line 8" in err and "negative" in err and "Traceback" not in err


@pytest.mark.parametrize("value", ["0.5", "abc", "inf"])
def test_cli_fit_threshold_outside_its_domain_exits_2_naming_it(tmp_path, value: str) -> None:
    t, workers, steps = _planted(m=4, n=5)
    path = tmp_path / "t.csv"
    path.write_text(_long_csv(t, workers, steps))
    code, out, err = run("fit", "--trace", str(path), "--threshold", value)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "threshold" in err


def test_cli_fit_threshold_is_used(tmp_path) -> None:
    t, workers, steps = _planted(m=6, n=50)
    path = tmp_path / "t.csv"
    path.write_text(_long_csv(t, workers, steps))
    code, out, _ = run("fit", "--trace", str(path), "--threshold", "2.5", "--json")
    assert code == 0 and json.loads(out)["stragglers"] == []


def test_cli_fit_text_output_has_the_table_the_stragglers_and_the_fits(tmp_path) -> None:
    t, workers, steps = _planted(m=6, n=60)
    t[4, 40:] *= 4.0  # the last third: an emerging straggler
    path = tmp_path / "t.csv"
    path.write_text(_long_csv(t, workers, steps))
    code, out, err = run("fit", "--trace", str(path))
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith(f"{path}: 6 workers × 60 complete steps")
    w3 = next(line for line in lines if line.startswith("w3 "))
    assert w3.endswith("persistent")
    assert "from step" in next(line for line in lines if line.startswith("w4 "))
    assert "stragglers (slowdown ≥ 1.2): w3, w4" in out
    for family in ("lognormal", "weibull", "uniform"):
        assert any(line.startswith(family) for line in lines), family


def _emerging_csv(path, labels: list[str]):  # type: ignore[no-untyped-def]
    """8 workers over the steps ``labels`` (in order), worker e5 4× slow from the 120th step on."""
    t = np.random.default_rng(12).lognormal(0.0, 0.1, (8, len(labels)))
    t[5, 120:] *= 4.0
    path.write_text(_long_csv(t, [f"e{i}" for i in range(8)], labels))
    return path


@pytest.mark.parametrize("labels, kind", [
    ([str(500 + j) for j in range(200)], int),  # from_step near 620, not "620"
    ([str(-100 + 7 * j) for j in range(200)], int),  # negative ones too
    ([f"s{500 + j}" for j in range(200)], str),  # not integers: the file's text
    (["0500", *(str(501 + j) for j in range(199))], str),  # one label not an integer's own text: all text
])
def test_cli_fit_step_labels_that_are_integers_in_the_file_are_integers_in_the_json(tmp_path, labels, kind) -> None:
    path = _emerging_csv(tmp_path / "e.csv", labels)
    code, out, err = run("fit", "--trace", str(path), "--json")
    assert code == 0, err
    d = json.loads(out)
    _check_contract(d)
    assert d["stragglers"] == ["e5"]
    got = d["per_worker"][5]["from_step"]
    assert type(got) is kind and str(got) in labels
    assert abs(labels.index(str(got)) - 120) <= 20  # within the 10% window
    assert all(r["from_step"] is None for i, r in enumerate(d["per_worker"]) if i != 5)
    assert d == json.loads(json.dumps(fit_report(load_trace(path))))
    code, text, err = run("fit", "--trace", str(path))  # the text output shows the label as the file has it
    assert code == 0 and f"from step {got}" in text, err
