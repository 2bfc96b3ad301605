"""The dashboard derives its choices from the library's registries (issue 21): a delay family the
library has never shipped and a scheme it has never heard of, each declared as a new one would be
(one class and its registry entry), are choices of the sidebar and are drawn by a page; their
labels fall back to English until the catalogue has them, and the catalogue's gaps are listed.

The registries are module-level dicts (:data:`distsgd.delays.FAMILIES`, :data:`distsgd.schemes.SCHEMES`)
and AppTest runs the app's script in this very process, so :func:`registered` adds the toys to both
and restores them afterwards (also for whatever runs next in this process).
"""

from __future__ import annotations

import contextlib
import json
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pytest
from scipy import stats
from streamlit.testing.v1 import AppTest

from apptest_support import navigation_only, open_app
from distsgd import curves, delays
from distsgd.delays import Delay
from distsgd.estimate import Estimate
from distsgd.orderstats import order_statistic_mean, sample_order_statistic
from distsgd.params import Domain
from distsgd.schemes import SCHEMES, register, scheme_for
from distsgd.schemes.base import WithK
from distsgd.ui import controls, i18n, sidebar


@dataclass(frozen=True, kw_only=True)
class ToyGamma(Delay):
    """Gamma(k, θ): declared as a new family would be, with a label and nothing else for the UI
    (its controls get the default keys ``toygamma_shape`` and ``toygamma_scale``)."""

    shape: float
    scale: float
    name: ClassVar[str] = "toygamma"
    SCALING: ClassVar[dict[str, str]] = {"scale": "time"}
    PARAMS: ClassVar[tuple[Domain, ...]] = (Domain("shape", 0.1, 50.0, symbol="k", doc="shape"),
                                            Domain("scale", 0.01, 100.0, symbol="θ", doc="scale"))
    TITLES: ClassVar[dict[str, str]] = {"toygamma": "toy gamma (test)"}

    def _scipy(self) -> Any:
        return stats.gamma(self.shape, scale=self.scale)

    def _nlu(self) -> bool:
        return self.shape >= 1  # log-concave density for k ≥ 1: increasing failure rate

    def _label(self) -> str:
        return f"ToyGamma(k={self.shape:g}, θ={self.scale:g})"

    def _latex(self, v: str) -> str:
        return f"\\frac{{{v}^{{k-1}} e^{{-{v}/\\theta}}}}{{\\Gamma(k)\\theta^k}}"


@dataclass(frozen=True)
class ToyKSync(WithK):
    """K-sync under a name no dashboard code knows: the update takes the first K of m gradients
    (K ≤ m, which the scheme declares, so the charts clamp K by asking it)."""

    name: ClassVar[str] = "toy-k-sync"
    title: ClassVar[str] = "Toy K-sync SGD"
    process: ClassVar[str] = "All m start on w_j; the update uses the first K gradients."
    k_le_m: ClassVar[bool] = True

    def expected_runtime(self, delay: Delay, work: float) -> Estimate:
        return order_statistic_mean(delay, self.K, self.m)

    def iteration_times(self, delay: Delay, n: int, rng: np.random.Generator) -> np.ndarray:
        return sample_order_statistic(delay, self.K, self.m, rng, n)


#: the messages of the toy family (label, its parameters' default labels): not in any catalogue
TOY_MESSAGES = {"toy gamma (test)", "toygamma k", "toygamma θ"}


@contextlib.contextmanager
def registered() -> Iterator[None]:
    """ToyGamma in the delay registry and ToyKSync in the scheme registry while the block runs;
    both registries (and the dashboard's controls derived from them) as they were afterwards."""
    families, schemes = dict(delays.FAMILIES), dict(SCHEMES)
    delays.FAMILIES["toygamma"] = ToyGamma
    register(ToyKSync)
    try:
        yield
    finally:
        delays.FAMILIES.clear()
        delays.FAMILIES.update(families)
        SCHEMES.clear()
        SCHEMES.update(schemes)
        controls.refresh()


