"""Trade-offs: wall-clock time to reach an error target over a grid of K, m or H; the best marked."""

import math

import streamlit as st

from distsgd import plots, sweeps
from distsgd.schemes import scheme_class
from distsgd.ui import cached, claims, page, sidebar, state

sel = sidebar.current()
# the formula shown is the one the chart uses: read the page's choices before the header
swept = "local-sgd" if state.value("sweep") == "H" else state.value("sweep_scheme")
stale = swept != "local-sgd" and not scheme_class(swept).fresh  # the bound with γ′ and p₀
if swept == "local-sgd":
    formula = [r"\text{local SGD: no bound is drawn; the time to } \varepsilon \text{ comes from simulated SGD}"]
elif not stale:
    formula = [r"t^*(K) = \mathbb{E}[T_K]\,\frac{\log\big((\varepsilon - F_K)/(F_0 - F_K)\big)}{\log(1-\eta\mu)},"
               r"\quad F_K=\frac{\eta L\sigma^2}{2\mu b K}"]
else:
    formula = [r"t^*(K) = \mathbb{E}[T_K]\,\frac{\log\big((\varepsilon - F'_K)/(F_0 - F'_K)\big)}{\log(1-\eta\mu\gamma')},"
               r"\quad F'_K=\frac{\eta L\sigma^2}{2\mu\gamma' b K},\quad \gamma' = 1-\gamma+\tfrac{p_0}{2}"]
page.header(
    "Trade-offs: the best K, m or H",
    "Time to reach a target error ε for each value of the swept parameter, from the bound (where one "
    "exists and its conditions hold) and from simulated SGD (error bars: the times at which the edges of "
    "its 95% band reach ε). Fewer gradients per update are quicker but noisier, so the best choice can "
    "sit in between. Dotted lines: sync and async at the sidebar's settings, for reference.",
    formula + ([r"p_0 = \text{the measured fraction of fresh gradients at each point}"] if stale else []),
)
c1, c2, c3, c4 = st.columns(4)
sweep = sidebar.choice("sweep", c1, radio=True)
name = sidebar.choice("sweep_scheme", c2) if sweep != "H" else "local-sgd"
if sweep == "H":
    c2.markdown("scheme: **local-sgd** (H is its parameter)")
eps = sidebar.number("eps", c3, slider=False)
horizon = sidebar.number("horizon", c4, slider=False)
with st.expander("Problem, and the constants this sweep uses", expanded=False):
    problem = sidebar.problem_controls()
    c5, c6 = st.columns(2)
    gamma = sidebar.number("gamma", c5) if stale else state.value("gamma")
    D = sidebar.number("D", c6) if sweep == "H" else state.value("D")
with page.guard():
    if sweep == "K":
        values = sorted(set(sweeps.k_grid(sel.m, 8)) | {sel.K})
        schemes = [sweeps.build(name, sel.m, k, sel.H) for k in values]
    elif sweep == "m":
        values = sweeps.m_grid(max(sel.m, 2), 10)
        schemes = [sweeps.build(name, m, sel.K, sel.H) for m in values]
    else:
        values = [1, 2, 4, 8, 16, 32, 64]
        schemes = [sweeps.build("local-sgd", sel.m, None, h, float(D)) for h in values]
    schemes = list(dict.fromkeys(schemes))
    rows = cached.target_rows(tuple(schemes), sel.delay, problem, eps, horizon, 30, sel.seed,
                              float(gamma), None, sweep)
    best_b = sweeps.best_index(rows, "bound_time")
    best_s = sweeps.best_index(rows, "simulated_time")
    if any("simulated_time" not in r for r in rows):
        st.caption("Some points were not simulated (too many updates for one request at this T and m): "
                   "their time to ε comes from the bound only, where there is one.")
    ref = cached.target_rows(tuple(sweeps.build(n, sel.m, sel.K, sel.H) for n in ("sync", "async")),
                             sel.delay, problem, eps, horizon, 30, sel.seed, float(gamma), None, "K")
    page.chart(plots.target_figure(rows, sweep, best_b, best_s, eps, ref), rows + ref, f"time-to-target-vs-{sweep}",
               claims.best_choice(rows, sweep, best_b, best_s, eps))
    fmt = lambda v: None if v is None else ("never" if math.isinf(v) else v)  # noqa: E731
    def why(r: dict) -> str:
        """Why a cell is empty: the simulation's reason, or the bound's."""
        notes = [f"not simulated: {r['simulated_skipped']}"] if "simulated_skipped" in r else []
        if r["bound_time"] is None:
            notes.append(r["bound_source"])
        return "; ".join(notes)

    page.table([{"scheme": r["label"], "time to ε (bound)": fmt(r["bound_time"]),
                 "time to ε (simulated)": fmt(r.get("simulated_time")),
                 "best": "★" if i in (best_b, best_s) else "", "note": why(r)} for i, r in enumerate(rows)]
               + [{"scheme": f"reference: {r['label']}", "time to ε (bound)": fmt(r["bound_time"]),
                   "time to ε (simulated)": fmt(r.get("simulated_time")), "best": "", "note": why(r)}
                  for r in ref], note=st.column_config.TextColumn(width="large"))
