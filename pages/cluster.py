"""Your cluster: a measured trace — who is slow and since when, which law fits, and what each
scheme would have done on it."""

import streamlit as st

from distsgd.ui import cached, cluster, page, sidebar, views
from distsgd.ui import rerun_caps as caps
from distsgd.ui.i18n import tr

sel = sidebar.current()
page.header(
    tr("Your cluster"),
    tr("A trace of per-worker step times, measured on a cluster (or one of the bundled examples): each time "
       "against its step's median, which workers straggle and since when, which law fits the times, and what "
       "each scheme would have done on this cluster — replayed, with each worker's own law, with one i.i.d. law "
       "fitted to all the times (the textbook model), without the stragglers, or with them as backup workers."),
    [views.tex_words(tr("slowdown")) + r"_i=\operatorname{median}_j \frac{t_{ij}}{\operatorname{median}_{i'} t_{i'j}},"
     r"\qquad " + views.tex_words(tr("straggler:")) + r"\ " + views.tex_words(tr("slowdown")) + r"_i \ge \theta"],
)


def body(sel: sidebar.Selection) -> None:
    """Everything below the header (a fragment: its controls rerun only this)."""
    trace = cluster.choose_trace()
    if trace is None:
        st.info(tr("Upload a trace (long: worker, step, duration; wide: one column per worker) or pick an example."))
        return
    with page.guard():
        st.caption(cluster.describe(trace))
        threshold = sidebar.number("threshold", slider=False)
        view = cached.trace_view(trace, float(threshold))
        st.button(tr("Use this cluster on every page"), on_click=cluster.use_cluster, args=(trace,), type="primary")
        page.chart(view["heatmap"], lambda: [{"worker": w, "step": s, "time": float(x)}
                                             for w, row in zip(trace.workers, trace.times, strict=True)
                                             for s, x in zip(trace.complete_steps, row, strict=True)],
                   "trace-heatmap", tr("Red rows are slow workers; a row that turns red partway is a straggler "
                                       "that emerged. A step slow for everyone does not show: each time is divided "
                                       "by its step's median."))
        page.chart(view["boxes"], view["summary"], "trace-workers",
                   tr("Workers whose box sits above the dashed line at {threshold} are stragglers.",
                      threshold=f"{threshold:g}"))
        st.subheader(tr("Stragglers"))
        slow = [r for r in view["summary"] if r["straggler"]]
        if not slow:
            st.markdown(tr("No worker's slowdown reaches {threshold}, over the whole trace or over a window of 10% "
                           "of its steps by more than chance.", threshold=f"{threshold:g}"))
        else:
            st.markdown(views.stragglers_sentence(slow, float(threshold)))
        st.caption(tr("Persistent: the median of the worker's ratios reaches θ. Emerging: over some window of 10% "
                      "of the steps its median ratio reaches θ, with more slow steps than chance gives a worker like "
                      "the others (binomial test; at most a 1% chance of a false alarm in a trace of alike workers)."))
        page.table([{tr("worker"): r["worker"], tr("slowdown"): r["slowdown"], tr("mean"): r["mean"],
                     tr("median"): r["median"],
                     tr("since step"): r["from_step"] if r["from_step"] is not None else tr("the start (persistent)")}
                    for r in slow] or view["summary"][:0])
        st.subheader(tr("Which law fits the times"))
        fits = cached.fits_view(trace)
        page.table([{tr("family"): r["family"], tr("spec"): r["spec"], tr("aic"): r["aic"], tr("ks"): r["ks"],
                     tr("fixed"): views.phrases(r["fixed_parts"]) or r["fixed"]} for r in fits["rows"]])
        c1, c2 = st.columns(2)
        with c1:
            page.chart(fits["hist"], fits["rows"], "trace-fits", tr("The histogram of the times (up to their 99.5% "
                                                                     "quantile) with the three best fits by AIC."))
        with c2:
            page.chart(fits["qq"], fits["rows"], "trace-qq", tr("On the dotted line the fitted law's quantiles are "
                                                                 "the measured ones; points above it at the right "
                                                                 "end mean a fitted tail heavier than the data's, "
                                                                 "below it a lighter one."))
        st.subheader(tr("What each scheme would have done"))
        box = sidebar.settings(tr("The problem for the time to ε (shared with the Error pages)"), "cluster")
        problem = sidebar.problem_controls(where=box)
        c1, c2 = box.columns(2)
        eps = sidebar.number("eps", c1, slider=False)
        gamma = sidebar.number("gamma", c2, help=tr("staleness factor of the bound for the asynchronous schemes"))
        wi = cached.whatif_view(trace, sel.schemes, sel.K, sel.H, tuple(view["stragglers"]), fits["best"],
                                sel.budget * caps.WHATIF_BUDGET_FACTOR, sel.seed, problem, float(eps), float(gamma))
        page.chart(wi["figure"], wi["rows"], "what-if", wi["notice"])
        page.table(wi["table"])
        st.caption(tr("Time to ε = {eps}: the error bound's iterations J(ε) times E[T] per update — the same J "
                      "for every reading of one scheme, so the readings differ as their E[T] do (and, asynchronous, "
                      "by the measured fraction of fresh gradients).", eps=f"{eps:g}"))
        for s in wi["skipped"]:
            st.caption(tr("{reading}: {why}.", reading=views.word(s["reading"]), why=views.word(s["why"])))
        if trace.m <= caps.TIMELINE_WORKERS_MAX:
            st.download_button(tr("Download {n} updates of sync replaying the trace (Perfetto / chrome://tracing JSON)",
                                  n=caps.PERFETTO_UPDATES),
                               lambda: cached.replay_timeline_json(trace, caps.PERFETTO_UPDATES, sel.seed),
                               file_name="distsgd-replay-timeline.json", mime="application/json", on_click="ignore")


page.fragment(body, sel)
