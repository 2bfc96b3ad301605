"""Plotly figures of the graph page (DESIGN §12): the graph itself, and E[T] against m
on each graph beside sync and async.  The conventions of :mod:`distsgd.plots`: theory solid where
exact, dashed where a bound; Monte Carlo as markers with 95% error bars."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from ..plots import _arr, _build, _color, _go, _layout, runtime_traces

__all__ = ["GRAPH_COLORS", "graph_positions", "graph_figure", "graph_runtime_figure"]

#: one colour per graph of the decentralised schemes (DESIGN §12)
GRAPH_COLORS = {
    "ring": "#17becf", "torus": "#2ca02c", "hypercube": "#9467bd", "exponential": "#8c564b",
    "random-regular(d=4)": "#e377c2", "complete": "#1f77b4", "star": "#ff7f0e",
}


def graph_positions(spec: str, m: int) -> np.ndarray:
    """(m, 2) positions to draw a graph: a torus a × b on its grid, a star's hub in the centre,
    every other graph on a circle in node order (a ring is a circle, a hypercube and the
    exponential graph show their chords)."""
    if spec.startswith("torus"):
        a = int(spec.split("a=")[1].split(",")[0]) if "a=" in spec else int(round(math.sqrt(m)))
        i = np.arange(m)
        return np.column_stack([i % max(a, 1), -(i // max(a, 1))]).astype(float)
    angle = 2 * np.pi * np.arange(m) / max(m, 1)
    pos = np.column_stack([np.cos(angle), np.sin(angle)])
    if spec.startswith("star") and m > 1:
        angle = 2 * np.pi * np.arange(m - 1) / (m - 1)
        pos = np.vstack([[0.0, 0.0], np.column_stack([np.cos(angle), np.sin(angle)])])
    return pos


def _edge_lines(pos: np.ndarray, e: np.ndarray, bend: bool, points: int = 12) -> tuple[np.ndarray, np.ndarray]:
    """Every edge as a line, separated by gaps (NaN); with ``bend`` an edge longer than one grid
    step (a torus' wrap-around) is drawn as an arc bulging out, so it does not hide its row."""
    a, b = pos[e[:, 0]], pos[e[:, 1]]
    u = np.linspace(0.0, 1.0, points)[None, :, None]
    mid, d = (a + b) / 2, b - a
    length = np.hypot(d[:, 0], d[:, 1])
    normal = np.column_stack([-d[:, 1], d[:, 0]]) / np.maximum(length, 1e-12)[:, None]
    lift = np.where(bend & (length > 1.5), 0.35, 0.0)[:, None] * normal
    ctrl = mid + lift * np.maximum(length, 1.0)[:, None] / 3
    curve = (1 - u) ** 2 * a[:, None] + 2 * (1 - u) * u * ctrl[:, None] + u**2 * b[:, None]  # (E, points, 2)
    gap = np.full((len(e), 1, 2), np.nan)
    line = np.concatenate([curve, gap], axis=1).reshape(-1, 2)
    return line[:, 0], line[:, 1]


def graph_figure(spec: str, m: int, edges: np.ndarray, slow: Sequence[int] = (), title: str = "") -> go.Figure:
    """The graph: every edge a line, every node a marker (the slow ones red and larger), hover
    naming the node and its degree."""
    pos = graph_positions(spec, m)
    e = np.asarray(edges, dtype=int).reshape(-1, 2)
    xs, ys = _edge_lines(pos, e, bend=spec.startswith("torus"))
    degree = np.bincount(e.ravel(), minlength=m)
    is_slow = np.zeros(m, dtype=bool)
    is_slow[[i for i in slow if 0 <= i < m]] = True
    data = [_go(go.Scatter, x=xs, y=ys, mode="lines", line=dict(color="#b0b0b0", width=1), hoverinfo="skip",
                name="edges", showlegend=False)]
    for flag, name, color, size in ((False, "node", "#17becf", 10), (True, "slow node", "#d62728", 14)):
        idx = np.flatnonzero(is_slow == flag)
        if idx.size:
            data.append(_go(go.Scatter, x=pos[idx, 0], y=pos[idx, 1], mode="markers", name=name,
                            marker=dict(color=color, size=size if m <= 64 else max(4, size // 2),
                                        line=dict(color="white", width=1)),
                            customdata=np.column_stack([idx, degree[idx]]),
                            hovertemplate="node %{customdata[0]}, degree %{customdata[1]}<extra></extra>"))
    hidden = dict(showgrid=False, zeroline=False, showticklabels=False, title=None)
    layout = _layout(title or None, height=420, xaxis=hidden, yaxis={**hidden, "scaleanchor": "x"})
    return _build(layout, data)


def graph_runtime_figure(rows: Sequence[dict[str, Any]], title: str, x_title: str = "nodes m (log scale)",
                         y_title: str = "E[T] per iteration (time units)") -> go.Figure:
    """E[T] against m: d-psgd on each graph (``row["graph"]``), beside sync and async
    (:func:`~distsgd.plots.runtime_traces`), and d-psgd's lower bound dotted."""
    data: list[Any] = []
    for key in dict.fromkeys(r.get("graph") or r["scheme"] for r in rows):
        rs = sorted((r for r in rows if (r.get("graph") or r["scheme"]) == key), key=lambda r: r["m"])
        graph = rs[0].get("graph")
        col = GRAPH_COLORS.get(key, "#333333") if graph else _color(key)
        who = f"d-psgd, {key}" if graph else key
        data += runtime_traces(rs, "m", who, col, 2.5 if graph else 3.5)
        low = _arr([r.get("lower") for r in rs])
        if graph and not np.isnan(low).all():
            name = f"lower bound: {who}"
            data.append(_go(go.Scatter, x=_arr([r["m"] for r in rs]), y=low, mode="lines", name=name,
                            connectgaps=False, line=dict(color=col, dash="dot", width=1.5),
                            hovertemplate=f"m=%{{x}}<br>E[T] ≥ %{{y:.4g}}<extra>{name}</extra>"))
    return _build(_layout(title, x_title, y_title, log_x=True), data)
