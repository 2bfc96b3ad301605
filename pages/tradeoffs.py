"""Trade-offs: wall-clock time to reach an error target over a grid of K, m or H; the best marked."""

import math

import streamlit as st

from distsgd import plots, sgd, sweeps
from distsgd.ui import cached, page, sidebar, state

sel = sidebar.current()
page.header(
    "Trade-offs: the best K, m or H",
    "Time to reach a target error ε for each value of the swept parameter, from the bound "
    "(t* = E[T]·log((ε − F)/(F₀ − F)) / log ρ) and from simulated SGD (error bars: the times at which "
    "the edges of its 95% band reach ε). Fewer gradients per update are quicker but noisier: the best "
    "choice sits in between. Dotted lines: sync and async at the sidebar's settings, for reference.",
    [r"t^*(K) = \mathbb{E}[T_K]\,\frac{\log\big((\varepsilon - F_K)/(F_0 - F_K)\big)}{\log(1-\eta\mu)}"],
)
c1, c2, c3, c4 = st.columns(4)
sweep = sidebar.choice("sweep", c1, radio=True)
name = sidebar.choice("sweep_scheme", c2)
eps = sidebar.number("eps", c3, slider=False)
horizon = sidebar.number("horizon", c4, slider=False)
with page.guard():
    problem = sgd.Problem(**{k: state.value(k) for k in ("eta", "L", "mu", "sigma2", "b", "f0", "dim")})
    if sweep == "K":
        values = sorted(set(sweeps.k_grid(sel.m, 8)) | {sel.K})
        schemes = [sweeps.build(name, sel.m, k, sel.H) for k in values]
    elif sweep == "m":
        values = sweeps.m_grid(max(sel.m, 2), 10)
        schemes = [sweeps.build(name, m, sel.K, sel.H) for m in values]
    else:
        values = [1, 2, 4, 8, 16, 32, 64]
        schemes = [sweeps.build("local-sgd", sel.m, None, h, float(state.value("D"))) for h in values]
    schemes = list(dict.fromkeys(schemes))
    rows = cached.target_rows(tuple(schemes), sel.delay, problem, eps, horizon, 30, sel.seed,
                              float(state.value("gamma")), None, sweep)
    best_b = sweeps.best_index(rows, "bound_time")
    best_s = sweeps.best_index(rows, "simulated_time")
    if any("simulated_time" not in r for r in rows):
        st.caption("Some points were not simulated (too many updates for one request at this T and m): "
                   "their time to ε comes from the bound only.")
    ref = cached.target_rows(tuple(sweeps.build(n, sel.m, sel.K, sel.H) for n in ("sync", "async")),
                             sel.delay, problem, eps, horizon, 30, sel.seed, float(state.value("gamma")), None, "K")
    page.chart(plots.target_figure(rows, sweep, best_b, best_s, eps, ref), rows + ref, f"time-to-target-vs-{sweep}",
               "The best value balances time per update (fewer gradients are quicker) against the error "
               "floor (more gradients average out noise). With heavy-tailed delays (preset “heavy-tailed "
               "stragglers”, sweeping K for k-sync) a small K can beat async: cancelling a long job and "
               "restarting it is a fresh draw.")
    fmt = lambda v: None if v is None else ("never" if math.isinf(v) else v)  # noqa: E731
    page.table([{"scheme": r["label"], "time to ε (bound)": fmt(r["bound_time"]),
                 "time to ε (simulated)": fmt(r.get("simulated_time")),
                 "best": "★" if i in (best_b, best_s) else ""} for i, r in enumerate(rows)]
               + [{"scheme": f"reference: {r['label']}", "time to ε (bound)": fmt(r["bound_time"]),
                   "time to ε (simulated)": fmt(r.get("simulated_time")), "best": ""} for r in ref])
