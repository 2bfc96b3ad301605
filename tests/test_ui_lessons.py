"""The lessons' answers are claims (issue 26, DESIGN §14): each step's sentence and the choice it
marks right are checked against numbers computed here independently (closed forms, quadrature,
a max-plus recursion, the model problem's exact recursion, a separate Monte Carlo) — at the
values its "Set it up" applies and at a moved slider.  No Streamlit session: the cached calls
run in memory."""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import pytest
from scipy import integrate, stats

from distsgd import make_scheme, parse_delay
from distsgd.montecarlo import simulate_runtime
from distsgd.ui import lesson_steps, lessons
from distsgd.ui.controls import LESSON_STEPS_MAX, LESSONS

STEP = {s.key: s for s in lesson_steps.STEPS}


def H(n: int) -> float:
    return sum(1 / i for i in range(1, n + 1))


def answer(key: str, **moved: Any) -> lesson_steps.Answer:
    """The step's answer at its preset, with the controls ``moved`` set as a student would."""
    base = lessons.preset_getter(STEP[key])

    def get(k: str) -> Any:
        return moved[k] if k in moved else base(k)

    return STEP[key].answer(lessons.selection_of(get), get)


def number(text: str, before: str) -> float:
    """The number written right after ``before`` in ``text``."""
    m = re.search(re.escape(before) + r"\s*([-+0-9.e]+)", text)
    assert m, f"{before!r} not in {text!r}"
    return float(m.group(1).rstrip("."))


def marks(ans: lesson_steps.Answer, choice: int | None) -> None:
    """The answer marks ``choice`` (its letter in the sentence too), or none."""
    assert ans.choice == choice, ans
    if choice is not None:
        assert f"({lesson_steps.LETTERS[choice]})" in ans.sentence, ans.sentence


def test_the_lesson_has_at_least_eight_steps_each_with_two_to_four_choices() -> None:
    steps = lesson_steps.STEPS
    assert 8 <= len(steps) <= LESSON_STEPS_MAX and set(lessons.LESSONS) <= set(LESSONS)
    assert len({s.key for s in steps}) == len(steps)
    for s in steps:
        assert 2 <= len(s.choices) <= 4, s.key
        assert s.page in lessons.PAGE_TITLES and s.formulas and all(s.formulas) and s.preset


# -- 1. the slowest of m --------------------------------------------------------------------------

def test_sync_at_the_preset_is_h_m() -> None:
    ans = answer("sync")
    assert number(ans.sentence, "E[X₍ₘ:ₘ₎] =") == pytest.approx(H(16), rel=1e-3)
    assert number(ans.sentence, "H_16 =") == pytest.approx(H(16), rel=1e-3)
    marks(ans, 1)  # 1.5 ≤ 3.38 < m/2 = 8


@pytest.mark.parametrize("moved, expected, choice", [
    ({"delay": "uniform", "u_low": 0.0, "u_high": 2.0}, 2 * 16 / 17, 1),   # a + (b − a)·m/(m+1), E[X] = 1
    ({"m": 1}, 1.0, 0),                                                      # one worker: E[X]
    ({"m": 400}, H(400), 1),                                                  # ln m ≪ m/2
    ({"delay": "pareto", "xm": 1.0, "alpha": 1.1, "m": 64}, None, 2),         # a heavy tail: ≥ m/2 × E[X]
])
def test_sync_after_a_slider_moved(moved: dict, expected: float | None, choice: int) -> None:
    ans = answer("sync", **moved)
    if expected is None:  # Pareto: E[X_{m:m}] = x_m Γ(m+1)Γ(1 − 1/α)/Γ(m + 1 − 1/α), E[X] = α x_m/(α − 1)
        a, m = moved["alpha"], moved["m"]
        expected = math.exp(math.lgamma(m + 1) + math.lgamma(1 - 1 / a) - math.lgamma(m + 1 - 1 / a))
        assert expected / (a / (a - 1)) >= m / 2
    assert number(ans.sentence, "E[X₍ₘ:ₘ₎] =") == pytest.approx(expected, rel=1e-3)
    marks(ans, choice)


def test_sync_with_an_infinite_mean_marks_nothing() -> None:
    ans = answer("sync", delay="pareto", xm=1.0, alpha=1.0)
    marks(ans, None)
    assert "infinite" in ans.sentence


# -- 2. waiting for K of m --------------------------------------------------------------------------

def test_ksync_at_the_preset_saves_more_than_its_share() -> None:
    ans = answer("k-sync")
    tk, ts = H(16) - H(4), H(16)
    assert number(ans.sentence, "E[X₍K:m₎] =") == pytest.approx(tk, rel=1e-3)
    assert number(ans.sentence, "saves") == pytest.approx(100 * (1 - tk / ts), abs=0.06)
    marks(ans, 1)


def test_ksync_on_a_uniform_law_saves_exactly_its_share() -> None:
    """Uniform order statistics are evenly spaced: E[X_{K:m}]/E[X_{m:m}] = K/m, saving = (m − K)/m."""
    ans = answer("k-sync", delay="uniform", u_low=0.0, u_high=2.0, K=8)
    assert number(ans.sentence, "E[X₍K:m₎] =") == pytest.approx(2 * 8 / 17, rel=1e-3)
    assert number(ans.sentence, "saves") == pytest.approx(50.0, abs=0.06)
    marks(ans, 0)


