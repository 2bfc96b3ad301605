"""The "Sweep results" page's parts (issue 13, DESIGN §8): open a results file of
``python -m distsgd sweep`` (or the bundled example) and chart any result against any swept
parameter, one line per value of another, the remaining swept parameters fixed at chosen values.

A results file is Parquet with :data:`distsgd.sweeps.SCHEMA`'s columns (``point``, the
parameters, the results, ``error``); a file without ``point`` or without any known result is
refused with the reason.  Points whose ``error`` is set are left out of the chart and listed.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

import numpy as np
import pandas as pd  # type: ignore[import-untyped]
import plotly.graph_objects as go
import streamlit as st

from ..memo import Memo
from ..params import ParameterError
from ..plots import _build, _go, _layout
from ..sweeps import PARAMETERS, RESULTS, output
from .i18n import N_, language, tr
from .rerun_caps import FIGURE_CACHE_ENTRIES, SWEEP_MAX_BYTES, SWEEP_MAX_ROWS

__all__ = ["Frame", "read_results", "example_results", "swept", "results", "figure", "label", "option", "show", "order",
           "COLUMN_LABELS"]

#: what each column is, for the boxes and the axes (the column name is shown beside it)
COLUMN_LABELS = {
    "scheme": N_("scheme"), "m": N_("workers m"), "K": N_("wait for K"), "H": N_("local steps H"),
    "comm_delay": N_("averaging time D"), "delay": N_("delay law"), "slow": N_("slow workers b"),
    "slowdown": N_("slowdown s"), "slow_fraction": N_("slow fraction π"), "persistence": N_("persistence ρ"),
    "workers": N_("worker groups"), "trace": N_("trace file"), "trace_mode": N_("trace used as"),
    "trace_columns": N_("trace columns"), "iterations": N_("Monte Carlo iterations"), "replicate": N_("replicate"),
    "analytic_value": N_("analytic E[T]"), "mc_mean": N_("Monte Carlo E[T]"), "mc_iterations": N_("iterations run"),
    "staleness_mean": N_("mean staleness"), "fresh_fraction": N_("fresh fraction"),
    "time_to_target": N_("time to ε (simulated)"), "bound_time_to_target": N_("time to ε (bound)"),
    "final_error": N_("error at the horizon"), "sgd_staleness_mean": N_("mean staleness (SGD)"),
    "sgd_fresh_fraction": N_("fresh fraction (SGD)"), "gamma": N_("γ used"), "p0": N_("p₀ used"),
    "mc_ci_low": N_("Monte Carlo 95% CI, low"), "mc_ci_high": N_("Monte Carlo 95% CI, high"),
    "time_to_target_low": N_("time to ε, band low"), "time_to_target_high": N_("time to ε, band high"),
    "problem": N_("problem"), "lam": N_("L2 regularisation λ"), "linearised_floor": N_("linearised floor"),
    "final_test_accuracy": N_("test accuracy at the horizon"), "final_test_loss": N_("test loss at the horizon"),
    "time_to_accuracy": N_("time to the test accuracy (simulated)"),
    "time_to_accuracy_low": N_("time to the test accuracy, band low"),
    "time_to_accuracy_high": N_("time to the test accuracy, band high"),
}
#: a result's 95% band, drawn as error bars
BANDS = {"mc_mean": ("mc_ci_low", "mc_ci_high"), "time_to_target": ("time_to_target_low", "time_to_target_high"),
         "time_to_accuracy": ("time_to_accuracy_low", "time_to_accuracy_high")}


def code(name: str) -> str:
    """A column name of the file as a Markdown code span: shown as it is, never a link or markup
    (a backtick in the name, which would end the span, is shown as ʹ)."""
    return "`" + str(name).replace("`", "\u02b9") + "`"


def what(column: str) -> str:
    """What a column is, in the current language (its name if the page does not know it)."""
    return tr(COLUMN_LABELS[column]) if column in COLUMN_LABELS else column


def label(column: str) -> str:
    """A column as the boxes show it: what it is, then its name in the file (as code)."""
    return f"{what(column)} (`{column}`)" if column in COLUMN_LABELS else f"`{column}`"


def option(column: str | None) -> str:
    """A column as a box's option shows it (plain text: options render no markdown)."""
    if column is None:
        return tr("— (one line)")
    return f"{what(column)} ({column})" if column in COLUMN_LABELS else column


def read_results(data: bytes, name: str) -> pd.DataFrame:
    """A results file's rows, checked: at most SWEEP_MAX_BYTES, then read by the library
    (:func:`distsgd.sweeps.output.read_results`: Parquet, a ``point`` and a result column of
    DESIGN §8, at most SWEEP_MAX_ROWS rows and limits.TABLE_MAX_BYTES decoded), sorted by point."""
    if len(data) > SWEEP_MAX_BYTES:
        raise ParameterError("results", "results_too_big", file=name, mib=len(data) / 2**20,
                             cap_mib=SWEEP_MAX_BYTES / 2**20)
    table = output.read_results(data, name, max_rows=SWEEP_MAX_ROWS)
    return table.to_pandas().sort_values("point", kind="stable").reset_index(drop=True)


