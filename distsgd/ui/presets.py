"""The presets: named sets of control values (DESIGN §5.3), each a scenario worth a look
(the seed example, heavy tails, backup workers, a slow network, stragglers that stay or come and
go, adaptive schedules).  Names are English message ids (``N_``), shown through ``tr``; the values are control keys
and URL values (:mod:`distsgd.ui.controls`).  Applying one sets the session store
(:mod:`distsgd.ui.state`)."""

from __future__ import annotations

from typing import Any

from . import state
from .i18n import N_, tr

__all__ = ["PRESETS", "apply_preset"]

PRESETS: dict[str, dict[str, Any]] = {
    N_("seed example: exponential delays"): dict(
        delay="exp", lam=1.0, delta=0.0, m=20, K=10, H=4, schemes=["sync", "k-sync", "async", "k-async"],
        eta=0.05, L=2.0, mu=0.5, sigma2=1.0, horizon=60.0),
    N_("shifted exponential (Δ + Exp)"): dict(
        delay="shifted-exp", lam=1.0, delta=1.0, m=16, K=4, schemes=["sync", "k-sync", "async", "k-async"]),
    N_("heavy-tailed stragglers"): dict(
        delay="pareto", xm=1.0, alpha=1.5, delta=0.0, m=20, K=10,
        schemes=["sync", "k-sync", "async", "k-async", "k-batch-async"], axis="K", axis_scheme="k-sync"),
    N_("backup workers N + b"): dict(
        delay="lognormal", ln_mu=0.0, ln_sigma=1.0, delta=0.0, m=20, K=16, schemes=["sync", "k-sync"],
        tl_scheme="k-sync"),
    N_("local SGD with slow network"): dict(
        delay="shifted-exp", lam=2.0, delta=0.1, m=16, H=8, D=2.0, comm_source="network model",
        topology="parameter-server", params_m=25.0, gbps=1.0, latency_ms=0.5,
        schemes=["sync", "local-sgd"], tl_scheme="local-sgd"),
    N_("one slow machine"): dict(
        delay="shifted-exp", lam=1.0, delta=1.0, m=16, K=12, stragglers="static", slow=1, slowdown=4.0,
        schemes=["sync", "k-sync", "async", "k-async"], tl_scheme="sync"),
    N_("a straggler that comes and goes"): dict(
        delay="shifted-exp", lam=2.0, delta=0.5, m=8, K=4, stragglers="markov", slow_fraction=0.1,
        persistence=0.95, slowdown=8.0, schemes=["sync", "k-sync", "async"], tl_scheme="async", tl_iters=60,
        horizon=60.0),
    N_("backup workers vs a persistent straggler"): dict(
        delay="shifted-exp", lam=1.0, delta=1.0, m=18, K=16, stragglers="static", slow=2, slowdown=5.0,
        schemes=["sync", "k-sync"], tl_scheme="k-sync", rt_view="K"),
    N_("async wins early, loses late"): dict(
        delay="exp", lam=1.0, delta=0.0, m=16, K=4, schemes=["sync", "k-sync", "async"], eta=0.05,
        L=2.0, mu=0.5, sigma2=1.0, b=1, f0=1.0, dim=10, eps=0.01, horizon=60.0),
    # adaptive schedules (DESIGN §13): each compared with every fixed K (or H) on the trade-offs page
    N_("AdaSync on a heavy tail"): dict(
        delay="pareto", xm=1.0, alpha=1.5, delta=0.0, m=16, K=4, schemes=["sync", "k-sync"], problem="quadratic",
        eta=0.05, L=2.0, mu=0.5, sigma2=2.0, b=1, f0=1.0, dim=10, eps=0.01, horizon=100.0, axis="K",
        axis_scheme="k-sync", schedule="adasync", K0=1, period=10.0),
    N_("AdaComm with expensive communication"): dict(
        delay="shifted-exp", lam=2.0, delta=0.1, m=16, H=16, D=2.0, comm_source="slider", schemes=["sync", "local-sgd"],
        problem="quadratic", eta=0.05, L=2.0, mu=0.5, sigma2=1.0, b=1, f0=1.0, dim=10, eps=0.01, horizon=100.0,
        axis="H", schedule="adacomm", H0=32, period=10.0),
}


def apply_preset(name: str) -> None:
    """Set every control a preset names (a callback: runs before the widgets are drawn); a
    preset that names no stragglers has none, and one that names no schedule has none either."""
    for key, v in {"stragglers": "none", "schedule": "off", **PRESETS[name]}.items():
        state.set_value(key, v)
    state.notify(tr("preset applied: {name}", name=tr(name)), once=True)
