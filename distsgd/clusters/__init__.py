"""Clusters: who is slow, and for how long (DESIGN §7).

>>> from distsgd import make_cluster, parse_delay
>>> c = make_cluster(m=8, delay=parse_delay("exp(rate=1)"), slow=2, slowdown=3)
>>> c.as_dict()
{'kind': 'static', 'delay': 'exp(rate=1)', 'slow': 2, 'slowdown': 3.0}
>>> make_cluster(workers="6*exp(rate=1) + 2*exp(rate=0.5)").m
8
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..delays import Delay, check_delay, parse_delay
from ..params import ParameterError
from ..traces import Trace, load_trace, trace_from_times
from .base import PERSISTENCE, SLOW, SLOW_FRACTION, SLOWDOWN, Cluster, Group, M
from .kinds import IID, Groups, Markov, Static
from .trace import TRACE_MODES, TraceCluster

__all__ = ["Cluster", "Group", "IID", "Static", "Groups", "Markov", "TraceCluster", "Stragglers", "make_cluster",
           "parse_workers", "at_m", "as_source",
           "as_cluster", "M", "SLOW", "SLOWDOWN", "SLOW_FRACTION", "PERSISTENCE", "KINDS", "TRACE_MODES"]

KINDS = ("iid", "static", "groups", "markov", "trace")


def parse_workers(text: str) -> Groups:
    """``"N1*SPEC1 + N2*SPEC2 + …"`` → :class:`Groups` (a ``+`` inside a spec's parentheses is
    not a separator); a ParameterError names ``workers``."""
    if not isinstance(text, str) or not text.strip():
        raise ParameterError("workers", "expected_groups")
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += (ch == "(") - (ch == ")")
        if ch == "+" and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    groups = []
    for i, part in enumerate(parts):
        count, star, spec = part.strip().partition("*")
        if not star or not count.strip().isdigit() or not spec.strip():
            raise ParameterError("workers", "group_not_spec", n=i + 1, group=part.strip())
        try:
            delay = parse_delay(spec.strip())
        except ParameterError as exc:
            raise ParameterError("workers", "in_group", n=i + 1, error=exc) from None
        groups.append(Group(M.check(int(count), "workers"), delay))
    return Groups(tuple(groups))


def make_cluster(*, m: int | None = None, delay: Delay | str | None = None, slow: int | None = None,
                 slowdown: float | None = None, slow_fraction: float | None = None,
                 persistence: float | None = None, workers: str | Groups | None = None,
                 trace: Any = None, trace_mode: str | None = None, trace_columns: Any = None) -> Cluster:
    """The cluster the arguments describe (DESIGN §7), as the CLI's flags do:

    * ``m, delay`` — i.i.d.;  ``+ slow=b, slowdown=s`` — static stragglers;
    * ``+ slow_fraction=π, persistence=ρ, slowdown=s`` — Markov slowdowns (ρ defaults to 0:
      every mini-batch slow or not independently);
    * ``workers="N1*SPEC1 + …"`` instead of ``m, delay`` — groups;
    * ``trace=`` a file (path, bytes or an upload), a loaded :class:`~distsgd.traces.Trace` or an
      (m, S) array of times, with ``trace_mode`` replay (default), per-worker or pooled and
      ``trace_columns`` (worker=COL,step=COL,duration=COL) — instead of ``delay``; m is the
      trace's (``m`` may be given and must match; it is needed for a file of times only).

    A combination that makes no sense names the parameter in a ParameterError.
    """
    if trace is not None:
        return _trace(trace, trace_mode, trace_columns, m, delay=delay, slow=slow, slowdown=slowdown,
                      slow_fraction=slow_fraction, persistence=persistence, workers=workers)
    for name, v in (("trace_mode", trace_mode), ("trace_columns", trace_columns)):
        if v is not None:
            raise ParameterError(name, "needs_trace")
    if isinstance(delay, str):
        delay = parse_delay(delay)
    if workers is not None:
        return _groups(workers, m, delay=delay, slow=slow, slowdown=slowdown, slow_fraction=slow_fraction,
                       persistence=persistence)
    return _one_law(m, delay, slow, slowdown, slow_fraction, persistence)


def _one_law(m: int | None, delay: Delay | None, slow: int | None, slowdown: float | None,
             slow_fraction: float | None, persistence: float | None) -> Cluster:
    """i.i.d., static stragglers or Markov slowdowns: m workers of one law."""
    if delay is None:
        raise ParameterError("delay", "give_delay")
    check_delay(delay)
    if m is None:
        raise ParameterError("m", "give_m")
    if slow is not None and slow_fraction is not None:
        raise ParameterError("slow_fraction", "slow_or_fraction")
    if (slow is not None or slow_fraction is not None) and slowdown is None:
        raise ParameterError("slowdown", "give_slowdown")
    if slow is not None:
        assert slowdown is not None
        return Static(delay, m, slow, slowdown)
    if slow_fraction is not None:
        assert slowdown is not None
        return Markov(delay, m, slow_fraction, 0.0 if persistence is None else persistence, slowdown)
    if persistence is not None:
        raise ParameterError("persistence", "persistence_needs_fraction")
    if slowdown is not None:
        raise ParameterError("slowdown", "slowdown_needs_slow")
    return IID(delay, m)


def _trace(trace: Any, mode: str | None, columns: Any, m: int | None, **others: Any) -> TraceCluster:
    for name, v in others.items():
        if v is not None:
            raise ParameterError(name, "not_with_trace")
    if isinstance(trace, Trace):
        if columns is not None:
            raise ParameterError("trace_columns", "trace_loaded")
        t = trace
    elif isinstance(trace, np.ndarray):
        t = trace_from_times(trace)
    else:
        t = load_trace(trace, columns)
    if mode is None:
        mode = "pooled" if t.layout == "column" else "replay"
    return TraceCluster(t, mode, m)


def _groups(workers: str | Groups, m: int | None, **others: Any) -> Groups:
    for name, v in others.items():
        if v is not None:
            raise ParameterError(name, "not_with_workers")
    g = workers if isinstance(workers, Groups) else parse_workers(workers)
    if m is not None and M.check(m, "m") != g.m:
        raise ParameterError("m", "groups_m", groups=g.m, m=m)
    return g


def as_cluster(delay_or_cluster: Any, m: int) -> Cluster:
    """A Cluster for the API's ``delay`` argument, a delay or a cluster: a Delay is i.i.d. over
    m workers; a cluster must have m workers (ParameterError naming ``m`` otherwise); anything
    else names ``delay``."""
    if isinstance(delay_or_cluster, Delay):
        return IID(delay_or_cluster, m)
    if not isinstance(delay_or_cluster, Cluster):
        raise ParameterError("delay", "expected_source_law", type=type(delay_or_cluster).__name__)
    c = delay_or_cluster
    if c.m != m:
        raise ParameterError("m", "cluster_m", m=m, cluster=c.m)
    return c


def as_source(delay_or_cluster: Any, m: int) -> Delay | Cluster:
    """What m workers draw from, for every entry point: a Delay (checked) as it is; a cluster of
    m workers (:func:`as_cluster`'s checks), or its one law when every mini-batch of every worker
    is i.i.d. (b = 0, s = 1, π = 0, one group, a pooled trace): the i.i.d. engines and formulas
    then give the very same numbers."""
    if isinstance(delay_or_cluster, Delay):
        check_delay(delay_or_cluster)
        return delay_or_cluster
    c = as_cluster(delay_or_cluster, m)
    one = c.iid_delay
    return c if one is None else one


STRAGGLER_KINDS = ("none", "static", "markov", "trace")


@dataclass(frozen=True, eq=False)
class Stragglers:
    """Who is slow, for any number of workers m: the dashboard's "Stragglers" section as one
    object (sweeps over m, K and H build the cluster at each point's m with :meth:`at`).

    ``none``: i.i.d. ``delay``; ``static``: the first min(b, m) workers ``slowdown`` times slower;
    ``markov``: random slowdowns (π, ρ, s); ``trace``: a loaded trace in ``trace_mode``, whose m
    is fixed (any other m is refused, naming ``m``).  Equal recipes have equal keys (caches)."""

    delay: Delay
    kind: str = "none"
    slow: int = 0
    slowdown: float = 1.0
    slow_fraction: float = 0.0
    persistence: float = 0.0
    trace: Any = None
    trace_mode: str = "replay"

    def __post_init__(self) -> None:
        if self.kind not in STRAGGLER_KINDS:
            raise ParameterError("stragglers", "one_of_bare", choices=", ".join(STRAGGLER_KINDS), value=self.kind)
        check_delay(self.delay)
        if self.kind == "trace" and self.trace is None:
            raise ParameterError("trace", "give_trace")
        self.at(self.m or 1)  # every parameter checked once, here

    @property
    def m(self) -> int | None:
        """The m a trace fixes (None for the other kinds)."""
        return self.trace.m if self.kind == "trace" and self.trace.layout != "column" else None

    def at(self, m: int) -> Delay | Cluster:
        """What m workers draw from: the delay itself when they are i.i.d., else the cluster."""
        if self.kind == "none":
            return self.delay
        if self.kind == "static":
            c: Cluster = Static(self.delay, m, min(self.slow, m), self.slowdown)
        elif self.kind == "markov":
            c = Markov(self.delay, m, self.slow_fraction, self.persistence, self.slowdown)
        else:
            c = make_cluster(trace=self.trace, trace_mode=self.trace_mode, m=m)
        return as_source(c, m)

    @property
    def key(self) -> str:
        what = {"none": (), "static": (self.slow, self.slowdown),
                "markov": (self.slow_fraction, self.persistence, self.slowdown),
                "trace": (getattr(self.trace, "digest", ""), self.trace_mode)}[self.kind]
        return f"{self.delay.key}|{self.kind}|{what}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stragglers) and other.key == self.key

    def __hash__(self) -> int:
        return hash(self.key)

    @property
    def label(self) -> str:
        if self.kind == "none":
            return f"i.i.d. {self.delay.label}"
        if self.kind == "static":
            return f"{self.slow} slow worker{'s' if self.slow != 1 else ''} × {self.slowdown:g}, {self.delay.label}"
        if self.kind == "markov":
            return (f"slow spells: π = {self.slow_fraction:g}, ρ = {self.persistence:g}, s = {self.slowdown:g}, "
                    f"{self.delay.label}")
        return f"trace {self.trace.name} ({self.trace_mode})"


def at_m(workers: Delay | Cluster | Stragglers, m: int) -> Delay | Cluster:
    """What m workers draw from, for the sweeps' ``delay`` argument: a Delay or a Cluster as it
    is (a cluster must have m workers), a :class:`Stragglers` recipe at m."""
    return workers.at(m) if isinstance(workers, Stragglers) else workers
