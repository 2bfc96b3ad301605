"""The figure builders of distsgd.plots (and the trace page's) give the same figure whether
plotly checks every property as it is set (``VALIDATE``, on in the test suite) or not (the
dashboard's default, ≈ 5× cheaper): the unchecked path must not drop, rename or mangle anything
that the checked path would send to the browser."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import pytest

from distsgd import curves, make_scheme, parse_delay, plots
from distsgd.examples import example_times
from distsgd.montecarlo import simulate_timeline
from distsgd.traces import trace_from_times
from distsgd.ui import local_figures, trace_figures

EXP = parse_delay("exp(rate=1)")
SCHEMES = ("sync", "k-sync", "k-batch-sync", "async", "k-async", "k-batch-async", "local-sgd")


def _runtime_rows() -> list[dict[str, Any]]:
    return curves.runtime_vs_K(SCHEMES, 8, EXP, (1, 2, 4, 8), 2, 0.0, 2e6, 1)


def _m_rows() -> list[dict[str, Any]]:
    return curves.runtime_vs_m(("sync", "async", "local-sgd"), (2, 4, 8), EXP, 2, 2, 0.1, 2e6, 1)


def _error_rows() -> list[dict[str, Any]]:
    t = np.linspace(0, 10, 5)
    return [{"scheme": s, "time": x, "simulated_mean": 1 / (1 + x), "simulated_low": 0.9 / (1 + x),
             "simulated_high": 1.1 / (1 + x), "bound": 2 / (1 + x), "model": 1.05 / (1 + x)}
            for s in ("sync", "async") for x in t]


def _target_rows() -> list[dict[str, Any]]:
    return [{"scheme": "k-sync", "K": k, "x": k, "bound_time_to_target": 10.0 / k + k, "time_to_target": 8.0 / k + k,
             "time_to_target_low": 7.0 / k + k, "time_to_target_high": 9.0 / k + k} for k in (1, 2, 4, 8)]


def _trace() -> Any:
    return trace_from_times(example_times("persistent-slow")[:, :60], name="example")


CASES: dict[str, Callable[[], go.Figure]] = {
    "runtime": lambda: plots.runtime_figure(_runtime_rows(), "x_K", "K", "E[T] against K"),
    "speedup": lambda: local_figures.speedup_figure(_m_rows()),
    "error": lambda: plots.error_figure(_error_rows(), 0.2, {"sync": 5.0, "async": None}),
    "staleness": lambda: plots.staleness_tail_figure({"ρ = 0": [5, 3, 1], "ρ = 0.9": [4, 3, 2, 1]}, 4),
    "delay": lambda: plots.delay_figure(EXP, np.random.default_rng(1).exponential(size=500)),
    "order-statistic": lambda: plots.order_statistic_figure(
        np.random.default_rng(2).gamma(3, size=400), np.linspace(0, 8, 21),
        {"kind": "pdf", "x": np.linspace(0, 8, 50), "density": np.linspace(0, 1, 50)}, 3, 8, 2.7),
    "fanout": lambda: plots.fanout_figure([1, 10, 100], [1.0, 2.9, 5.2], [1.01, 2.8, 5.3], [0.9, 2.7, 5.1],
                                          [1.1, 2.9, 5.5], 1.0),
    "timeline": lambda: plots.timeline_figure(simulate_timeline(make_scheme("k-async", 6, K=2), EXP, 8, 3)),
    "target": lambda: plots.target_figure(_target_rows(), "K", 2, 1, 0.05, []),
    "comm": lambda: local_figures.comm_figure([2, 4, 8], [0.1, 0.2, 0.4], [0.1, 0.15, 0.18]),
    "heatmap": lambda: trace_figures.heatmap_figure(_trace()),
    "boxes": lambda: trace_figures.worker_box_figure(_trace()),
    "qq": lambda: trace_figures.qq_figure(_trace().pooled, []),
    "fit-histogram": lambda: trace_figures.fit_histogram_figure(_trace().pooled, []),
}


def _spec(make: Callable[[], go.Figure], validate: bool, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(plots, "VALIDATE", validate)
    return json.loads(pio.to_json(make(), validate=False))


@pytest.mark.parametrize("name", list(CASES))
def test_unchecked_figure_is_the_checked_one(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    checked = _spec(CASES[name], True, monkeypatch)
    unchecked = _spec(CASES[name], False, monkeypatch)
    assert checked["data"], name
    assert unchecked == checked


def test_checking_catches_a_misspelt_property(monkeypatch: pytest.MonkeyPatch) -> None:
    """Why the suite builds every figure checked: a typo in a builder fails there."""
    monkeypatch.setattr(plots, "VALIDATE", True)
    with pytest.raises(ValueError, match="colour"):
        plots._go(go.Scatter, x=[1], y=[1], colour="red")


def _ranged() -> go.Figure:
    """Arrays where plotly encodes none: under a skipped key (an axis range) and inside a list."""
    return plots._build({"xaxis": {"range": np.array([0.0, 2.0])}, "yaxis": {"tickvals": [np.arange(3)]}},
                        [go.Scatter(x=np.arange(3.0), y=np.array([1, 2, 3]), _validate=False)])


def _arrays() -> go.Figure:
    """Every kind of numpy array a trace may hold: small and large 64-bit integers (narrowed, or not),
    unsigned, float32, 2-D, empty, boolean, text."""
    return plots._build({}, [go.Scatter(
        x=np.arange(5), y=np.array([1, 2, 3, 4, 2**40]), ids=np.array(["a", "b", "c", "d", "e"]),
        customdata=np.arange(10.0).reshape(5, 2), text=np.array([], dtype=float), _validate=False,
        marker={"size": np.array([3, 4, 5, 6, 7], dtype=np.uint64), "opacity": np.ones(5, dtype=np.float32),
                "color": np.array([-40000, 0, 1, 2, 3]), "symbol": np.array([True, False, True, True, False])})])


@pytest.mark.parametrize("name", ["runtime", "error", "delay", "timeline", "heatmap", "order-statistic", "ranged",
                                  "arrays"])
def test_a_figure_is_sent_as_plotly_would_send_it(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """plots.Figure.to_dict (what st.plotly_chart sends, without plotly's deep copy) is plotly's own
    to_dict, and leaves the figure as it was: a second call, and plotly's after it, give the same."""
    monkeypatch.setattr(plots, "VALIDATE", False)
    fig = {"ranged": _ranged, "arrays": _arrays}.get(name, CASES.get(name))()
    assert isinstance(fig, plots.Figure)
    ours = pio.to_json(fig.to_dict(), validate=False)
    again = pio.to_json(fig.to_dict(), validate=False)
    theirs = pio.to_json(go.Figure.to_dict(fig), validate=False)
    assert ours == theirs == again
    assert any(isinstance(v, np.ndarray) for trace in fig._data for v in trace.values()), "no array to encode"
    assert '"bdata"' in ours
    assert json.loads(ours)["layout"]["template"]["layout"]["plot_bgcolor"] == "white"  # plotly_white's


@pytest.mark.parametrize("where", [
    (plots._hline, "add_hline", "y", 0.25, {"color": "black", "dash": "dashdot", "width": 1}),
    (plots._vline, "add_vline", "x", 3.0, {"color": "black", "dash": "dot"}),
])
def test_a_line_shape_is_the_one_plotly_adds(where: tuple, monkeypatch: pytest.MonkeyPatch) -> None:
    """The builders give their reference lines to the figure's constructor as layout shapes
    (``add_hline``/``add_vline`` on a built figure cost ≈ 5 ms each): the same shape plotly adds."""
    ours, method, axis, at, line = where
    theirs = go.Figure(go.Scatter(x=[1, 2], y=[1, 2]))
    getattr(theirs, method)(**{axis: at}, line=line)
    monkeypatch.setattr(plots, "VALIDATE", True)  # a misspelt key is refused
    built = plots._build({"shapes": [ours(at, **line)]}, [plots._go(go.Scatter, x=[1, 2], y=[1, 2])])
    assert built.layout.shapes[0].to_plotly_json() == theirs.layout.shapes[0].to_plotly_json()


@pytest.mark.parametrize("name", list(CASES))
def test_a_figure_draws_only_the_trace_types_its_template_styles(name: str) -> None:
    """The figures carry plotly_white cut to the defaults of plots.TRACE_TYPES: a builder that draws
    another type (a histogram, a violin) would be drawn without plotly_white's defaults for it."""
    fig = CASES[name]()
    assert {t.type for t in fig.data} <= set(plots.TRACE_TYPES), name
    template = fig.layout.template.to_plotly_json()
    white = pio.templates["plotly_white"].to_plotly_json()
    assert template["layout"] == white["layout"]
    assert template["data"] == {k: v for k, v in white["data"].items() if k in plots.TRACE_TYPES}


def test_every_builder_draws_only_the_template_s_trace_types() -> None:
    """The same for every builder, the cases above or not: the trace classes named in the package."""
    root = Path(plots.__file__).parent
    named = {m for p in root.rglob("*.py") for m in re.findall(r"\bgo\.([A-Z]\w*)", p.read_text(encoding="utf-8"))}
    assert named, "no builder found"
    assert {n.lower() for n in named - {"Figure"}} <= set(plots.TRACE_TYPES)


@pytest.mark.parametrize("name", list(CASES))
def test_a_translated_copy_is_the_figure_plotly_would_copy(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The dashboard translates a copy of a shared figure, built from its plain properties (plotly's
    own copy checks every property again): the same JSON as plotly's copy, and a copy indeed."""
    from distsgd.ui import i18n

    monkeypatch.setattr(plots, "VALIDATE", False)
    fig = CASES[name]()
    ours = i18n._copy(fig)
    assert ours is not fig and ours._data is not fig._data and ours._data[0] is not fig._data[0]
    assert json.loads(pio.to_json(ours, validate=False)) == json.loads(pio.to_json(type(fig)(fig), validate=False))
