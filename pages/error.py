"""Error against wall-clock time: bound, exact model curve and simulated SGD for each scheme."""

import streamlit as st

from distsgd import curves
from distsgd import error as sgd
from distsgd.error.general import RealProblem
from distsgd.ui import cached, claims, page, sidebar, state, views
from distsgd.ui import rerun_caps as caps
from distsgd.ui.i18n import tr

sel = sidebar.current()
page.header(
    tr("Error against wall-clock time"),
    tr("Each scheme runs SGD with the timing of the sidebar's delays, on the model problem f(w) = ½ Σ hᵢ wᵢ² "
       "(curvatures from μ to L, gradient noise σ²/b) or on logistic regression with a bundled data set (the "
       "problem control below). Shown: the simulated mean error f(w) − f* with its 95% band; on the model "
       "problem, for fresh gradients and local SGD, its exact expected error after n updates, averaged over "
       "simulated update counts N(t) (dotted); and the bound of Dutta et al. with J(t) = t / E[T] iterations "
       "(dashed)."),
    views.error_formulas(),
)


def body(sel: sidebar.Selection) -> None:
    """The page's controls and its chart: moving one of them reruns only this (a fragment)."""
    box = sidebar.settings(tr("Problem and learning rate"), "error", open_now=sidebar.awaits_upload())
    problem = sidebar.problem_controls(real=True, where=box)
    c4 = box.columns(4)[3]
    lr_rule = sidebar.choice("lr_rule", c4)
    C = sidebar.number("C", c4, slider=False) if lr_rule == "adaptive" else None  # the other rules have no C
    c5, c6, c7 = box.columns(3)
    gamma = sidebar.number("gamma", c5)
    p0_mode = sidebar.choice("p0_mode", c6, radio=True)
    p0 = sidebar.number("p0", c6) if p0_mode == "input" else None
    replicas = sidebar.number("replicas", c7)
    c1, c2 = st.columns(2)
    horizon = sidebar.number("horizon", c1, slider=False)
    eps = sidebar.number("eps", c2, slider=False)
    spec = sidebar.schedule_controls(sel.m)

    with page.guard():
        schemes = tuple(curves.build(n, sel.m, sel.K, sel.H, caps.LOCAL_SGD_FREE_D, sel.graph) for n in sel.schemes)
        scheduled = None if spec is None else (curves.build(sidebar.SCHEDULED[state.value("schedule")][1], sel.m,
                                                            sel.K, sel.H, caps.LOCAL_SGD_FREE_D), spec)
        lr = sgd.LearningRate(lr_rule) if C is None else sgd.LearningRate(lr_rule, C)
        view = cached.error_view(schemes, sel.workers, problem, horizon, caps.ERROR_POINTS, replicas, sel.seed,
                                 gamma, p0, lr, eps, sel.budget, scheduled)
        rows, targets = view["rows"], view["targets"]
        summary = page.simulated(view["summary"])
        page.chart(view["figure"], rows, "error-vs-time", claims.error_race(rows, targets, eps))
        page.free_averaging_note(sel.schemes)
        st.subheader(tr("Per scheme"))
        page.table(views.error_table(summary, targets))
        if "value_figure" in view:
            run = view["schedule"]
            st.subheader(tr("The schedule's {p} in force", p=run["parameter"]))
            page.chart(view["value_figure"], run["value_rows"], "schedule-value",
                       tr("{schedule} (the thick line above): the {p} in force at each time, averaged over the "
                          "replicas (band: the 95% confidence interval of that mean); it starts at the schedule's "
                          "first value and may change at every checkpoint ({count} here).", schedule=run["label"],
                          p=run["parameter"], count=len(run["checkpoints"])))
        st.caption(tr("For the asynchronous schemes γ is the input above and p₀ the measured fraction of fresh "
                      "gradients unless you enter one; the bound is drawn only where its step-size condition holds."))
        if isinstance(problem, RealProblem) and "accuracy_figure" in view:
            real_problem(problem, {**view, "summary": summary}, replicas)
        if sel.workers.kind == "markov" and sel.workers.persistence > 0:
            st.subheader(tr("What persistence does (async)"))
            pv = cached.persistence_view(sel.workers, sel.m, problem, horizon, replicas, sel.seed, lr)
            if "skipped" in pv:
                st.info(tr("Not simulated: {why}", why=pv["skipped"]))
            else:
                st.markdown(claims.persistence(sel.m, sel.workers.persistence, pv["runs"]))
                c1, c2 = st.columns(2)
                with c1:
                    page.chart(pv["tail"], lambda: [{"run": k, "staleness": x, "count": c}
                                                     for k, v in pv["runs"].items() for x, c in enumerate(v["counts"])],
                               "staleness-tail", tr("The same slow spells, persistent (the chosen ρ) or redrawn every "
                                                    "mini-batch (ρ = 0): by theory the mean time per update and the "
                                                    "mean staleness m − 1 are the same; compare the tails to the "
                                                    "right of the dotted line."))
                with c2:
                    page.chart(pv["error"], pv["rows"], "error-persistence",
                               tr("Simulated error of async with and without persistence (95% bands)."))


def real_problem(spec: RealProblem, view: dict, replicas: int) -> None:
    """A data set's test accuracy against time, and its constants with their kinds."""
    facts = cached.problem_facts(spec)
    st.subheader(tr("Test accuracy"))
    page.chart(view["accuracy_figure"], view["rows"], "test-accuracy",
               tr("The accuracy on the {n} held-out rows, mean and 95% band over replicas; at the optimum of this "
                  "λ it is {best:.3f}.", n=facts["info"]["n_test"], best=facts["best_test_accuracy"]))
    st.subheader(tr("The problem's constants"))
    page.table(views.problem_table(facts, view["summary"]))
    st.caption(claims.real_problem(spec, facts, view["rows"], view["summary"], replicas, caps.ERROR_POINTS))


page.fragment(body, sel)
