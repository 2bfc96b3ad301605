"""Plotly figure builders (usable from a notebook; no Streamlit).

Conventions, shared by every chart: one colour per scheme; theory traces are named with
``analytic``, ``bound`` or ``theory`` and simulation traces with ``Monte Carlo`` or
``simulated``; exact and numerical values are solid lines, bounds and approximations dashed.
"""

from __future__ import annotations

import base64
import math
import os
from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
from _plotly_utils.utils import is_homogeneous_array, to_typed_array_spec
from _plotly_utils.utils import plotlyjsShortTypes as _SHORT_TYPES

from .delays import Delay
from .estimate import VALUE_KINDS
from .montecarlo import Timeline
from .timeline_export import SLOW_MARK, timeline_bars

__all__ = ["SCHEME_COLORS", "OUTCOME_COLORS", "runtime_figure", "runtime_traces", "error_figure", "metric_figure",
           "METRIC_TITLES", "delay_figure", "order_statistic_figure", "fanout_figure", "timeline_figure",
           "target_figure"]

SCHEME_COLORS = {
    "sync": "#1f77b4", "k-sync": "#ff7f0e", "k-batch-sync": "#2ca02c", "async": "#d62728",
    "k-async": "#9467bd", "k-batch-async": "#8c564b", "local-sgd": "#e377c2",
    "d-psgd": "#17becf", "ad-psgd": "#bcbd22",
}
OUTCOME_COLORS = {
    "used": "#2ca02c", "stale": "#ff7f0e", "cancelled": "#e8898a", "waiting": "#c7c7c7",
    "communicating": "#1f77b4", "in flight": "#9edae5",
}
SOLID_KINDS = VALUE_KINDS
BOUND_KINDS = ("upper_bound", "lower_bound")
#: how an analytic value is drawn, by kind: (kinds, line dash, trace-name prefix)
_STYLES = ((SOLID_KINDS, "solid", "analytic"), (BOUND_KINDS, "dash", "bound"),
           (("approximation",), "dot", "analytic"))
KIND_WORDS = {"exact": "exact", "numerical": "numerical", "upper_bound": "upper bound",
              "lower_bound": "lower bound", "approximation": "approximation"}
#: the trace types the charts draw (tests/test_ui_plots.py checks every builder keeps to them)
TRACE_TYPES = ("scatter", "bar", "box", "heatmap")
_WHITE = pio.templates["plotly_white"].to_plotly_json()
#: plotly_white as JSON cut to its layout and TRACE_TYPES' defaults (all 24 types' were half of what
#: a figure deep-copies as it is built and walks as it is sent); given with the layout, copied once
_TEMPLATE = {"layout": _WHITE["layout"], "data": {k: v for k, v in _WHITE["data"].items() if k in TRACE_TYPES}}
#: the figures' fonts: Streamlit's and plotly_white's own first (Latin text looks as before, in the
#: dashboard and in a notebook), then CJK fonts for the Chinese titles, axis titles and legends the
#: dashboard translates them into (a character no earlier font has is drawn from the first that has it)
_FONT = ('"Source Sans", "Open Sans", verdana, arial, "Noto Sans CJK SC", "Noto Sans SC", "Source Han Sans SC", '
         '"Microsoft YaHei", "PingFang SC", sans-serif')
_LAYOUT = dict(margin=dict(l=60, r=20, t=50, b=50), legend=dict(orientation="h", yanchor="top", y=-0.18, x=0),
               height=460, font=dict(family=_FONT))