@pytest.fixture
def toys() -> Iterator[None]:
    with registered():
        yield


@pytest.fixture(autouse=True, scope="module")
def _navigation_only() -> Iterator[None]:
    with navigation_only():
        yield


def _clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def _trace_names(at: AppTest) -> list[str]:
    return [t.get("name", "") for c in at.get("plotly_chart") for t in json.loads(c.proto.spec)["data"]]


# -- the sidebar's choices ------------------------------------------------------------------------

def test_a_registered_family_and_scheme_are_the_sidebar_s_choices(toys: None) -> None:
    at = open_app(query={"budget": "fast"})
    _clean(at)
    delay = at.sidebar.selectbox(key="delay")
    assert delay.options[-1] == "toy gamma (test)", delay.options  # registry order: after the measured trace
    assert "toy-k-sync" in at.sidebar.multiselect(key="schemes").options
    assert at.sidebar.multiselect(key="schemes").options[-1] == "toy-k-sync"  # registry order
    for key in ("tl_scheme", "axis_scheme"):  # the timeline's and the trade-offs' scheme choices
        assert "toy-k-sync" in (controls.CONTROLS[key].options or ())


def test_a_page_draws_the_new_family_and_scheme(toys: None) -> None:
    """The Runtime page against m (K = 8 clamped to m at every point where m < 8: the toy scheme
    says K ≤ m) with the toy law: its parameter sliders in the sidebar, the law in the caption, the
    scheme's analytic and Monte Carlo traces in the chart, the values in the URL."""
    at = open_app(query={"delay": "toygamma", "toygamma_shape": "2", "schemes": ["sync", "toy-k-sync"],
                         "rt_view": "m", "K": "8", "budget": "fast"})
    _clean(at)
    assert at.sidebar.selectbox(key="delay").value == "toygamma"
    shape, scale = at.sidebar.slider(key="toygamma_shape"), at.sidebar.slider(key="toygamma_scale")
    assert (shape.label, shape.value, shape.min, shape.max) == ("toygamma k", 2.0, 0.1, 50.0)
    assert (scale.label, scale.value) == ("toygamma θ", 1.0)  # the domain's value nearest 1
    assert at.sidebar.slider(key="delta").label == "shift Δ"  # a family shows the shift Δ unless UNSHIFTED
    assert any("ToyGamma(k=2, θ=1)" in c.value for c in at.sidebar.caption), [c.value for c in at.sidebar.caption]
    names = _trace_names(at)
    assert any("toy-k-sync" in n and "analytic" in n for n in names), names
    assert any("toy-k-sync" in n and "Monte Carlo" in n for n in names), names
    assert (at.query_params["delay"], at.query_params["toygamma_shape"]) == ("toygamma", "2")
    at.sidebar.slider(key="toygamma_scale").set_value(2.5).run()  # the slider moves the law
    _clean(at)
    assert any("ToyGamma(k=2, θ=2.5)" in c.value for c in at.sidebar.caption)


def test_the_new_family_s_labels_fall_back_to_english(toys: None) -> None:
    at = open_app(query={"lang": "zh", "delay": "toygamma", "budget": "fast"})
    _clean(at)
    options = at.sidebar.selectbox(key="delay").options
    assert "toy gamma (test)" in options and "指数分布" in options  # English until translated; the others in Chinese
    assert at.sidebar.slider(key="toygamma_shape").label == "toygamma k"
    assert at.sidebar.slider(key="delta").label == i18n.catalogue("zh")["shift Δ"]


def test_the_registries_are_restored_afterwards() -> None:
    with registered():
        controls.refresh()
        assert "toygamma" in controls.FAMILIES and "toygamma_shape" in controls.CONTROLS
    assert "toygamma" not in delays.FAMILIES and "toy-k-sync" not in SCHEMES
    assert "toygamma" not in controls.FAMILIES and "toygamma_shape" not in controls.CONTROLS
    assert "toy-k-sync" not in (controls.CONTROLS["schemes"].options or ())
    assert "toygamma" not in sidebar.FAMILY_PARAMS  # the sidebar's views are the same dicts