# -- 3. the renewal view of async -----------------------------------------------------------------

def test_async_at_the_preset_is_m_h_m_faster() -> None:
    ans = answer("async")
    assert number(ans.sentence, "E[T] = E[X]/m =") == pytest.approx(1 / 16, rel=1e-6)
    assert number(ans.sentence, "makes") == pytest.approx(16 * H(16), rel=1e-3)
    assert number(ans.sentence, "m − 1 =") == 15
    marks(ans, 2)


def test_async_with_one_worker_is_exactly_m_times() -> None:
    marks(answer("async", m=1), 1)


def test_async_on_a_lognormal_law() -> None:
    d = parse_delay("lognormal(mu=0, sigma=1)")
    sync = integrate.quad(lambda x: 1 - d.cdf(x) ** 8, 0, np.inf, limit=200)[0]
    ans = answer("async", delay="lognormal", ln_mu=0.0, ln_sigma=1.0, m=8)
    assert number(ans.sentence, "makes") == pytest.approx(8 * sync / math.exp(0.5), rel=5e-3)  # 3 digits
    marks(ans, 2)


# -- 4. K-async and NLU ------------------------------------------------------------------------------

def _mc(name: str, spec: str, m: int, K: int) -> tuple[float, float]:
    r = simulate_runtime(make_scheme(name, m, K=K), parse_delay(spec), 30_000, seed=99, keep_times=False)
    return r.ci95


@pytest.mark.parametrize("moved, spec, choice", [
    ({}, "lognormal(mu=0, sigma=1.5)", 0),                                      # heavy tail: K-sync wins
    ({"delay": "shifted-exp", "lam": 1.0, "delta": 1.0}, "shifted-exp(rate=1, shift=1)", 1),  # NLU: K-async
    ({"delay": "exp", "lam": 1.0}, "exp(rate=1)", 2),                             # memoryless: equal
])
def test_kasync_against_an_independent_simulation(moved: dict, spec: str, choice: int) -> None:
    ans = answer("k-async", **moved)
    d = parse_delay(spec)
    ks = integrate.quad(lambda x: stats.binom.cdf(3, 16, d.cdf(x)), 0, np.inf, limit=400)[0]  # E[X_{4:16}]
    assert number(ans.sentence, "K-sync") == pytest.approx(ks, rel=2e-3)
    lo, hi = _mc("k-async", spec, 16, 4)
    if choice == 0:
        assert ks < lo
    elif choice == 1:
        assert hi < ks
    else:
        assert lo <= ks <= hi
    marks(ans, choice)


# -- 5. the race --------------------------------------------------------------------------------------

def exact_error(n: int, K: int, eta: float = 0.05, L: float = 2.0, mu: float = 0.5, sigma2: float = 1.0,
                d: int = 10, f0: float = 1.0) -> float:
    """The model problem's expected error after n updates that each average K fresh gradients."""
    h = np.linspace(mu, L, d)
    c2 = 2 * f0 / h.sum()
    r = 1 - eta * h
    var = eta**2 * sigma2 / (d * K) * (1 - r ** (2 * n)) / (1 - r**2)
    return float(0.5 * np.sum(h * (c2 * r ** (2 * n) + var)))


@pytest.mark.parametrize("m", [16, 8])
def test_race_numbers_and_winner(m: int) -> None:
    """At T = 60 the sentence's values for the fresh schemes lie near the model problem's exact
    error after T/E[T] updates, and the scheme it names lowest is the answer: K-sync, whose
    floor (K = 4 fresh gradients) is below async's single stale one."""
    ans = answer("race", m=m)
    text = ans.sentence
    got = re.search(r"at T = 60 it is ([\w-]+)'s \(([0-9.e-]+)\), then ([\w-]+)'s \(([0-9.e-]+)\)", text)
    assert got, text
    values = {got.group(1): float(got.group(2)), got.group(3): float(got.group(4))}
    per = {"sync": (H(m), m), "k-sync": (H(m) - H(m - 4), 4)}  # E[T] (exponential, λ = 1) and K
    for name, v in values.items():
        if name in per:
            t, K = per[name]
            lo, hi = exact_error(math.ceil(60 / t), K), exact_error(math.floor(60 / t), K)
            assert 0.7 * lo <= v <= 1.3 * hi, (name, v, lo, hi)
    assert got.group(1) == "k-sync" and exact_error(10_000, 4) < exact_error(10_000, 1)
    marks(ans, lesson_steps._RACE.index("k-sync"))
    assert re.search(r"At t = [0-9.]+ the lowest simulated mean error is async's", text), text


# -- 6. local SGD -------------------------------------------------------------------------------------

def gamma_max_mean(m: int, H_: int, rate: float, shift: float) -> float:
    """E[max_i S_i] for S_i = H·shift + Gamma(H, rate), m i.i.d. workers."""
    g = stats.gamma(H_, scale=1 / rate)
    return H_ * shift + integrate.quad(lambda x: 1 - g.cdf(x) ** m, 0, np.inf, limit=400)[0]


