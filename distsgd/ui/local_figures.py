"""Plotly figures of the local-SGD page: the speed-up of m workers over one, and the time of one
round of communication.  The conventions of :mod:`distsgd.plots`: theory solid where exact, dashed
where a bound; Monte Carlo as markers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from ..plots import _arr, _build, _color, _go, _layout

__all__ = ["speedup_figure", "comm_figure"]


def speedup_figure(rows: Sequence[dict[str, Any]]) -> go.Figure:
    """Throughput of m workers over one (samples per unit time), per scheme: from the analytic
    E[T] where it is exact or numerical (solid), a lower bound where E[T] is only bounded above
    (dashed), and from the Monte Carlo mean (markers)."""
    data: list[Any] = []
    layout = _layout("Speed-up over one worker", "workers m (log scale)", "speed-up (throughput ÷ one worker's)",
                  log_x=True, log_y=True)
    ms = sorted({r["m"] for r in rows})
    data.append(_go(go.Scatter, x=_arr(ms), y=_arr(ms), mode="lines", name="ideal (m×)",
                             line=dict(color="#999", dash="dot", width=4)))
    for scheme in dict.fromkeys(r["scheme"] for r in rows):
        rs = sorted((r for r in rows if r["scheme"] == scheme), key=lambda r: r["m"])
        x = _arr([r["m"] for r in rs])
        for key, name, dash in (("speedup_analytic", f"analytic: {scheme}", "solid"),
                                ("speedup_lower_bound", f"bound: {scheme} (lower bound)", "dash")):
            y = _arr([r.get(key) for r in rs])
            if not np.isnan(y).all():
                data.append(_go(go.Scatter, x=x, y=y, mode="lines", name=name, connectgaps=False,
                                         line=dict(color=_color(scheme), dash=dash)))
        y = _arr([r.get("speedup_mc") for r in rs])
        if not np.isnan(y).all():
            data.append(_go(go.Scatter, x=x, y=y, mode="markers", name=f"Monte Carlo: {scheme}",
                                     marker=dict(color=_color(scheme), symbol="circle-open", size=8)))
    return _build(layout, data)


def comm_figure(ms: Sequence[int], ps: Sequence[float], ring: Sequence[float]) -> go.Figure:
    """The time of one round against m: through a parameter server and by ring all-reduce (theory)."""
    data: list[Any] = []
    layout = _layout("Communication time per round", "workers m (log scale)", "time per round (s)", log_x=True,
                  height=360)
    data.append(_go(go.Scatter, x=list(ms), y=list(ps), mode="lines+markers", name="theory: parameter server"))
    data.append(_go(go.Scatter, x=list(ms), y=list(ring), mode="lines+markers", name="theory: ring all-reduce"))
    return _build(layout, data)

