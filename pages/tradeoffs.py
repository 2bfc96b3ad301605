"""Trade-offs: wall-clock time to reach an error target over a grid of K, m or H; the best marked."""

import streamlit as st

from distsgd import curves
from distsgd.error.general import RealProblem
from distsgd.topology import graph_fits
from distsgd.ui import cached, claims, page, plain_text, sidebar, state, views
from distsgd.ui import rerun_caps as caps
from distsgd.ui.i18n import tr

sel = sidebar.current()
page.header(
    tr("Trade-offs: the best K, m or H"),
    tr("Time to reach a target error ε for each value of the swept parameter, from the bound (where one "
       "exists and its conditions hold) and from simulated SGD (error bars: the times at which the edges of "
       "its 95% band reach ε). Fewer gradients per update are quicker but noisier, so the best choice can "
       "sit in between. Dotted lines: sync and async at the sidebar's settings, for reference."),
)


def body(sel: sidebar.Selection) -> None:
    """The trade-off axis control, the chart and table: moving one of them reruns only this (a fragment)."""
    # the formula shown is the one the chart uses: read the page's choices before drawing them;
    # a schedule sets what is swept (the K of k-sync, or the H of local SGD)
    forced = sidebar.SCHEDULED.get(state.value("schedule"))
    shown = forced[1] if forced else "local-sgd" if state.value("axis") == "H" else state.value("axis_scheme")
    for f in views.target_formula(shown):
        st.latex(f)
    c1, c2, c3, c4 = st.columns(4)
    if forced:
        axis, name = forced[0], forced[1]
        c1.markdown(tr("sweep over: **{axis}** (the schedule's parameter)", axis=axis))
        c2.markdown(tr("scheme: **{scheme}**", scheme=name))
    else:
        axis = sidebar.choice("axis", c1, radio=True)
        name = sidebar.choice("axis_scheme", c2) if axis != "H" else "local-sgd"
        if axis == "H":
            c2.markdown(tr("scheme: **local-sgd** (H is its parameter)"))
    eps = sidebar.number("eps", c3, slider=False)
    horizon = sidebar.number("horizon", c4, slider=False)
    spec = sidebar.schedule_controls(sel.m)
    box = sidebar.settings(tr("Problem, and the constants this sweep uses"), "tradeoffs",
                           open_now=sidebar.awaits_upload())
    problem = sidebar.problem_controls(real=True, where=box)
    real = isinstance(problem, RealProblem)
    c5, c6 = box.columns(2)
    accuracy = float(sidebar.number("acc_target", c5, slider=False)) if real else None
    gamma = sidebar.number("gamma", c5, help=tr("staleness factor of the bound for the asynchronous schemes "
                                                "(the swept scheme if it is one, and the async reference)"))
    D = sidebar.number("D", c6) if name == "local-sgd" else caps.LOCAL_SGD_FREE_D
    box.caption(tr("Simulated SGD: {replicas} replicas per point, constant learning rate η, "
                   "p₀ the measured fraction of fresh gradients.",
                   replicas=caps.replicas_at(sel.budget, caps.TARGET_REPLICAS)))
    with page.guard():
        if axis == "K":
            values = sorted(set(curves.k_grid(sel.m, caps.SWEEP_K_POINTS)) | {sel.K})
            schemes = [curves.build(name, sel.m, k, sel.H, float(D), sel.graph) for k in values]
        elif axis == "m":
            values = list(page.m_values(sel.workers.m, curves.m_grid(max(sel.m, 2), caps.SWEEP_M_POINTS)))
            schemes = [curves.build(name, m, sel.K, sel.H, float(D), sel.graph) for m in values
                       if not curves.needs_graph(name) or graph_fits(sel.graph, m)]
        else:
            schemes = [curves.build("local-sgd", sel.m, None, h, float(D)) for h in caps.SWEEP_H_VALUES]
        schemes = list(dict.fromkeys(schemes))
        refs = tuple(curves.build(n, sel.m, sel.K, sel.H) for n in ("sync", "async"))
        view = cached.target_view(tuple(schemes), refs, sel.workers, problem, eps, horizon,
                                  caps.replicas_at(sel.budget, caps.TARGET_REPLICAS), sel.seed, float(gamma), axis,
                                  sel.budget, accuracy, spec)
        rows, ref, (best_b, best_s) = view["rows"], view["ref"], view["best"]
        if any("time_to_target" not in r for r in rows):
            st.caption(tr("Some points were not simulated (over one request's caps: each row's note says which): "
                          "their time to ε comes from the bound only, where there is one."))
        page.chart(view["figure"], rows + ref, f"time-to-target-vs-{axis}",
                   claims.best_choice(rows, axis, best_b, best_s, eps))
        page.table(views.target_table(rows, ref, (best_b, best_s), accuracy),
                   **{tr("note"): st.column_config.TextColumn(width="large")})
        if "schedule" in view:
            schedule(view["schedule"], rows, best_s, axis, eps, horizon)
        if real:
            st.subheader(tr("The problem's constants"))
            page.table(views.problem_table(cached.problem_facts(problem), []))
            st.caption(tr("The bound's times to ε use L, μ, the bound on σ² and F₀ of this table; the simulated "
                          "times are those of SGD itself on these data."))


def schedule(comparison: dict, rows: list, best: int | None, axis: str, eps: float, horizon: float) -> None:
    """The schedule beside every fixed value: the error curves, the verdict, the table, the value in force."""
    st.subheader(tr("The schedule against every fixed {p}", p=axis))
    run = comparison["run"]
    if "skipped" in run:
        st.warning(plain_text.plain(tr("The schedule was not simulated: {why}", why=views.skipped_why(run))),
                   icon=":material/warning:")
        return
    page.chart(comparison["figure"], comparison["rows"], "schedule-vs-fixed",
               claims.schedule_verdict(rows, run, axis, eps, horizon))
    page.table(views.schedule_table(rows, best, run, axis), **{tr("run"): st.column_config.TextColumn(width="large")})
    st.caption(tr("★ the best fixed {p} by the simulated mean. A time's 95% band: when the edges of the 95% band of "
                  "the mean error reach ε. The schedule and the fixed values are simulated on the same time grid.",
                  p=axis))
    page.chart(comparison["value_figure"], run["value_rows"], "schedule-value",
               tr("The {p} in force at each time, averaged over the replicas (band: the 95% confidence interval of "
                  "that mean), beside the best fixed {p} (dotted); the rule acts at every checkpoint.", p=axis)
               if best is not None else
               tr("The {p} in force at each time, averaged over the replicas (band: the 95% confidence interval of "
                  "that mean); no fixed {p} reaches ε, so none is drawn beside it.", p=axis))


page.fragment(body, sel)