# -- K asks the scheme ---------------------------------------------------------------------------

def test_k_is_clamped_to_m_because_the_scheme_says_so(toys: None) -> None:
    assert curves.build("toy-k-sync", 3, 8).K == 3  # type: ignore[attr-defined]
    assert scheme_for("toy-k-sync", 3, 8, 1).K == 3  # type: ignore[attr-defined]  # the what-if table's builder
    assert curves.build("k-batch-sync", 3, 8).K == 8  # type: ignore[attr-defined]  # the batch schemes take K > m


# -- the derived tables are the ones the dashboard always had (URL keys, order, labels) ---------------

def test_the_derived_choices_are_the_dashboard_s_historical_ones() -> None:
    assert sidebar.FAMILY_PARAMS == {
        "exp": ("lam",), "shifted-exp": ("lam", "delta"), "pareto": ("xm", "alpha", "delta"),
        "lognormal": ("ln_mu", "ln_sigma", "delta"), "normal": ("n_mean", "n_std", "delta"),
        "weibull": ("w_shape", "w_scale", "delta"), "uniform": ("u_low", "u_high", "delta"), "trace": ("delta",)}
    assert sidebar.FAMILY_LABELS == {
        "exp": "exponential", "shifted-exp": "shifted exponential Δ + Exp(λ)", "pareto": "Pareto (heavy tail)",
        "lognormal": "lognormal", "normal": "normal, truncated at 0", "weibull": "Weibull", "uniform": "uniform",
        "trace": "measured trace (upload)"}
    assert sidebar.STRAGGLER_PARAMS == {"none": (), "static": ("slow", "slowdown"),
                                        "markov": ("slow_fraction", "persistence", "slowdown"),
                                        "trace": ("trace_mode",)}
    assert controls.CONTROLS["stragglers"].options == ("none", "static", "markov", "trace")
    assert controls.CONTROLS["schemes"].options == ("sync", "k-sync", "k-batch-sync", "async", "k-async",
                                                    "k-batch-async", "local-sgd", "d-psgd", "ad-psgd")
    assert list(controls.CONTROLS)[:13] == ["delay", "lam", "delta", "xm", "alpha", "ln_mu", "ln_sigma", "n_mean",
                                            "n_std", "w_shape", "w_scale", "u_low", "u_high"]
    alpha = controls.CONTROLS["alpha"]
    assert (alpha.label, alpha.default, alpha.step, alpha.help) == (
        "Pareto tail α", 2.5, 0.05, "smaller is heavier; mean infinite for α ≤ 1")


# -- translations: what the catalogue lacks for the registered families ----------------------------

def untranslated(lang: str = "zh") -> dict[str, str]:
    """The registries' dashboard messages the catalogue of ``lang`` lacks → where each is declared
    (they are shown in English meanwhile)."""
    cat = i18n.catalogue(lang)
    return {m: where for m, where in controls.registry_messages().items() if m not in cat}


def _split(missing: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """(the library's own families' gaps, the others')."""
    ours = {m: w for m, w in missing.items() if w.startswith("distsgd.")}
    return ours, {m: w for m, w in missing.items() if m not in ours}


def test_the_built_in_families_are_translated_and_a_new_one_s_gaps_are_listed(toys: None) -> None:
    ours, others = _split(untranslated())
    assert not ours, "untranslated labels of the library's families (add them to sidebar.po):\n" + "\n".join(
        f"{w}: {m!r}" for m, w in ours.items())
    if others:  # listed, not failed: a new family shows these in English until the catalogue has them
        warnings.warn("shown in English until the zh catalogue has them:\n" + "\n".join(
            f"{w}: {m!r}" for m, w in sorted(others.items())), stacklevel=1)
    assert set(others) == TOY_MESSAGES
    assert all(w.startswith(f"{__name__}.ToyGamma.") for w in others.values()), others