_EXTRA_COLORS = ("#17becf", "#bcbd22", "#7f7f7f", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#31a354")
#: decades only on log axes (plotly otherwise labels minor ticks with bare "2" and "5")
_LOG = dict(type="log", dtick=1, tickformat="~g")

#: Whether plotly checks every property as a figure is built (≈ 1.5 ms a trace, ≈ 10 ms a figure).
#: The figures are made by this module's code, not by users, so it is off, and on when
#: ``DISTSGD_VALIDATE_FIGURES=1``: the test suite sets it, so a misspelt or out-of-range property
#: still fails a test (``tests/test_ui_plots.py`` also checks that both ways give the same figure).
VALIDATE = os.environ.get("DISTSGD_VALIDATE_FIGURES", "") == "1"


class Figure(go.Figure):  # type: ignore[misc]  # plotly is untyped
    """A Figure whose ``to_dict`` (``st.plotly_chart`` sends it each rerun) is plotly's own without its
    deep copies (3–20 ms a page; ``tests/test_ui_plots.py`` compares)."""

    def to_dict(self) -> dict[str, Any]:
        res = {"data": _sendable(self._data), "layout": _sendable(self._layout)}
        frames = _sendable([frame._props for frame in self._frame_objs])
        return {**res, "frames": frames} if frames else res


_PLAIN, _SKIPPED = (str, int, float, bool, type(None)), frozenset(("geojson", "layer", "layers", "range"))
_PLAIN_TYPES = frozenset(_PLAIN)


def _sendable(obj: Any, encode: bool = True) -> Any:
    """``obj``'s containers copied, each array ``convert_to_base64`` would encode as a typed-array spec."""
    if isinstance(obj, (list, tuple)):
        if _PLAIN_TYPES.issuperset(map(type, obj)):  # a trace's values (numbers, text, None): one C-level copy
            return list(obj) if isinstance(obj, list) else obj
        items = [v if isinstance(v, _PLAIN) else _sendable(v, encode) for v in obj]
        return items if isinstance(obj, list) else tuple(items)
    if not isinstance(obj, dict):
        return obj
    out = {}
    for k, v in obj.items():
        here = encode and k not in _SKIPPED
        if isinstance(v, _PLAIN):
            out[k] = v
        elif isinstance(v, (dict, list, tuple)):  # never a homogeneous array: no need to ask plotly
            out[k] = _sendable(v, here)
        elif here and isinstance(v, np.ndarray):
            out[k] = _typed(v)
        else:
            out[k] = to_typed_array_spec(v) if here and is_homogeneous_array(v) else v
    return out


#: the narrower integer types plotly tries for int64 and for uint64, in order
_NARROWER = {"int64": (np.int8, np.int16, np.int32), "uint64": (np.uint8, np.uint16, np.uint32)}


def _typed(v: np.ndarray) -> Any:
    """plotly's ``to_typed_array_spec`` without its dataframe dispatch (≈ 0.2 ms an array): a numeric array
    as {dtype, bdata, shape if 2-D+}, 64-bit integers narrowed when they fit; anything else by plotly."""
    if v.dtype.kind not in "uif":
        return to_typed_array_spec(v)
    a = np.ascontiguousarray(v).copy()
    if a.size and str(a.dtype) in _NARROWER:
        a = next((a.astype(t) for t in _NARROWER[str(a.dtype)] if np.iinfo(t).min <= a.min() and a.max()
                  <= np.iinfo(t).max), a)
    short = _SHORT_TYPES.get(str(a.dtype)) if a.size else None
    if short is None:
        return a
    shape = {"shape": str(a.shape)[1:-1]} if a.ndim > 1 else {}
    return {"dtype": short, "bdata": base64.b64encode(a.data).decode("ascii"), **shape}


def _go(cls: Any, **props: Any) -> Any:
    """``cls(**props)`` (a plotly trace class) when :data:`VALIDATE` is on, else that trace as a plain
    dict, which the figure's constructor takes as it is (a trace object it deep-copies, arrays too)."""
    return cls(**props) if VALIDATE else {"type": cls._path_str, **props}


def _layout(title: str | None = None, x_title: str | None = None, y_title: str | None = None,
            log_x: bool = False, log_y: bool = False, **layout: Any) -> dict[str, Any]:
    """A figure's layout: ``_LAYOUT``, then ``layout``, the titles and the log axes."""
    lay: dict[str, Any] = {**_LAYOUT, **layout}
    if title is not None:
        lay["title"] = {"text": title}
    for axis, text, log in (("xaxis", x_title, log_x), ("yaxis", y_title, log_y)):
        spec = dict(lay.get(axis, {}))
        if text is not None:
            spec["title"] = {"text": text}
        if log:
            spec.update(_LOG)
        if spec:
            lay[axis] = spec
    return lay


def _build(layout: dict[str, Any], data: list[Any]) -> go.Figure:
    """The themed figure of ``data`` (traces made by :func:`_go`) and ``layout``, both given to
    the constructor: ``add_trace`` checks every trace again whatever :data:`VALIDATE` says, and
    ``update_layout`` after the traces costs ≈ 3 ms; this costs ≈ 0.2 ms a trace unchecked."""
    return Figure(data=data, layout={**layout, "template": _TEMPLATE}, _validate=VALIDATE)


def _hline(y: float, **line: Any) -> dict[str, Any]:
    """``fig.add_hline(y=y, line=line)``'s shape, for :func:`_build`'s layout (add_hline after: ≈ 5 ms)."""
    return {"type": "line", "xref": "x domain", "x0": 0, "x1": 1, "yref": "y", "y0": y, "y1": y, "line": line}


def _vline(x: float, **line: Any) -> dict[str, Any]:
    """``fig.add_vline(x=x, line=line)``'s shape (as :func:`_hline`)."""
    return {"type": "line", "xref": "x", "x0": x, "x1": x, "yref": "y domain", "y0": 0, "y1": 1, "line": line}


def _arr(values: Any) -> np.ndarray:
    """Floats as a numpy array (plotly serialises arrays far faster than lists); None → NaN."""
    return np.array([np.nan if v is None else v for v in values], dtype=float)


def _label_colors(labels: Sequence[str]) -> dict[str, str]:
    """One colour per label: the scheme's colour first, distinct colours for repeats."""
    out, used, extra = {}, set(), iter(_EXTRA_COLORS * 4)
    for lab in labels:
        c = _color(lab.split(" ")[0])
        if c in used:
            c = next(extra)
        used.add(c)
        out[lab] = c
    return out


def _color(scheme: str) -> str:
    return SCHEME_COLORS.get(scheme, "#333333")


def _rgba(hex_color: str, alpha: float) -> str:
    h = hex_color.lstrip("#")
    r, g, b = (int(h[i:i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha})"


def runtime_traces(rs: Sequence[dict[str, Any]], x: str, who: str, col: str, width: float) -> list[Any]:
    """One series of E[T] rows (sorted by ``x``): its analytic values (solid where exact/numerical,
    dashed and named "bound" where only a bound is known, dotted where an approximation) and its
    Monte Carlo means with 95% error bars (points without a simulation are gaps)."""
    data: list[Any] = []
    xs = _arr([r[x] for r in rs])
    for group, dash, prefix in _STYLES:
        ys = _arr([r["analytic"] if r["kind"] in group else None for r in rs])
        if np.isnan(ys).all():
            continue
        kinds = sorted({KIND_WORDS[r["kind"]] for r in rs if r["kind"] in group})
        name = f"{prefix}: {who} ({', '.join(kinds)})"
        data.append(_go(go.Scatter, x=xs, y=ys, mode="lines", name=name, connectgaps=False,
                        line=dict(color=col, dash=dash, width=width),
                        hovertemplate=f"{x}=%{{x}}<br>E[T]=%{{y:.4g}}<extra>{name}</extra>"))
    if any("mc_mean" in r for r in rs):
        mean = _arr([r.get("mc_mean") for r in rs])
        data.append(_go(go.Scatter,
            x=xs, y=mean, mode="markers", name=f"Monte Carlo: {who}",
            marker=dict(color=col, size=7, symbol="circle-open", line=dict(width=2)),
            error_y=dict(type="data", symmetric=False,
                         array=_arr([r.get("mc_high") for r in rs]) - mean,
                         arrayminus=mean - _arr([r.get("mc_low") for r in rs]), color=col),
            hovertemplate=f"{x}=%{{x}}<br>mean=%{{y:.4g}}<extra>Monte Carlo: {who}</extra>"))
    return data


def runtime_figure(rows: Sequence[dict[str, Any]], x: str, x_title: str, title: str,
                   y_title: str = "E[T] per iteration (time units)", log_x: bool = False) -> go.Figure:
    """Analytic E[T] and Monte Carlo means (:func:`runtime_traces`), one colour per scheme; the
    fresh schemes drawn wider, so a coinciding asynchronous line leaves them visible."""
    data: list[Any] = []
    for scheme in dict.fromkeys(r["scheme"] for r in rows):
        rs = sorted((r for r in rows if r["scheme"] == scheme), key=lambda r: r[x])
        wide = scheme in ("sync", "k-sync", "k-batch-sync")
        data += runtime_traces(rs, x, scheme, _color(scheme), 4.5 if wide else 2)
    return _build(_layout(title, x_title, y_title, log_x=log_x), data)


def error_figure(rows: Sequence[dict[str, Any]], eps: float | None = None,
                 targets: dict[str, float] | None = None, log_y: bool = True, bold: str | None = None) -> go.Figure:
    """Error against wall-clock time: simulated mean with its 95% band, the bound (dashed) and
    the model's exact expected error after n updates averaged over simulated update counts N(t)
    (dotted) per scheme; the target ε and the times it is reached; the label ``bold`` drawn thicker."""
    data: list[Any] = []
    layout = _layout("Error against wall-clock time", "wall-clock time (time units)", "f(w) − f*", log_y=log_y)
    labels = list(dict.fromkeys(r["scheme"] for r in rows))
    colors = _label_colors(labels)
    for label in labels:
        rs = [r for r in rows if r["scheme"] == label]
        col = colors[label]
        t = _arr([r["time"] for r in rs])
        data += _simulated(rs, "simulated", t, col, label, 4.0 if label == bold else 2.0)
        if any(r["bound"] is not None for r in rs):
            data.append(_go(go.Scatter, x=t, y=_arr([r["bound"] for r in rs]), mode="lines", name=f"bound: {label}",
                                     line=dict(color=col, dash="dash", width=2)))
        if any(r.get("model") is not None for r in rs):
            data.append(_go(go.Scatter, x=t, y=_arr([r["model"] for r in rs]), mode="lines",
                                     name=f"theory (exact model, averaged over simulated N(t)): {label}",
                                     line=dict(color=col, dash="dot", width=2.5)))
        if targets and targets.get(label) is not None and math.isfinite(targets[label]) and eps:
            data.append(_go(go.Scatter, x=[targets[label]], y=[eps], mode="markers",
                                     name=f"reaches ε: {label}", showlegend=False,
                                     marker=dict(color=col, size=12, symbol="diamond")))
    if eps:
        layout["shapes"] = [_hline(eps, color="black", dash="dashdot", width=1)]
        # placed by hand: plotly puts an hline's annotation at the raw value on a log axis
        layout["annotations"] = [dict(x=1, xref="paper", y=math.log10(eps) if log_y else eps, yref="y",
                                      text=f"target ε = {eps:g}", showarrow=False, xanchor="right", yanchor="bottom")]
    return _build(layout, data)


#: the title and y-axis title of each metric a problem reports
METRIC_TITLES = {"test_accuracy": ("Test accuracy against wall-clock time", "test accuracy"),
                 "test_loss": ("Test loss against wall-clock time", "test loss (mean log-loss)"),
                 "node_error": ("Mean node error against wall-clock time", "(1/m) Σᵢ f(xᵢ) − f*"),
                 "consensus": ("Consensus distance against wall-clock time", "(1/m) Σᵢ ‖xᵢ − x̄‖²")}


def metric_figure(rows: Sequence[dict[str, Any]], metric: str = "test_accuracy") -> go.Figure:
    """A problem's metric against wall-clock time (DESIGN §9): each scheme's simulated mean with
    its 95% band, from the rows' ``<metric>_mean/_low/_high``."""
    labels = list(dict.fromkeys(r["scheme"] for r in rows if r.get(f"{metric}_mean") is not None))
    colors, data = _label_colors(labels), []
    for label in labels:
        rs = [r for r in rows if r["scheme"] == label]
        data += _simulated(rs, metric, _arr([r["time"] for r in rs]), colors[label], label)
    return _build(_layout(METRIC_TITLES[metric][0], "wall-clock time (time units)", METRIC_TITLES[metric][1]), data)


def _simulated(rs: Sequence[dict[str, Any]], column: str, t: np.ndarray, col: str, label: str,
               width: float = 2.0) -> list[Any]:
    """A scheme's simulated mean (a step line) and its 95% band, from ``<column>_mean/_low/_high``
    (the error rows' ``simulated_*``)."""
    hi, lo = _arr([r[f"{column}_high"] for r in rs]), _arr([r[f"{column}_low"] for r in rs])
    return [_go(go.Scatter, x=np.concatenate([t, t[::-1]]), y=np.concatenate([hi, lo[::-1]]), fill="toself",
                fillcolor=_rgba(col, 0.15), line=dict(width=0), name=f"simulated 95% band: {label}",
                hoverinfo="skip", showlegend=False),
            _go(go.Scatter, x=t, y=_arr([r[f"{column}_mean"] for r in rs]), mode="lines",
                name=f"simulated mean: {label}", line=dict(color=col, width=width), line_shape="hv")]


def schedule_value_figure(rows: Sequence[dict[str, Any]], parameter: str, label: str,
                          best: float | None = None) -> go.Figure:
    """A schedule's K or H in force against time (mean over replicas, a step line, and its 95%
    band, from ``value_mean/_low/_high``) and the best fixed value (dotted) when given."""
    t = _arr([r["time"] for r in rows])
    data = _simulated(rows, "value", t, "#333333", label)
    if best is not None:
        data.append(_go(go.Scatter, x=[t[0], t[-1]], y=[best, best], mode="lines",
                        name=f"best fixed {parameter} = {best:g}", line=dict(color="#d62728", dash="dot", width=2)))
    return _build(_layout(f"{parameter} in force against wall-clock time", "wall-clock time (time units)",
                          f"{parameter} in force (mean over replicas, 95% band)", height=340), data)


def staleness_tail_figure(counts: dict[str, Sequence[int]], m: int) -> go.Figure:
    """P(staleness ≥ x) of the gradients used, one line per run (log scale: the far tail shows),
    with the mean m − 1 of async marked."""
    data: list[Any] = []
    layout = _layout("Staleness of the gradients used: P(staleness ≥ x)", "staleness x (updates)",
                  "share of gradients with staleness ≥ x (log scale)", log_y=True)
    colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"]
    for (label, c), col in zip(counts.items(), colors, strict=False):
        h = np.asarray(c, dtype=float)
        if h.sum() <= 0:
            continue
        tail = np.cumsum(h[::-1])[::-1] / h.sum()
        x = np.flatnonzero(tail > 0)
        data.append(_go(go.Scatter, x=x, y=tail[x], mode="lines", line_shape="hv", name=label, line=dict(color=col)))
    layout["shapes"] = [_vline(m - 1, color="black", dash="dot", width=1)]
    layout["annotations"] = [dict(x=m - 1, y=1, yref="paper", text="m − 1 (the mean)", showarrow=False,
                                  yanchor="bottom")]
    return _build(layout, data)


def _hist(samples: np.ndarray, lo: float, hi: float, name: str, color: str, bins: int = 60,
          axes: dict[str, str] | None = None) -> Any:
    """A density histogram computed here (bins from lo to hi; a few numbers go to the browser,
    not every sample).  Mass beyond hi is left out of the picture but not of the density."""
    counts, edges = np.histogram(samples, bins=np.linspace(lo, hi, bins + 1))
    dens = counts / (samples.size * np.diff(edges))
    return _go(go.Bar, x=(edges[:-1] + edges[1:]) / 2, y=dens, width=np.diff(edges), name=name,
               marker=dict(color=color, line=dict(width=0)), **(axes or {}))


def delay_figure(delay: Delay, samples: np.ndarray | None = None) -> go.Figure:
    """pdf (histogram of a sample for a measured trace) and cdf of X, side by side (the layout
    make_subplots(rows=1, cols=2) makes, written out: it costs ≈ 9 ms a figure)."""
    x_title = {"text": "delay x (time units)"}
    data: list[Any] = []
    layout = _layout(f"Delay distribution: {delay.label}", bargap=0, height=380,
                  xaxis={"anchor": "y", "domain": [0.0, 0.45], "title": x_title},
                  yaxis={"anchor": "x", "domain": [0.0, 1.0], "title": {"text": "density"}},
                  xaxis2={"anchor": "y2", "domain": [0.55, 1.0], "title": x_title},
                  yaxis2={"anchor": "x2", "domain": [0.0, 1.0], "title": {"text": "probability"}},
                  annotations=[{"font": {"size": 16}, "showarrow": False, "text": text, "x": x, "xanchor": "center",
                                "xref": "paper", "y": 1.0, "yanchor": "bottom", "yref": "paper"}
                               for text, x in (("density f(x)", 0.225), ("distribution F(x)", 0.775))])
    left, right = {"xaxis": "x", "yaxis": "y"}, {"xaxis": "x2", "yaxis": "y2"}
    atoms = delay.atoms  # a trace: no density, a step cdf
    discrete = atoms is not None
    lo = delay.ppf(0.0005) if not discrete else delay.support[0]
    hi = delay.ppf(0.995) if not discrete else delay.support[1]
    lo, hi = float(min(lo, delay.support[0])), float(hi)
    x = np.linspace(lo, hi, 600)
    if atoms is not None:
        data.append(_hist(atoms, lo, hi, "trace (histogram)", "#7f7f7f", axes=left))
    else:
        if samples is not None:
            data.append(_hist(samples, lo, hi, "Monte Carlo: sample", "rgba(31,119,180,0.3)", axes=left))
        with np.errstate(divide="ignore", invalid="ignore"):  # e.g. Weibull k < 1 is infinite at 0
            pdf = np.asarray(delay.pdf(x), dtype=float)
        pdf[~np.isfinite(pdf)] = np.nan
        data.append(_go(go.Scatter, x=x, y=pdf, name="theory: pdf", line=dict(color="#1f77b4"), **left))
    data.append(_go(go.Scatter, x=x, y=delay.cdf(x), name="theory: cdf", line=dict(color="#ff7f0e"),
                             line_shape="hv" if discrete else "linear", **right))
    return _build(layout, data)


def order_statistic_figure(samples: np.ndarray, edges: np.ndarray, theory: dict[str, Any], k: int, n: int,
                           mean: float | None = None) -> go.Figure:
    """Histogram of simulated X_{k:n} (bins ``edges``) with the theory overlaid: the density
    (``theory["kind"] == "pdf"``: ``x``, ``density``), or for a discrete law the exact
    probability of each bin over its width (``"bins"``: ``edges``, ``density``)."""
    sym = f"X<sub>{k}:{n}</sub>"
    data: list[Any] = []
    layout = _layout(f"The K-th fastest of m: {sym} (K = {k}, m = {n})", "time (time units)", "density",
                  bargap=0, height=380)
    data.append(_hist(samples, float(edges[0]), float(edges[-1]), f"Monte Carlo: {sym}",
                        "rgba(148,103,189,0.45)", len(edges) - 1))
    if theory["kind"] == "pdf":
        data.append(_go(go.Scatter, x=theory["x"], y=theory["density"], name=f"theory: density of {sym}",
                                 line=dict(color="#9467bd", width=2)))
    else:
        e = np.asarray(theory["edges"], float)
        d = np.asarray(theory["density"], float)
        data.append(_go(go.Scatter, x=e, y=np.append(d, d[-1]), line_shape="hv",
                                 name=f"theory: P({sym} in bin) ÷ bin width (exact)",
                                 line=dict(color="#9467bd", width=2)))
    if mean is not None and math.isfinite(mean):
        layout["shapes"] = [_vline(mean, color="black", dash="dash")]
        layout["annotations"] = [dict(x=mean, y=1, yref="paper", text=f" E = {mean:.4g}", showarrow=False,
                                      xanchor="left", yanchor="top")]
    return _build(layout, data)


def fanout_figure(ms: Sequence[int], analytic: Sequence[float | None], mc: Sequence[float],
                  mc_low: Sequence[float], mc_high: Sequence[float], mean_x: float) -> go.Figure:
    """How the slowest of m grows with m: E[X_{m:m}] (theory) and Monte Carlo, against E[X]."""
    data: list[Any] = []
    layout = _layout("Fan-out: the slowest of m workers", "workers m (log scale)", "E[X<sub>m:m</sub>] (time units)",
                  log_x=True, height=380)
    data.append(_go(go.Scatter, x=_arr(ms), y=_arr(analytic), mode="lines", name="analytic: E[max of m]",
                             line=dict(color="#d62728", width=2)))
    y = np.asarray(mc, dtype=float)
    data.append(_go(go.Scatter, x=_arr(ms), y=y, mode="markers", name="Monte Carlo: mean max of m",
                             marker=dict(color="#d62728", symbol="circle-open", size=8),
                             error_y=dict(type="data", symmetric=False, array=np.asarray(mc_high) - y,
                                          arrayminus=y - np.asarray(mc_low))))
    fig = _build(layout, data)
    if math.isfinite(mean_x):
        fig.add_hline(y=mean_x, line=dict(color="#1f77b4", dash="dash"), annotation_text=f"E[X] = {mean_x:.3g}")
    return fig


def _workers_label(src: Any) -> str:
    return f"delay {src.label}" if isinstance(src, Delay) else src.label


def timeline_figure(tl: Timeline, max_workers: int = 40) -> go.Figure:
    """Gantt chart: one row per worker, bars coloured by outcome, dotted lines at updates
    (bounded: see :func:`timeline_bars`)."""
    bars, shown = timeline_bars(tl, max_workers)
    # the update lines as one list of shapes (add_vline per line costs ~15 ms each)
    ts = [float(t) for t in tl.update_times[:shown]]
    n = min(tl.scheme.m, max_workers)
    cut = "" if shown == len(tl.update_times) else f" — first {shown} of {len(tl.update_times)} updates (bar limit)"
    data: list[Any] = []
    layout = _layout(
        f"Timeline: {tl.scheme.label}, {_workers_label(tl.delay)}{cut}", "wall-clock time (time units)", "",
        height=max(300, 28 * n + 160), barmode="overlay",
        yaxis={"autorange": "reversed", "categoryorder": "array",
               "categoryarray": [f"worker {w + 1}" for w in range(n)]},
        shapes=[dict(type="line", x0=t, x1=t, y0=0, y1=1, yref="paper",
                     line=dict(color="black", width=1, dash="dot")) for t in ts],
        annotations=[dict(x=t, y=1, yref="paper", text=f"u{i + 1}", showarrow=False, yanchor="bottom")
                     for i, t in enumerate(ts)] if shown <= 20 else [])
    for outcome, col in OUTCOME_COLORS.items():
        for name in (outcome, outcome + SLOW_MARK):
            sel = bars["outcome"] == name
            if not sel.any():
                continue
            start, end = bars["start"][sel], bars["end"][sel]
            text = [f"staleness {s}" if outcome == "stale" else "" for s in bars["staleness"][sel]]
            slow = name != outcome  # hatched: the mini-batch ran slow (a slow worker, state or time)
            marker: dict[str, Any] = dict(color=col, line=dict(color="white", width=0.5))
            if slow:
                marker["pattern"] = dict(shape="/", fgcolor="black", fgopacity=0.55, solidity=0.35)
            data.append(_go(go.Bar,
                # base as a list, as plotly's check makes it (no typed array for this attribute)
                y=[f"worker {w + 1}" for w in bars["worker"][sel]], x=end - start, base=start.tolist(),
                orientation="h", name=name, legendgroup=outcome, marker=marker,
                customdata=np.stack([start, end], axis=1), hovertext=text,
                hovertemplate="%{y}<br>%{customdata[0]:.3g} → %{customdata[1]:.3g}<br>%{hovertext}"
                              f"<extra>{name}</extra>"))
    return _build(layout, data)


def target_figure(rows: Sequence[dict[str, Any]], x_title: str, best_bound: int | None,
                  best_sim: int | None, eps: float, refs: Sequence[dict[str, Any]] = ()) -> go.Figure:
    """Time to reach ε against the swept parameter (log time axis), the best choice marked, and
    reference schemes (e.g. sync, async) as horizontal lines."""
    never = [r["x"] for r in rows
             if r["bound_time_to_target"] is not None and math.isinf(r["bound_time_to_target"])]
    sub = f" — bound never gets there at {x_title} = {', '.join(map(str, never[:8]))}" if never else ""
    data: list[Any] = []
    layout = _layout(f"Time to reach ε = {eps:g}{sub}", x_title, "wall-clock time to ε (time units, log scale)",
                  log_y=True)
    xs = _arr([r["x"] for r in rows])

    def finite(v: Any) -> float | None:
        return v if v is not None and math.isfinite(v) and v > 0 else None

    data.append(_go(go.Scatter, x=xs, y=_arr([finite(r["bound_time_to_target"]) for r in rows]),
                    mode="lines+markers", name="bound: time to ε", line=dict(color="#1f77b4", dash="dash")))
    if any("time_to_target" in r for r in rows):
        y = _arr([finite(r.get("time_to_target")) for r in rows])
        hi = _arr([finite(r.get("time_to_target_high")) for r in rows])
        lo = _arr([finite(r.get("time_to_target_low")) for r in rows])
        data.append(_go(go.Scatter, x=xs, y=y, mode="lines+markers", name="simulated: time to ε (95% band)",
                                 line=dict(color="#d62728"),
                                 error_y=dict(type="data", symmetric=False, array=np.nan_to_num(hi - y),
                                              arrayminus=np.nan_to_num(y - lo))))
    for idx, name, col, key in ((best_bound, "best (bound)", "#1f77b4", "bound_time_to_target"),
                                (best_sim, "best (simulated)", "#d62728", "time_to_target")):
        if idx is not None:
            data.append(_go(go.Scatter, x=[xs[idx]], y=[rows[idx][key]], mode="markers", name=name,
                                     marker=dict(symbol="star", size=18, color=col)))
    for r in refs:
        v = finite(r.get("time_to_target")) or finite(r.get("bound_time_to_target"))
        if v is not None:
            src = "simulated" if finite(r.get("time_to_target")) else "bound"
            data.append(_go(go.Scatter, x=[xs.min(), xs.max()], y=[v, v], mode="lines",
                                     name=f"{src}: {r['label']} (reference)",
                                     line=dict(color=_color(r["scheme"]), dash="dot", width=2)))
    return _build(layout, data)