class Frame:
    """A results file's rows and what the page asks of them: the varied parameters, the results,
    the points with an error, each fixed parameter's values and the chart for each choice —
    the answers kept (at most FIGURE_CACHE_ENTRIES), as the bundled example's frame is shared by
    every session and its filtering cost more than the rest of the page's rerun together."""

    def __init__(self, df: pd.DataFrame) -> None:
        self.df = df
        self.varied, self.outputs = swept(df), results(df)
        has_error = "error" in df.columns
        self.failed = df[df["error"].notna()] if has_error else df.iloc[:0]
        self.ok = df[df["error"].isna()] if has_error else df
        self._memo: Memo[tuple[Any, ...], Any] = Memo(FIGURE_CACHE_ENTRIES)

    def _rows(self, fixed: tuple[tuple[str, Any], ...]) -> pd.DataFrame:
        """The points without an error at the fixed values (a point without the parameter, K of
        sync, stays: it does not depend on it)."""
        rows = self.ok
        for v, chosen in fixed:
            rows = rows[(rows[v] == chosen) | rows[v].isna()]
        return rows

    def values(self, x: str, v: str, fixed: tuple[tuple[str, Any], ...]) -> list[Any]:
        """The values of ``v`` among the points that have ``x`` (K's chart offers the schemes
        that take K), at the ``fixed`` values chosen before it."""
        def make() -> list[Any]:
            rows = self._rows(fixed)
            return sorted(rows.loc[rows[x].notna(), v].dropna().unique().tolist(), key=order)
        return self._memo.cached(("values", x, v, fixed), make)

    def chart(self, x: str, y: str, group: str | None, fixed: tuple[tuple[str, Any], ...],
              log_y: bool) -> tuple[go.Figure, list[dict[str, Any]]]:
        """:func:`figure` of the points at the ``fixed`` values (its titles in the reader's
        language) and those points' rows; one shared figure per choice and language."""
        def make() -> tuple[go.Figure, list[dict[str, Any]]]:
            rows = self._rows(fixed)
            return figure(rows, x, y, group, log_y), rows.to_dict("records")
        return self._memo.cached(("chart", x, y, group, fixed, log_y, language()), make)


@st.cache_resource(max_entries=1)
def example_results() -> Frame:
    """The bundled example: distsgd/data/sweeps/example.parquet (made by examples/sweep-example.toml).
    One frame shared by every session, never changed (the page selects from it; a copy per rerun cost
    more than the chart)."""
    data = resources.files("distsgd").joinpath("data/sweeps/example.parquet").read_bytes()
    return Frame(read_results(data, "example.parquet"))


def swept(df: pd.DataFrame) -> list[str]:
    """The parameters that take more than one value in the file (the ones a chart can vary)."""
    return [c for c in PARAMETERS if c in df.columns and df[c].dropna().nunique() > 1]


def results(df: pd.DataFrame) -> list[str]:
    """The numeric result columns holding at least one value (the band columns are drawn, not chosen)."""
    bands = {b for pair in BANDS.values() for b in pair}
    return [c for c, t in RESULTS.items() if c in df.columns and t != "string" and c not in bands
            and c != "mc_iterations" and df[c].notna().any()]


def show(value: Any) -> str:
    """A parameter's value as a person writes it (4, not 4.0)."""
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def order(value: Any) -> tuple[int, float, str]:
    """Numbers by value before text by name."""
    return (0, float(value), "") if isinstance(value, (int, float)) else (1, 0.0, str(value))


def _sort_key(values: pd.Series) -> Any:
    return pd.to_numeric(values, errors="coerce") if pd.to_numeric(values, errors="coerce").notna().all() else values


def figure(df: pd.DataFrame, x: str, y: str, group: str | None, log_y: bool = False) -> go.Figure:
    """``y`` against ``x``, one line per value of ``group`` (or one line), with the 95% band of
    ``y`` as error bars where the file has it; rows without a value of ``y`` are skipped."""
    data: list[Any] = []
    keys = [None] if group is None else sorted(df[group].dropna().unique(), key=str)
    for key in keys:
        part = df if key is None else df[df[group] == key]
        part = part[part[y].notna() & part[x].notna()]
        if part.empty:
            continue
        part = part.sort_values(x, key=_sort_key)
        err = None
        if y in BANDS and all(b in part.columns for b in BANDS[y]):
            lo, hi = (part[b].to_numpy(dtype=float) for b in BANDS[y])
            vals = part[y].to_numpy(dtype=float)
            err = {"type": "data", "symmetric": False, "array": np.nan_to_num(hi - vals),
                   "arrayminus": np.nan_to_num(vals - lo), "visible": True}
        english = y if group is None else f"{group} = {key}"  # the language-free name (DESIGN §10)
        shown = what(y) if group is None else f"{what(group)} = {show(key)}"
        data.append(_go(go.Scatter, x=(part[x].astype(str) if part[x].dtype == object else part[x]).to_numpy(),
                        y=part[y].to_numpy(dtype=float), mode="lines+markers", name=shown, error_y=err,
                        meta={"name": english}))
    return _build(_layout(tr("{y} against {x}", y=what(y), x=what(x)), what(x), what(y), log_y=log_y), data)
