"""Every text a figure of :mod:`distsgd.plots` or :mod:`distsgd.ui.trace_figures` can show — a
title, an axis or colour-bar title, a trace (legend) name, an annotation — marked for the
catalogue (``locales/*/LC_MESSAGES/figures.po``).

The figures are built in English by the library, which knows no languages;
:func:`distsgd.ui.i18n.figure` translates a finished figure at display, matching each text
against the catalogue exactly or as a template whose ``{fields}`` capture the numbers, scheme
labels (``k-sync (m=16, K=4)``) and law labels (``Weibull(k=1.5, s=1)``) the figure put in it;
a field's value is translated in turn, so the words that appear as field values (the kind of an
analytic value, a what-if reading, a timeline outcome) are listed too.  The page passes
:data:`FIGURE_TEXT` to the translation (``i18n.figure(fig, FIGURE_TEXT)``: only these are tried
as templates on a chart, and nothing is registered anywhere); a change of wording in the figure
builders must be made here as well.

A template's fields match as little text as they can, so where a value may itself hold the
separator that follows it (a scheme label's ``", "``, a law label's ``", "``), the template
spells out the parentheses around it (``{name} ({params}), …``) to split at the right place.
Texts without words (``f(w) − f*``, ``y = x``, ``E[X] = 1.67``, ``K``) are the same in every
language and are not listed.
"""

from __future__ import annotations

from .i18n import N_

__all__ = ["FIGURE_TEXT"]

