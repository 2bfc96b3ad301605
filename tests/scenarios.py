"""The one table of scenarios: every scheme × every delay family × small and large m × K at
1, middle and m.  Generic tests (test_crosscheck.py) iterate over it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

DATA = Path(__file__).parent / "data"

#: one representative of each family (Pareto with finite variance, so CIs are valid)
DELAYS: dict[str, str] = {
    "exp": "exp(rate=2)",
    "shifted-exp": "shifted-exp(rate=1, shift=0.5)",
    "pareto": "pareto(xm=1, alpha=2.5)",
    "lognormal": "lognormal(mu=0, sigma=0.75)",
    "normal": "normal(mean=1, std=0.5)",
    "weibull-dfr": "weibull(shape=0.7, scale=1)",
    "weibull-ifr": "weibull(shape=1.5, scale=1, shift=0.2)",
    "uniform": "uniform(low=0.5, high=1.5)",
    "empirical": f"empirical(file={DATA / 'trace.csv'})",
}

MS = (4, 64)
SCHEMES = ("sync", "k-sync", "k-batch-sync", "async", "k-async", "k-batch-async", "local-sgd")


@dataclass(frozen=True)
class Scenario:
    scheme: str
    m: int
    K: int | None
    H: int | None
    delay: str
    delay_key: str

    @property
    def id(self) -> str:
        extra = f"K{self.K}" if self.K is not None else (f"H{self.H}" if self.H is not None else "")
        return f"{self.scheme}-m{self.m}{('-' + extra) if extra else ''}-{self.delay_key}"


def _ks(scheme: str, m: int) -> list[int | None]:
    if scheme in ("sync", "async", "local-sgd"):
        return [None]
    ks = sorted({1, max(1, m // 2), m})
    if scheme in ("k-batch-sync", "k-batch-async"):
        ks.append(2 * m + 1)  # the batch schemes allow K > m
    return ks


def scenarios() -> list[Scenario]:
    out = []
    for key, spec in DELAYS.items():
        for scheme in SCHEMES:
            for m in MS:
                hs = [1, 4] if scheme == "local-sgd" else [None]
                for K in _ks(scheme, m):
                    for H in hs:
                        out.append(Scenario(scheme, m, K, H, spec, key))
    return out
