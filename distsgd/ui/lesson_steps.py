"""The steps of a lesson (DESIGN §14): what each says, the view it sets up, the question it asks
and the answer, computed from the numbers the step's page shows.

A step's answer is a claim like those of :mod:`distsgd.ui.claims`: :meth:`Step.answer` takes the
sidebar's :class:`~distsgd.ui.sidebar.Selection` and a getter of the other controls' values, asks
for the same numbers the step's page draws (the same calls of :mod:`distsgd.ui.cached` with the
same arguments: a cache hit when the page has drawn them), and returns which choice those numbers
make right (None when they decide none, with the reason) and a sentence true for them.  Nothing
here draws; the page and the banner are :mod:`distsgd.ui.lessons`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .. import curves
from .. import error as sgd
from ..delays import Exponential
from ..error.general import RealProblem
from . import cached, claims, controls, views
from . import rerun_caps as caps
from .controls import UPLOAD_PROBLEM
from .i18n import N_, tr
from .presets import PRESETS
from .sidebar import Selection
from .state import PROBLEM_KEYS

__all__ = ["Answer", "Step", "STEPS", "LETTERS", "fields"]

Getter = Callable[[str], Any]
LETTERS = "abcd"
#: relative tolerance of "equal" between two analytic values (numerical quadrature is 1e-6)
_TOL = 1e-6


@dataclass(frozen=True)
class Answer:
    """Which choice the numbers make right (an index; None when they decide none) and the
    sentence that says so, with the numbers."""

    choice: int | None
    sentence: str


@dataclass(frozen=True)
class Step:
    """One step: its title, a few sentences and its formulas (LaTeX, a line each), the page and the
    preset its "Set it up" applies, the question (its fields from :func:`fields`) and two to four
    choices, and the function that answers it from the numbers."""

    key: str
    title: str
    text: str
    formulas: tuple[str, ...]
    page: str
    preset: dict[str, Any]
    question: str
    choices: tuple[str, ...]
    answer: Callable[[Selection, Getter], Answer]


def fields(sel: Selection) -> dict[str, Any]:
    """The values a question or a choice may name (the sidebar's, as shown)."""
    d, graphs = sel.delay, controls.CHOICE_LABELS["graph"]
    return {"m": sel.m, "K": sel.K, "H": sel.H, "law": d.label, "mean": f"{d.mean:.4g}",
            "half": f"{max(sel.m / 2, 1.5):g}", "share": f"{(sel.m - sel.K) / sel.m:.0%}",
            "workers": views.workers_label(sel.workers),
            "graph": tr(graphs.get(sel.graph, sel.graph))}


def _letter(i: int | None) -> str:
    return "—" if i is None else f"({LETTERS[i]})"


def _mid(iv: tuple[float, float, str]) -> float:
    return (iv[0] + iv[1]) / 2


def _show(iv: tuple[float, float, str]) -> str:
    """An E[T] as the sentences show it: the analytic value, or the Monte Carlo mean with its 95% half-width."""
    mid = _mid(iv)
    return f"{mid:.4g}" if iv[2] == "analytic" else tr("{value:.4g} (Monte Carlo, 95% CI ±{half:.2g})",
                                                         value=mid, half=(iv[1] - iv[0]) / 2)


def _exp_note(sel: Selection) -> bool:
    """Whether the sidebar's law is the (shifted) exponential of the seeds' closed forms."""
    return sel.workers.kind == "none" and isinstance(sel.delay, Exponential)


def _harmonic(n: int) -> float:
    return math.fsum(1 / i for i in range(1, n + 1))


# -- the numbers each page draws (the page's own calls, with its arguments) ---------------------


def runtime_here(sel: Selection, get: Getter) -> list[dict[str, Any]]:
    """The runtime page's rows at the sidebar's point (its table "The numbers at m, K"): from the
    chart its view control shows, E[T] against K or against m."""
    if get("rt_view") == "K":
        Ks = tuple(sorted(set(curves.k_grid(sel.m, caps.RUNTIME_K_POINTS)) | {sel.K}))
        chart = cached.runtime_vs_K_view(sel.schemes, sel.m, sel.workers, Ks, sel.H, sel.budget, sel.seed,
                                         N_("wait-for count K"), N_("E[T] against K (m = {m})").format(m=sel.m),
                                         sel.graph)
        return [r for r in chart["rows"] if r["x_K"] == sel.K]
    ms = (sel.workers.m,) if sel.workers.m is not None else tuple(curves.m_grid(max(sel.m, 2), caps.RUNTIME_M_POINTS))
    chart = cached.runtime_vs_m_view(sel.schemes, ms, sel.workers, sel.K, sel.H, caps.LOCAL_SGD_FREE_D, sel.budget,
                                     sel.seed, N_("workers m (log scale)"),
                                     N_("E[T] against m (K = {K}, clamped to m)").format(K=sel.K), sel.graph)
    return [r for r in chart["rows"] if r["m"] == sel.m]


def runtime_rows(sel: Selection, get: Getter, names: tuple[str, ...]) -> dict[str, dict[str, Any] | None]:
    """The rows of ``names`` at the sidebar's point: the page's chart rows (its table "The numbers at
    m, K") where it has them; K-sync and K-async together as its "K-sync or K-async?" takes them
    (both from its own call when the chart lacks one); a scheme the chart lacks, from the same kind
    of call."""
    here = {r["scheme"]: r for r in runtime_here(sel, get)}
    pair = ("k-sync", "k-async")
    if set(pair) <= set(names) and not set(pair) <= set(here) and sel.m > 1:  # as the page's "K-sync or K-async?"
        schemes = tuple(curves.build(n, sel.m, sel.K) for n in pair)
        here.update({r["scheme"]: r for r in cached.runtime_points(schemes, sel.workers, sel.budget, sel.seed)})
    missing = tuple(n for n in names if n not in here)
    if missing:
        schemes = tuple(curves.build(n, sel.m, sel.K) for n in missing)
        here.update({r["scheme"]: r for r in cached.runtime_points(schemes, sel.workers, sel.budget, sel.seed)})
    return {n: here.get(n) for n in names}


def _problem(get: Getter) -> sgd.Problem | RealProblem | None:
    """The Error page's problem (None for an uploaded file: its data are not the lesson's to read)."""
    choice = get("problem")
    if choice == UPLOAD_PROBLEM:
        return None
    if choice != "quadratic":
        return RealProblem(choice.removeprefix("logreg:"), get("l2"), get("eta"), get("b"))
    values = {k: get(k) for k in PROBLEM_KEYS}
    values["mu"] = min(values["mu"], values["L"])  # the page clamps μ ≤ L
    return sgd.Problem(**values)


def error_view(sel: Selection, get: Getter) -> dict[str, Any] | None:
    """The Error page's chart (its call, with its controls' values); None for an uploaded data file."""
    problem = _problem(get)
    if problem is None:
        return None
    rule = get("lr_rule")
    lr = sgd.LearningRate(rule, get("C")) if rule == "adaptive" else sgd.LearningRate(rule)
    schemes = tuple(curves.build(n, sel.m, sel.K, sel.H, caps.LOCAL_SGD_FREE_D, sel.graph) for n in sel.schemes)
    p0 = get("p0") if get("p0_mode") == "input" else None
    problem_: Any = problem  # the page passes a data set's problem too
    return cached.error_view(schemes, sel.workers, problem_, float(get("horizon")), caps.ERROR_POINTS,
                             get("replicas"), sel.seed, get("gamma"), p0, lr, float(get("eps")), sel.budget)


# -- the answers ---------------------------------------------------------------------------------

def _iid_only() -> Answer:
    return Answer(None, tr("This step is about identical workers, and the sidebar has stragglers (Who is slow): "
                           "press “Set it up” again, or see the step on stragglers."))


def _sync(sel: Selection, get: Getter) -> Answer:
    if sel.workers.kind != "none":
        return _iid_only()
    iv = claims.interval(runtime_rows(sel, get, ("sync",))["sync"])
    mean = sel.delay.mean
    if iv is None or not math.isfinite(mean) or not math.isfinite(_mid(iv)):
        return Answer(None, tr("With this law E[X] or E[T] of sync is infinite (or not computed here): no "
                               "multiple of E[X] describes the wait."))
    r = _mid(iv) / mean
    half = max(sel.m / 2, 1.5)
    choice = 0 if r < 1.5 else 1 if r < half else 2
    text = tr("Here X ~ {law} with E[X] = {mean:.4g}, and m = {m}: one sync iteration takes E[T] = E[X₍ₘ:ₘ₎] = "
              "{t}, which is {r:.3g} × E[X]: answer {letter}. Sync waits for the slowest of the m workers.",
              law=sel.delay.label, mean=mean, m=sel.m, t=_show(iv), r=r, letter=_letter(choice))
    if _exp_note(sel):
        d = sel.delay
        text = claims._join(text, tr("For exponential times E[X₍ₘ:ₘ₎] = Δ + H_m/λ, with H_{m} = {h:.4g}: it grows "
                                     "like ln m, so doubling m adds only about ln 2/λ = {step:.3g}.",
                                     m=sel.m, h=_harmonic(sel.m), step=math.log(2) / d.rate))  # type: ignore[attr-defined]
    return Answer(choice, text)


def _ksync(sel: Selection, get: Getter) -> Answer:
    if sel.workers.kind != "none":
        return _iid_only()
    rows = runtime_rows(sel, get, ("k-sync", "sync"))
    a, b = claims.interval(rows["k-sync"]), claims.interval(rows["sync"])
    if a is None or b is None or not math.isfinite(_mid(b)) or _mid(b) <= 0:
        return Answer(None, tr("E[T] of sync or of K-sync is infinite or not computed here: try a law with a "
                               "finite mean."))
    saving, share = 1 - _mid(a) / _mid(b), (sel.m - sel.K) / sel.m
    choice = 1 if saving > share + _TOL else 0
    text = tr("Waiting for K = {K} of m = {m}: E[X₍K:m₎] = {tk} against E[X₍ₘ:ₘ₎] = {ts} for sync. K-sync saves "
              "{saving:.1%} of an iteration by dropping {share:.1%} of the workers: answer {letter}.",
              K=sel.K, m=sel.m, tk=_show(a), ts=_show(b), saving=saving, share=share, letter=_letter(choice))
    text = claims._join(text, tr("The last workers to finish take the longest: that tail is what K-sync, and backup "
                                 "workers (m = N + b, K = N), cut off.") if choice == 1 else
                        tr("Here the saving is no larger than the share of workers dropped: this law has no long "
                           "tail for K-sync to cut off."))
    return Answer(choice, text)


def _async(sel: Selection, get: Getter) -> Answer:
    if sel.workers.kind != "none":
        return _iid_only()
    rows = runtime_rows(sel, get, ("async", "sync"))
    sp = cached.async_speedup(sel.m, sel.workers)
    a, b = claims.interval(rows["async"]), claims.interval(rows["sync"])
    if sp["value"] is None or a is None or b is None:
        return Answer(None, tr("E[X] or E[T] of sync is infinite for this law: the speed-up is undefined."))
    s, m = float(sp["value"]), sel.m
    choice = 2 if s > m * (1 + _TOL) else 1 if s >= m * (1 - _TOL) else 0
    text = tr("Async: E[T] = E[X]/m = {ta}; sync: E[T] = {ts}. So async makes {s:.3g} times as many updates per unit "
              "time as sync (the speed-up shown under the chart), against m = {m}: answer {letter}. Each of the m "
              "workers finishes a gradient every E[X] on average, and async updates at every one of them; sync "
              "updates once per slowest-of-m.", ta=_show(a), ts=_show(b), s=s, m=m, letter=_letter(choice))
    if _exp_note(sel) and sel.delay.shift == 0:
        text = claims._join(text, tr("For exponential times the speed-up is m·H_m = {m} × {h:.4g} = {mh:.4g}.",
                                     m=m, h=_harmonic(m), mh=m * _harmonic(m)))
    return Answer(choice, claims._join(text, tr("The price: an async gradient was computed on parameters that are "
                                                "on average m − 1 = {stale} updates old.", stale=m - 1)))


def _kasync(sel: Selection, get: Getter) -> Answer:
    rows = runtime_rows(sel, get, ("k-sync", "k-async"))
    ks, ka = rows["k-sync"], rows["k-async"]
    said = claims.ksync_vs_kasync(sel.workers, sel.m, min(sel.K, sel.m), ks, ka)
    a, b = claims.interval(ks), claims.interval(ka)
    if a is None or b is None:
        return Answer(None, tr("{claim} K-async was not simulated at this point (its run exceeds the Monte Carlo "
                               "budget: raise it under Simulation, or lower m): no answer yet.", claim=said))
    choice = 0 if a[1] < b[0] else 1 if b[1] < a[0] else 2
    return Answer(choice, tr("{claim} Answer: {letter}.", claim=said, letter=_letter(choice)))


#: the schemes the race's choices name, in their order
_RACE = ("async", "k-sync", "sync")


def _race(sel: Selection, get: Getter) -> Answer:
    view = error_view(sel, get)
    if view is None:
        return Answer(None, tr("An uploaded data file: read the sentence under the page's chart."))
    names = {curves.build(n, sel.m, sel.K, sel.H, caps.LOCAL_SGD_FREE_D, sel.graph).label: n for n in _RACE
             if n in sel.schemes}
    rows = [r for r in view["rows"] if r["scheme"] in names]
    if len(names) < 2 or not rows:
        return Answer(None, tr("Choose at least two of sync, K-sync and async in the sidebar to race them."))
    times = sorted({r["time"] for r in rows if r["time"] > 0})
    horizon, early = times[-1], min(times, key=lambda t: abs(t - times[-1] / 10))

    def at(t: float) -> list[dict[str, Any]]:
        return sorted((r for r in rows if r["time"] == t), key=lambda r: r["simulated_mean"])

    first, end = at(early)[0], at(horizon)
    low, runner = end[0], end[1]
    tie = low["simulated_high"] >= runner["simulated_low"]
    choice = None if tie else _RACE.index(names[low["scheme"]])
    text = tr("At t = {early:.3g} the lowest simulated mean error is {first}'s ({v_first:.3g}); at T = {horizon:g} it "
              "is {low}'s ({v_low:.3g}), then {runner}'s ({v_runner:.3g}).", early=early, first=names[first["scheme"]],
              v_first=first["simulated_mean"], horizon=horizon, low=names[low["scheme"]], v_low=low["simulated_mean"],
              runner=names[runner["scheme"]], v_runner=runner["simulated_mean"])
    text = claims._join(text, tr("Their 95% bands overlap at T: the simulation cannot tell them apart here.") if tie
                        else tr("Their 95% bands at T do not overlap: answer {letter}.", letter=_letter(choice)))
    if names[first["scheme"]] != names[low["scheme"]]:
        text = claims._join(text, tr("Quick, noisy updates win early; averaging more fresh gradients per update wins "
                                     "late: with fresh gradients the bound's floor F_K = ηLσ²/(2μbK) falls as 1/K."))
    return Answer(choice, text)


def _local(sel: Selection, get: Getter) -> Answer:
    ms = tuple(curves.m_grid(caps.UI_M_MAX, caps.COMM_M_POINTS))
    net = {t: cached.network(t, get("params_m"), get("gbps"), get("latency_ms"), sel.m, ms)
           for t in ("parameter-server", "ring-allreduce")}
    network = get("comm_source") != "slider"
    D = float(net[get("topology")]["D"] if network else get("D"))
    Hs = tuple(sorted({*caps.LOCAL_H_GRID, sel.H, 2 * sel.H}))
    rt = cached.runtime_vs_H_view(sel.m, Hs, sel.workers, D, sel.budget, sel.seed,
                                  N_("Runtime per local step (m = {m}, D = {D})").format(m=sel.m, D=f"{D:.3g}"),
                                  N_("E[T] per local step (time units)"))
    by = {r["H"]: claims.interval(r) for r in rt["rows"]}
    one, many = by.get(1), by.get(sel.H)
    if one is None or many is None:
        return Answer(None, tr("E[T] per local step is not computed here for this law."))
    ratio = _mid(many) / _mid(one)
    choice = 0 if ratio < 0.5 else 1 if ratio < 1 - _TOL else 2
    text = tr("With D = {D:.3g} per averaging, a step takes {t1} at H = 1 and {tH} at H = {H}, {ratio:.0%} of it: "
              "answer {letter}. D is paid once per H steps, and the wait for the slowest is spread over H steps.",
              D=D, t1=_show(one), tH=_show(many), H=sel.H, ratio=ratio, letter=_letter(choice))
    ps, ring = net["parameter-server"]["D"], net["ring-allreduce"]["D"]
    return Answer(choice, claims._join(text, tr(
        "One averaging of this model with m = {m} takes {ps:.3g} s through a parameter server and {ring:.3g} s by "
        "ring all-reduce: the server's link carries all m workers' traffic.", m=sel.m, ps=ps, ring=ring)))


def _backups(sel: Selection, get: Getter) -> Answer:
    rows = runtime_rows(sel, get, ("sync", "k-sync"))
    a, b = claims.interval(rows["sync"]), claims.interval(rows["k-sync"])
    if a is None or b is None or not math.isfinite(_mid(a)) or _mid(b) <= 0:
        return Answer(None, tr("E[T] of sync or of K-sync is infinite or not computed here: try a law with a "
                               "finite mean."))
    r = _mid(a) / _mid(b)
    choice = 0 if r < 1.25 else 1 if r < 2 else 2
    text = tr("Workers: {workers}. Sync, which waits for all m = {m}, takes {ts} per iteration; K-sync with K = {K} "
              "takes {tk}: {r:.3g} times as fast: answer {letter}. K-sync never waits for the m − K = {b} slowest "
              "of an iteration.", workers=views.workers_label(sel.workers), m=sel.m, ts=_show(a), K=sel.K,
              tk=_show(b), r=r, letter=_letter(choice), b=sel.m - sel.K)
    if sel.workers.kind == "static" and 0 < sel.workers.slow <= sel.m - sel.K:
        text = claims._join(text, tr("With at most m − K persistent stragglers, they are simply the workers it "
                                     "drops: backup workers buy most against a straggler that stays."))
    return Answer(choice, text)


def _graph(sel: Selection, get: Getter) -> Answer:
    slow = tuple(range(min(sel.workers.slow, sel.m))) if sel.workers.kind == "static" else ()
    view = cached.graph_view(sel.graph, sel.m, slow, sel.workers, sel.budget, sel.seed)
    said = claims.graph_runtime(view["rows"], view["lower"], view["upper"], view["facts"], sel.m)
    by = {r["scheme"]: r for r in view["rows"]}
    d, s = by.get("d-psgd"), by.get("sync")
    a, b = claims.interval(d), claims.interval(s)
    if d is not None and d.get("kind") == "upper_bound" and d.get("analytic") is not None and b is not None \
            and d["analytic"] < b[0] * (1 - _TOL):
        a = (d["analytic"], d["analytic"], "analytic")  # an upper bound below sync decides it
    if a is None or b is None:
        choice = None
    else:
        choice = 0 if a[1] < b[0] * (1 - _TOL) else 2 if a[0] > b[1] * (1 + _TOL) else 1
    gap = tr("The price is that the m models differ: the spectral gap δ = {gap:.3g} of this graph sets how fast "
             "averaging with neighbours pulls them together (the consensus chart below).",
             gap=view["facts"]["spectral_gap"])
    verdict = tr("Answer: {letter}.", letter=_letter(choice)) if choice is not None else tr(
        "The numbers here do not decide it (in theory d-psgd's iteration never takes longer than sync's).")
    return Answer(choice, claims._join(said, verdict, gap))


# -- the lesson ----------------------------------------------------------------------------------

_EXP = {"delay": "exp", "lam": 1.0, "delta": 0.0, "m": 16}

STEPS: tuple[Step, ...] = (
    Step("sync", N_("The slowest of m"), N_(
        "In synchronous SGD every worker computes one gradient on the same parameters, and the server waits for "
        "all m of them before it updates. Each worker's time X is random, so an iteration lasts as long as the "
        "slowest of m: the maximum X₍ₘ:ₘ₎. The mean of one worker hides the tail; the maximum of many does not."),
         (r"\mathbb{E}[T_{\mathrm{sync}}] = \mathbb{E}[X_{m:m}] = \Delta + \frac{H_m}{\lambda},\qquad "
          r"H_m = 1 + \tfrac12 + \dots + \tfrac1m \approx \ln m",),
         "pages/runtime.py", {**_EXP, "K": 16, "schemes": ["sync"], "rt_view": "m"},
         N_("m = {m} workers each need X ~ {law} (mean E[X] = {mean}) for one gradient. How long does one sync "
            "iteration take on average?"),
         (N_("less than 1.5 × E[X]: the workers are alike, so about as long as one of them"),
          N_("between 1.5 × E[X] and {half} × E[X]"),
          N_("{half} × E[X] or more: close to one worker after another")), _sync),
    Step("k-sync", N_("Waiting for K of m"), N_(
        "K-sync updates as soon as the fastest K of the m workers have finished, and cancels the other m − K: each "
        "update averages K gradients instead of m (a little noisier), but never waits for the slowest. Backup "
        "workers are the same idea: run m = N + b workers and use the first N."),
         (r"\mathbb{E}[T_{K\text{-sync}}] = \mathbb{E}[X_{K:m}] = \Delta + \frac{H_m - H_{m-K}}{\lambda}",),
         "pages/runtime.py", {**_EXP, "K": 12, "schemes": ["sync", "k-sync"], "rt_view": "K"},
         N_("K-sync waits for K = {K} of m = {m} workers, dropping {share} of them. What share of sync's iteration "
            "time does it save?"),
         (N_("at most the share of workers it drops ({share})"),
          N_("more than the share of workers it drops ({share})")),
         _ksync),
    Step("async", N_("The renewal view of async"), N_(
        "Asynchronous SGD never waits: a worker that finishes pushes its gradient, the server updates at once, and "
        "the worker reads the new parameters and starts again. Each worker is a renewal process with one gradient "
        "every E[X] on average, so updates arrive m times as often as one worker's. The price is staleness: a "
        "gradient was computed on parameters that others have updated since."),
         (r"\mathbb{E}[T_{\mathrm{async}}] = \frac{\mathbb{E}[X]}{m}",
          r"\frac{\mathbb{E}[T_{\mathrm{sync}}]}{\mathbb{E}[T_{\mathrm{async}}]} = \frac{m\,\mathbb{E}[X_{m:m}]}"
          r"{\mathbb{E}[X]} = m H_m \ \ (X \sim \mathrm{Exp}(\lambda))"),
         "pages/runtime.py", {**_EXP, "K": 4, "schemes": ["sync", "async"], "rt_view": "m"},
         N_("With m = {m} workers, how many times as many updates per unit time does async make as sync?"),
         (N_("fewer than m = {m} times as many"), N_("exactly m = {m} times as many"),
          N_("more than m = {m} times as many")), _async),
    Step("k-async", N_("K-async, and laws that are not new-longer-than-used"), N_(
        "K-async updates once K workers have pushed, but does not cancel the others: they finish their (now stale) "
        "gradients. If a job that has already run a while is no quicker to finish than a fresh one (the law is "
        "new-longer-than-used, NLU: shifted exponential, uniform), letting it run on never hurts and K-async is at "
        "least as fast as K-sync. Heavy tails (lognormal, Pareto) are not NLU: a job that has run long is likely to "
        "run much longer, and cancelling it for a fresh draw can win."),
         (r"X\ \mathrm{NLU}:\ P(X > s+t \mid X > t) \le P(X > s)",
          r"\Rightarrow\ \mathbb{E}[T_{K\text{-async}}] \le \mathbb{E}[X_{K:m}] = \mathbb{E}[T_{K\text{-sync}}]"),
         "pages/runtime.py", {"delay": "lognormal", "ln_mu": 0.0, "ln_sigma": 1.5, "delta": 0.0, "m": 16, "K": 4,
                              "schemes": ["k-sync", "k-async"], "rt_view": "K"},
         N_("X ~ {law}. At K = {K} of m = {m}, which is faster per iteration?"),
         (N_("K-sync: cancel the slow jobs and start afresh"), N_("K-async: let the slow jobs finish"),
          N_("neither: the same within the error")), _kasync),
    Step("race", N_("The race between error and runtime"), N_(
        "What matters is the error reached by a given wall-clock time. Async makes many quick updates, each from "
        "one stale gradient; K-sync makes fewer, each averaging K fresh gradients; sync waits for all m. The error "
        "falls like (1 − ημ)^J towards a noise floor, with J(t) = t / E[T] updates by time t: the fast scheme falls "
        "first, the one with the lower floor ends lower."),
         (r"\mathbb{E}[f(w_J)] - f^* \le F_K + (1-\eta\mu)^{J}(F_0 - F_K)",
          r"J(t) = \frac{t}{\mathbb{E}[T]},\qquad F_K = \frac{\eta L \sigma^2}{2\mu b K}"),
         "pages/error.py", {**PRESETS[N_("async wins early, loses late")], "problem": "quadratic",
                            "lr_rule": "constant", "p0_mode": "measured"},
         N_("Sync, K-sync (K = {K}) and async race on m = {m} workers. Which has the lowest error at the end of "
            "the chart?"),
         (N_("async"), N_("K-sync"), N_("sync")), _race),
    Step("local-sgd", N_("Local SGD and the cost of communication"), N_(
        "Averaging the models costs time D: through a parameter server, whose link carries all m workers' traffic, "
        "or by ring all-reduce, which needs 2(m − 1) messages but little bandwidth each. Local SGD takes H local "
        "steps between averages: D is paid once per H steps and the wait for the slowest is spread over H steps, "
        "but the models drift apart in between."),
         (r"\mathbb{E}[T_{H}] = \frac{\mathbb{E}[\max_i \sum_{h=1}^{H} X_{ih}] + D}{H}",
          r"D_{\mathrm{PS}} = \frac{2m\cdot 4d}{B} + 2\ell,\qquad "
          r"D_{\mathrm{ring}} = \frac{2(m-1)}{m}\cdot\frac{4d}{B} + 2(m-1)\ell"),
         "pages/local_sgd.py", dict(PRESETS[N_("local SGD with slow network")]),
         N_("The workers average after every H local steps. From H = 1 to H = {H}, what happens to the time per "
            "step?"),
         (N_("it falls by more than half"), N_("it falls, by less than half"), N_("it does not fall")), _local),
    Step("stragglers", N_("Stragglers in practice: what backup workers buy"), N_(
        "Real clusters are not i.i.d.: a machine can be slower all the time (a persistent straggler), or slow now "
        "and then. Sync waits for the slowest every iteration. Running b extra workers and waiting for the first "
        "K = m − b (backup workers, K-sync) drops whoever is slowest this time; the Your cluster page does the same "
        "with a measured trace."),
         (r"\mathbb{E}[T_{K\text{-sync}}] = \int_0^\infty P\big(\#\{i: X_i \le x\} < K\big)\,dx",),
         "pages/runtime.py", dict(PRESETS[N_("backup workers vs a persistent straggler")]),
         N_("Workers: {workers}. How many times as fast per iteration is K-sync with K = {K} as sync with all "
            "m = {m}?"),
         (N_("less than 1.25 times"), N_("1.25 to 2 times"), N_("more than 2 times")), _backups),
    Step("graph", N_("The peer-to-peer graph"), N_(
        "Without a parameter server, the m nodes sit on a graph and each averages its model with its neighbours. "
        "In d-psgd a node starts its next iteration once it and its neighbours have finished this one, so a slow "
        "node holds up its neighbourhood, not everyone; ad-psgd waits for nobody. The cycle time γ of d-psgd lies "
        "between the mean of one worker and the slowest of all m."),
         (r"t_i(k+1) = \max_{j \in N(i)\cup\{i\}} t_j(k) + X_i(k)",
          r"\mathbb{E}[X] \le \gamma \le \mathbb{E}[X_{m:m}]"),
         "pages/graph.py", {**_EXP, "m": 64, "graph": "ring"},
         N_("m = {m} nodes on a {graph}. Compared with sync, which waits for the slowest of all m, how long is a "
            "d-psgd iteration (every node one gradient)?"),
         (N_("shorter"), N_("the same"), N_("longer")), _graph),
)