FIGURE_TEXT = (
    # -- prefixes of trace names (DESIGN §5: theory "analytic"/"bound"/"theory", simulation
    #    "Monte Carlo"/"simulated"); the value is a scheme name or label, or a what-if reading
    N_("analytic: {scheme}"),
    N_("analytic: {scheme} ({kinds})"),
    N_("bound: {scheme} (upper bound)"),
    N_("bound: {scheme} (lower bound)"),
    N_("bound: {scheme} (lower bound, upper bound)"),
    N_("Monte Carlo: {scheme}"),
    N_("theory: {law}"),
    # the kind of an analytic value (plots.KIND_WORDS, joined by ", " in a runtime trace's name)
    N_("exact"), N_("numerical"), N_("exact, numerical"), N_("approximation"),
    N_("upper bound"), N_("lower bound"),
    # -- runtime (plots.runtime_figure; titles and axes given by the pages and distsgd.ui.cached)
    N_("E[T] per iteration (time units)"),
    N_("E[T] against K (m = {m})"),
    N_("wait-for count K"),
    N_("E[T] against m (K = {K}, clamped to m)"),
    N_("workers m (log scale)"),
    N_("Runtime per local step (m = {m}, D = {D})"),
    N_("E[T] per local step (time units)"),
    N_("local steps H"),
    # -- error against time (plots.error_figure)
    N_("Error against wall-clock time"),
    N_("wall-clock time (time units)"),
    N_("simulated 95% band: {label}"),
    N_("simulated mean: {label}"),
    N_("bound: {label}"),
    N_("theory (exact model, averaged over simulated N(t)): {label}"),
    N_("reaches ε: {label}"),
    N_("target ε = {eps}"),
    # -- a schedule's value in force (plots.schedule_value_figure; the trace names as above)
    N_("{parameter} in force against wall-clock time"),
    N_("{parameter} in force (mean over replicas, 95% band)"),
    N_("best fixed {parameter} = {value}"),
    # -- a problem's metric against time (plots.metric_figure)
    N_("Test accuracy against wall-clock time"),
    N_("test accuracy"),
    N_("Test loss against wall-clock time"),
    N_("test loss (mean log-loss)"),
    N_("Mean node error against wall-clock time"),
    N_("Consensus distance against wall-clock time"),
    # -- the graph page (distsgd.ui.graph_figures): "d-psgd, ring" is the scheme field of the prefixes above
    N_("lower bound: {scheme}"),
    N_("E[T] per iteration against m on each graph"),
    N_("nodes m (log scale)"),
    N_("node"), N_("slow node"),
    # -- staleness tail (plots.staleness_tail_figure)
    N_("Staleness of the gradients used: P(staleness ≥ x)"),
    N_("staleness x (updates)"),
    N_("share of gradients with staleness ≥ x (log scale)"),
    N_("m − 1 (the mean)"),
    # -- a delay law (plots.delay_figure, order_statistic_figure, fanout_figure)
    N_("Delay distribution: {law}"),
    N_("delay x (time units)"),
    N_("density"),
    N_("probability"),
    N_("density f(x)"),
    N_("distribution F(x)"),
    N_("trace (histogram)"),
    N_("Monte Carlo: sample"),
    N_("theory: pdf"),
    N_("theory: cdf"),
    N_("trace {name} (n={n})"),
    N_("The K-th fastest of m: {symbol} (K = {K}, m = {m})"),
    N_("time (time units)"),
    N_("theory: density of {symbol}"),
    N_("theory: P({symbol} in bin) ÷ bin width (exact)"),
    N_("Fan-out: the slowest of m workers"),
    N_("E[X<sub>m:m</sub>] (time units)"),
    N_("analytic: E[max of m]"),
    N_("Monte Carlo: mean max of m"),
    # -- timeline (plots.timeline_figure): "Timeline: <scheme label>, <workers>[ — first …]"
    N_("Timeline: {name} ({params}), {workers}"),
    N_("Timeline: {name} ({params}), {workers} — first {shown} of {total} updates (bar limit)"),
    N_("delay {law}"),
    # the workers' label of a cluster (distsgd.clusters): b slow workers, slow spells, a trace
    N_("{workers} × {family}({params}), {slow} of them {slowdown}× slower"),
    N_("{workers} × {law}, slow {slowdown}× with π = {pi}, ρ = {rho}"),
    N_("{m} workers, replayed {name}"),
    N_("{m} workers, per-worker laws of {name}"),
    N_("{m} workers, pooled times of {name}"),
    # a bar's outcome (plots.OUTCOME_COLORS), " · slow" for a mini-batch that ran slow
    N_("used"), N_("stale"), N_("cancelled"), N_("waiting"), N_("communicating"), N_("in flight"),
    N_("{outcome} · slow"),
    # -- time to ε (plots.target_figure)
    N_("Time to reach ε = {eps}"),
    N_("Time to reach ε = {eps} — bound never gets there at {x} = {values}"),
    N_("wall-clock time to ε (time units, log scale)"),
    N_("bound: time to ε"),
    N_("simulated: time to ε (95% band)"),
    N_("best (bound)"),
    N_("best (simulated)"),
    N_("simulated: {label} (reference)"),
    N_("bound: {label} (reference)"),
    # -- speed-up and communication (ui.local_figures.speedup_figure, comm_figure)
    N_("Speed-up over one worker"),
    N_("speed-up (throughput ÷ one worker's)"),
    N_("ideal (m×)"),
    N_("Communication time per round"),
    N_("time per round (s)"),
    N_("theory: parameter server"),
    N_("theory: ring all-reduce"),
    # -- a measured trace (distsgd.ui.trace_figures)
    N_("Each time ÷ its step's median"),
    N_("Each time ÷ its step's median (mean over bins of about {steps} steps)"),
    N_("complete step, in order"),
    N_("worker"),
    N_("× median"),
    # category labels and bar texts of the timeline (distsgd.plots.timeline_figure)
    N_("worker {n}"),
    N_("staleness {s}"),
    N_("Each worker's time ÷ its step's median"),
    N_("Each worker's time ÷ its step's median (the first {shown} of {m} workers)"),
    N_("× the step's median (whiskers: 5–95%)"),
    N_("workers"),
    N_("straggler threshold {threshold}"),
    N_("Q–Q: fitted quantiles against measured ones"),
    N_("measured quantile"),
    N_("fitted quantile"),
    N_("Measured times and the best fits"),
    N_("time of one mini-batch"),
    N_("measured (histogram)"),
    N_("What each scheme would have done on this trace"),
    N_("scheme"),
    # the readings of a trace (distsgd.whatif.READINGS), after "analytic: " / "Monte Carlo: "
    N_("replay"), N_("per-worker laws"), N_("i.i.d. fit"), N_("stragglers dropped"), N_("backup workers"),
)
