"""Communication time models (DESIGN §4): parameter server vs ring all-reduce.

A message of s bytes over a link of bandwidth B (bytes/s) with latency ℓ takes s/B + ℓ.
For a model of d parameters of ``word_bytes`` bytes each (4 for float32), per iteration:

* parameter server — every worker sends its gradient and receives the parameters through the
  server's link, which carries all of them: ``2 · m · 4d / B + 2ℓ``;
* ring all-reduce — reduce-scatter then all-gather, 2(m−1) steps of 4d/m bytes each:
  ``2 (m−1)/m · 4d / B + 2 (m−1) ℓ`` (bandwidth-optimal, latency grows with m).

Either result can be used as the shift Δ of the per-iteration delay, or as the averaging time
D of local SGD.
"""

from __future__ import annotations

from dataclasses import dataclass

from .params import Domain, ParameterError

__all__ = ["CommModel", "parameter_server_time", "ring_allreduce_time", "TOPOLOGIES"]

TOPOLOGIES = ("parameter-server", "ring-allreduce")
PARAMS_D = Domain("params", 1, 1e13, symbol="d", doc="model parameters")
BANDWIDTH = Domain("bandwidth", 0.0, 1e15, low_open=True, symbol="B", doc="link bandwidth, bytes/s")
LATENCY = Domain("latency", 0.0, 1e3, symbol="ℓ", doc="per-message latency, s")
WORD = Domain("word_bytes", 1, 16, integer=True, doc="bytes per parameter")
WORKERS = Domain("m", 1, 100_000, integer=True, symbol="m", doc="number of workers")


def parameter_server_time(m: int, params: float, bandwidth: float, latency: float,
                          word_bytes: int = 4) -> float:
    """2 · m · (word_bytes · d) / B + 2ℓ: the server's link carries every worker's traffic.

    8 workers, 10⁶ float32 parameters (4 MB), 1 GB/s, 1 ms: 0.064 s of transfer + 0.002 s:

    >>> round(parameter_server_time(8, 1e6, 1e9, 1e-3), 9)
    0.066
    """
    m = WORKERS.check(m, "m")
    size = WORD.check(word_bytes, "word_bytes") * PARAMS_D.check(params, "params")
    return 2 * m * size / BANDWIDTH.check(bandwidth, "bandwidth") + 2 * LATENCY.check(latency, "latency")


def ring_allreduce_time(m: int, params: float, bandwidth: float, latency: float,
                        word_bytes: int = 4) -> float:
    """2 (m−1)/m · (word_bytes · d) / B + 2 (m−1) ℓ (reduce-scatter + all-gather); 0 for m = 1.

    The same network as the parameter-server example: 0.007 s of transfer + 14 latencies:

    >>> round(ring_allreduce_time(8, 1e6, 1e9, 1e-3), 9)
    0.021
    >>> ring_allreduce_time(1, 1e6, 1e9, 1e-3)
    0.0
    """
    m = WORKERS.check(m, "m")
    size = WORD.check(word_bytes, "word_bytes") * PARAMS_D.check(params, "params")
    B = BANDWIDTH.check(bandwidth, "bandwidth")
    lat = LATENCY.check(latency, "latency")
    return 2 * (m - 1) / m * size / B + 2 * (m - 1) * lat


@dataclass(frozen=True)
class CommModel:
    """A network: model size d, bandwidth B (bytes/s), latency ℓ (s), and the topology.

    Without latency the parameter server is m²/(m − 1) times slower than the ring:

    >>> ps = CommModel(params=25e6, latency=0.0, topology="parameter-server")
    >>> ring = CommModel(params=25e6, latency=0.0, topology="ring-allreduce")
    >>> round(ps.time(16) / ring.time(16), 6), round(16**2 / 15, 6)
    (17.066667, 17.066667)
    >>> CommModel(topology="mesh")
    Traceback (most recent call last):
    ...
    distsgd.params.ParameterError: topology: must be one of parameter-server, ring-allreduce (got 'mesh')
    """

    params: float = 1e6
    bandwidth: float = 1.25e9  # 10 Gbit/s
    latency: float = 5e-5
    topology: str = "ring-allreduce"
    word_bytes: int = 4

    def __post_init__(self) -> None:
        if self.topology not in TOPOLOGIES:
            raise ParameterError("topology", "one_of", choices=", ".join(TOPOLOGIES), value=self.topology)
        object.__setattr__(self, "params", PARAMS_D.check(self.params, "params"))
        object.__setattr__(self, "bandwidth", BANDWIDTH.check(self.bandwidth, "bandwidth"))
        object.__setattr__(self, "latency", LATENCY.check(self.latency, "latency"))
        object.__setattr__(self, "word_bytes", WORD.check(self.word_bytes, "word_bytes"))

    def time(self, m: int) -> float:
        """Communication time per iteration (or per averaging round) with m workers."""
        f = parameter_server_time if self.topology == "parameter-server" else ring_allreduce_time
        return f(m, self.params, self.bandwidth, self.latency, self.word_bytes)

