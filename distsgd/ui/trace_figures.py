"""Figures of a measured trace (the "Your cluster" page): who is slow, the fitted laws, and what
each scheme would have done on it (:mod:`distsgd.whatif`).  Built with :mod:`distsgd.plots`'s
theme and helpers; kept apart from it only for that module's length."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.colors import get_colorscale

from ..plots import _arr, _build, _go, _hist, _hline, _label_colors, _layout
from ..traces import Trace

__all__ = ["heatmap_figure", "worker_box_figure", "qq_figure", "fit_histogram_figure", "whatif_figure",
           "HEATMAP_MAX_STEPS", "BOX_MAX_WORKERS"]

#: columns of the heatmap (steps beyond are averaged in bins) and workers of the box plot
HEATMAP_MAX_STEPS, BOX_MAX_WORKERS = 400, 60


#: the heatmap's colours, spelt out: "RdBu_r" is a name plotly.py expands and plotly.js does not know
_RDBU_R = get_colorscale("RdBu_r")

def _ratio(trace: Trace) -> np.ndarray:
    """t[i, j] / median_i' t[i', j] over the complete steps (the slowdown's ratio)."""
    t = trace.times
    return t / np.median(t, axis=0, keepdims=True)


def heatmap_figure(trace: Trace) -> go.Figure:
    """Worker × step heatmap of each time divided by its step's median (log colour scale around 1;
    more than HEATMAP_MAX_STEPS steps are averaged in equal bins, and the title says so).  The x
    axis counts the complete steps in order (the file's labels are in the hover)."""
    r = _ratio(trace)
    S = r.shape[1]
    first = np.arange(S)
    note = ""
    if S > HEATMAP_MAX_STEPS:
        edges = np.linspace(0, S, HEATMAP_MAX_STEPS + 1).astype(int)
        r = np.add.reduceat(r, edges[:-1], axis=1) / np.diff(edges)
        first = edges[:-1]
        note = f" (mean over bins of about {S / HEATMAP_MAX_STEPS:.3g} steps)"
    labels = np.asarray(trace.complete_steps, dtype=object)[first]
    z = np.log2(np.clip(r, 1 / 16, 16))
    data: list[Any] = []
    layout = _layout(f"Each time ÷ its step's median{note}", "complete step, in order", "worker",
                  height=max(320, min(900, 16 * trace.m + 160)),
                  yaxis={"autorange": "reversed", "type": "category"})
    data.append(_go(go.Heatmap,
        z=z, x=first, y=[str(w) for w in trace.workers], zmid=0, zmin=-2, zmax=2, colorscale=_RDBU_R,
        customdata=np.broadcast_to(labels, r.shape), text=np.round(r, 3),
        hovertemplate="worker %{y}, step %{customdata}: %{text}× the median<extra></extra>",
        colorbar={"title": {"text": "× median"}, "tickvals": [-2, -1, 0, 1, 2], "ticktext": ["¼", "½", "1", "2", "4"]}))
    return _build(layout, data)


def worker_box_figure(trace: Trace, order: Sequence[str] | None = None) -> go.Figure:
    """Each worker's times divided by their step's median: box plots from quartiles computed here
    (at most BOX_MAX_WORKERS boxes; ``order`` says which first, e.g. the stragglers)."""
    r = _ratio(trace)
    idx = list(range(trace.m))
    if order is not None:
        pos = {w: k for k, w in enumerate(order)}
        idx.sort(key=lambda i: pos.get(trace.workers[i], len(pos) + i))
    idx = idx[:BOX_MAX_WORKERS]
    q = np.quantile(r[idx], [0.05, 0.25, 0.5, 0.75, 0.95], axis=1)
    cut = "" if len(idx) == trace.m else f" (the first {len(idx)} of {trace.m} workers)"
    data: list[Any] = []
    layout = _layout(f"Each worker's time ÷ its step's median{cut}", "worker", "× the step's median (whiskers: 5–95%)")
    data.append(_go(go.Box, x=[str(trace.workers[i]) for i in idx], lowerfence=q[0], q1=q[1], median=q[2], q3=q[3],
                         upperfence=q[4], name="workers", marker_color="#1f77b4", showlegend=False))
    layout["shapes"] = [_hline(1.2, color="#d62728", dash="dash", width=1)]
    layout["annotations"] = [dict(x=1, xref="paper", y=1.2, text="straggler threshold 1.2", showarrow=False,
                                  xanchor="right", yanchor="bottom", font={"color": "#d62728"})]
    return _build(layout, data)


def qq_figure(times: np.ndarray, fits: Sequence[Any], levels: int = 99) -> go.Figure:
    """Q–Q plot of the pooled times against each fitted law (``fits``: objects with ``family``,
    ``spec`` and ``delay()``): the fitted quantile against the measured one at ``levels`` probabilities."""
    p = (np.arange(1, levels + 1) - 0.5) / levels
    emp = np.quantile(times, p)
    data: list[Any] = []
    layout = _layout("Q–Q: fitted quantiles against measured ones", "measured quantile", "fitted quantile")
    colors = _label_colors([f.family for f in fits])
    for f in fits:
        data.append(_go(go.Scatter, x=emp, y=_arr(f.delay().ppf(p)), mode="markers", name=f"theory: {f.spec}",
                                 marker={"color": colors[f.family], "size": 6}))
    lo, hi = float(emp[0]), float(emp[-1])
    data.append(_go(go.Scatter, x=[lo, hi], y=[lo, hi], mode="lines", name="y = x",
                             line={"color": "black", "dash": "dot"}))
    return _build(layout, data)


def fit_histogram_figure(times: np.ndarray, fits: Sequence[Any], bins: int = 60) -> go.Figure:
    """Density histogram of the pooled times with the fitted densities over it."""
    lo, hi = (float(v) for v in np.quantile(times, [0.0, 0.995]))
    data: list[Any] = []
    layout = _layout("Measured times and the best fits", "time of one mini-batch", "density")
    data.append(_hist(times, lo, hi, "measured (histogram)", "#7f7f7f", bins))
    x = np.linspace(lo, hi, 400)
    colors = _label_colors([f.family for f in fits])
    for f in fits:
        data.append(_go(go.Scatter, x=x, y=_arr(f.delay().pdf(x)), mode="lines", name=f"theory: {f.spec}",
                                 line={"color": colors[f.family], "width": 2}))
    return _build(layout, data)


def whatif_figure(rows: Sequence[dict[str, Any]], readings: Sequence[str]) -> go.Figure:
    """E[T] per scheme under each reading of the trace: analytic as bars (where exact or numerical,
    hatched where a bound), Monte Carlo means with 95% error bars as markers on them."""
    data: list[Any] = []
    layout = _layout("What each scheme would have done on this trace", "scheme", "E[T] per iteration (time units)",
                  barmode="group", scattermode="group")
    colors = dict(zip(readings, ["#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"], strict=False))
    for reading in readings:
        rs = [r for r in rows if r["reading"] == reading]
        if not rs:
            continue
        x = [r["label"] if reading == "backup workers" else r["scheme"] for r in rs]
        y = _arr([r["analytic"] if r["kind"] in ("exact", "numerical", "upper_bound") else None for r in rs])
        pattern = ["/" if r["kind"] == "upper_bound" else "" for r in rs]
        data.append(_go(go.Bar, x=x, y=y, name=f"analytic: {reading}", offsetgroup=reading, legendgroup=reading,
                             marker={"color": colors.get(reading), "pattern": {"shape": pattern}},
                             hovertext=[f"{r['label']}: {r['kind']}" for r in rs]))
        mc = _arr([r.get("mc_mean") for r in rs])
        err = _arr([(r["mc_high"] - r["mc_mean"]) if r.get("mc_mean") is not None else None for r in rs])
        data.append(_go(go.Scatter, x=x, y=mc, mode="markers", name=f"Monte Carlo: {reading}", offsetgroup=reading,
                                 legendgroup=reading, showlegend=False, marker={"color": "black", "size": 6},
                                 error_y={"type": "data", "array": err, "visible": True}))
    return _build(layout, data)
