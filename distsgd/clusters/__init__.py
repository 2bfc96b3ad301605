"""Clusters: who is slow, and for how long (DESIGN §7).

>>> from distsgd import make_cluster, parse_delay
>>> c = make_cluster(m=8, delay=parse_delay("exp(rate=1)"), slow=2, slowdown=3)
>>> c.as_dict()
{'kind': 'static', 'delay': 'exp(rate=1)', 'slow': 2, 'slowdown': 3.0}
>>> make_cluster(workers="6*exp(rate=1) + 2*exp(rate=0.5)").m
8
"""

from __future__ import annotations

from typing import Any

from ..delays import Delay, check_delay, parse_delay
from ..params import ParameterError
from .base import PERSISTENCE, SLOW, SLOW_FRACTION, SLOWDOWN, Cluster, Group, M
from .kinds import IID, Groups, Markov, Static

__all__ = ["Cluster", "Group", "IID", "Static", "Groups", "Markov", "make_cluster", "parse_workers",
           "as_cluster", "M", "SLOW", "SLOWDOWN", "SLOW_FRACTION", "PERSISTENCE", "KINDS"]

KINDS = ("iid", "static", "groups", "markov")


def parse_workers(text: str) -> Groups:
    """``"N1*SPEC1 + N2*SPEC2 + …"`` → :class:`Groups` (a ``+`` inside a spec's parentheses is
    not a separator); a ParameterError names ``workers``."""
    if not isinstance(text, str) or not text.strip():
        raise ParameterError("workers", "expected groups like '6*exp(rate=1) + 2*exp(rate=0.5)'")
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
            raise ParameterError("workers", f"group #{i + 1} {part.strip()!r} is not N*SPEC (e.g. 4*exp(rate=1))")
        try:
            delay = parse_delay(spec.strip())
        except ParameterError as exc:
            raise ParameterError("workers", f"group #{i + 1}: {exc}") from None
        groups.append(Group(M.check(int(count), "workers"), delay))
    return Groups(tuple(groups))


def make_cluster(*, m: int | None = None, delay: Delay | str | None = None, slow: int | None = None,
                 slowdown: float | None = None, slow_fraction: float | None = None,
                 persistence: float | None = None, workers: str | Groups | None = None) -> Cluster:
    """The cluster the arguments describe (DESIGN §7), as the CLI's flags do:

    * ``m, delay`` — i.i.d.;  ``+ slow=b, slowdown=s`` — static stragglers;
    * ``+ slow_fraction=π, persistence=ρ, slowdown=s`` — Markov slowdowns (ρ defaults to 0:
      every mini-batch slow or not independently);
    * ``workers="N1*SPEC1 + …"`` instead of ``m, delay`` — groups.

    A combination that makes no sense names the parameter in a ParameterError.
    """
    if isinstance(delay, str):
        delay = parse_delay(delay)
    if workers is not None:
        return _groups(workers, m, delay=delay, slow=slow, slowdown=slowdown, slow_fraction=slow_fraction,
                       persistence=persistence)
    if delay is None:
        raise ParameterError("delay", "give a delay law (or workers=…)")
    check_delay(delay)
    if m is None:
        raise ParameterError("m", "give the number of workers")
    if slow is not None and slow_fraction is not None:
        raise ParameterError("slow_fraction",
                             "either slow workers (slow) or random slowdowns (slow_fraction), not both")
    if (slow is not None or slow_fraction is not None) and slowdown is None:
        raise ParameterError("slowdown", "give how many times longer a slow mini-batch takes (s ≥ 1)")
    if slow is not None:
        assert slowdown is not None
        return Static(delay, m, slow, slowdown)
    if slow_fraction is not None:
        assert slowdown is not None
        return Markov(delay, m, slow_fraction, 0.0 if persistence is None else persistence, slowdown)
    if persistence is not None:
        raise ParameterError("persistence", "needs slow_fraction (random slowdowns)")
    if slowdown is not None:
        raise ParameterError("slowdown", "needs slow (slow workers) or slow_fraction (random slowdowns)")
    return IID(delay, m)


def _groups(workers: str | Groups, m: int | None, **others: Any) -> Groups:
    for name, v in others.items():
        if v is not None:
            raise ParameterError(name, "cannot be combined with workers (each group gives its own law)")
    g = workers if isinstance(workers, Groups) else parse_workers(workers)
    if m is not None and M.check(m, "m") != g.m:
        raise ParameterError("m", f"the groups have {g.m} workers, not {m}")
    return g


def as_cluster(delay_or_cluster: Any, m: int) -> Cluster:
    """A Cluster for the API's ``delay`` argument, a delay or a cluster: a Delay is i.i.d. over
    m workers; a cluster must have m workers (ParameterError naming ``m`` otherwise); anything
    else names ``delay``."""
    if isinstance(delay_or_cluster, Delay):
        return IID(delay_or_cluster, m)
    if not isinstance(delay_or_cluster, Cluster):
        raise ParameterError("delay", "expected a Delay from parse_delay or a Cluster from make_cluster "
                             f"(got {type(delay_or_cluster).__name__})")
    c = delay_or_cluster
    if c.m != m:
        raise ParameterError("m", f"the scheme has m = {m} workers, the cluster {c.m}")
    return c