def test_local_sgd_at_the_preset() -> None:
    ans = answer("local-sgd")
    d_ps = 2 * 16 * 4 * 25e6 / 1.25e8 + 2 * 0.5e-3
    d_ring = 2 * 15 / 16 * 4 * 25e6 / 1.25e8 + 2 * 15 * 0.5e-3
    t1 = gamma_max_mean(16, 1, 2.0, 0.1) + d_ps
    t8 = (gamma_max_mean(16, 8, 2.0, 0.1) + d_ps) / 8
    assert number(ans.sentence, "D =") == pytest.approx(d_ps, rel=1e-3)
    assert number(ans.sentence, "a step takes") == pytest.approx(t1, rel=1e-3)
    assert number(ans.sentence, "and") == pytest.approx(t8, rel=1e-3)
    assert number(ans.sentence, "server and") == pytest.approx(d_ring, rel=5e-3)  # 3 digits
    marks(ans, 0 if t8 / t1 < 0.5 else 1)


@pytest.mark.parametrize("H_", [1, 2])
def test_local_sgd_with_free_averaging(H_: int) -> None:
    ans = answer("local-sgd", comm_source="slider", D=0.0, H=H_)
    t1, tH = gamma_max_mean(16, 1, 2.0, 0.1), gamma_max_mean(16, H_, 2.0, 0.1) / H_
    assert number(ans.sentence, "a step takes") == pytest.approx(t1, rel=1e-3)
    ratio = tH / t1
    marks(ans, 0 if ratio < 0.5 else 1 if ratio < 1 - 1e-6 else 2)


# -- 7. stragglers -------------------------------------------------------------------------------------

def kth_of_groups(K: int, laws: list[tuple[Any, int]]) -> float:
    """E of the K-th finish among independent workers (law, count) pairs: ∫ P(#done < K) dx."""
    def p_fewer(x: float) -> float:
        pmf = np.array([1.0])
        for law, n in laws:
            pmf = np.convolve(pmf, stats.binom.pmf(np.arange(n + 1), n, law.cdf(x)))
        return float(pmf[:K].sum())
    return integrate.quad(p_fewer, 0, np.inf, limit=400)[0]


def test_backup_workers_against_two_persistent_stragglers() -> None:
    fast, slow = stats.expon(loc=1.0), stats.expon(loc=5.0, scale=5.0)  # s·X with X = 1 + Exp(1)
    ts = kth_of_groups(18, [(fast, 16), (slow, 2)])
    tk = kth_of_groups(16, [(fast, 16), (slow, 2)])
    ans = answer("stragglers")
    assert number(ans.sentence, "takes") == pytest.approx(ts, rel=2e-3)
    assert number(ans.sentence, "K = 16 takes") == pytest.approx(tk, rel=2e-3)
    marks(ans, 2 if ts / tk >= 2 else 1)


def test_backup_workers_without_stragglers() -> None:
    ans = answer("stragglers", stragglers="none")
    ts, tk = 1 + H(18), 1 + H(18) - H(2)
    assert number(ans.sentence, "K = 16 takes") == pytest.approx(tk, rel=1e-3)
    marks(ans, 1)  # 1.5×
    assert ts / tk == pytest.approx(1.5, abs=0.01)


# -- 8. the graph ------------------------------------------------------------------------------------

def maxplus_cycle_time(m: int, neighbours: list[list[int]], steps: int = 3000, seed: int = 5) -> float:
    rng = np.random.default_rng(seed)
    t = np.zeros(m)
    for _ in range(steps):
        t = np.array([t[nb + [i]].max() for i, nb in enumerate(neighbours)]) + rng.exponential(1.0, m)
    return float(t.mean() / steps)


def test_graph_ring_at_the_preset_is_faster_than_sync() -> None:
    ans = answer("graph")
    m = lessons.preset_getter(STEP["graph"])("m")
    gamma = maxplus_cycle_time(m, [[(i - 1) % m, (i + 1) % m] for i in range(m)])
    bound = number(ans.sentence, "γ = at most")
    assert gamma <= 1.02 * bound and bound < H(m)  # the bound holds, and is below sync's E[X_{m:m}] = H_m
    assert f"{H(m):.4g}" in ans.sentence
    marks(ans, 0)


def test_graph_complete_is_sync() -> None:
    ans = answer("graph", graph="complete", m=8)
    assert f"{H(8):.4g}" in ans.sentence
    marks(ans, 1)


# -- the summary -----------------------------------------------------------------------------------

def test_the_summary_has_every_step_with_its_answer_at_the_preset() -> None:
    md = lessons.summary_markdown("seeds")
    for n, s in enumerate(lesson_steps.STEPS, 1):
        assert f"## {n}. {s.title}" in md and f"lessons?lesson=seeds&step={n}&lang=en" in md
    assert md.count("answer (") + md.count("Answer: (") >= len(lesson_steps.STEPS) - 1
    html = lessons.summary_html("seeds")
    assert html.startswith("<!doctype html>") and html.count("<section>") == len(lesson_steps.STEPS)
