"""The compiled loop of the ad-psgd simulation (DESIGN §12.4, §1.5): the event loop of
:func:`distsgd.error.graph_simulate.simulate_adpsgd`, written once over numpy arrays and compiled
by :func:`distsgd.jit.kernel`.  Its numpy reference (``_adpsgd_numpy`` there, vectorised over
replicas, one event at a time) gives the same numbers for the same noise, which the caller draws:
``z[b, r]`` is the noise of event ``e0 + b`` of replica r.
"""

from __future__ import annotations

import numpy as np

from ..jit import kernel

__all__ = ["adpsgd_events"]


@kernel
def adpsgd_events(X: np.ndarray, read: np.ndarray, nodes: np.ndarray, peers: np.ndarray, z: np.ndarray,
                  e0: int, eta: float, sd: float, h: np.ndarray, counts: np.ndarray, ptr: np.ndarray,
                  out: np.ndarray) -> None:
    """Events e0 … e0 + B − 1 (B = len(z)) of every replica, in place, replica by replica.

    Before event e of replica r, the grid points p with ``counts[r, p] == e`` (the number of events
    with time ≤ t_p; non-decreasing in p, ``ptr[r]`` the next one) record the models:
    ``out[0, r·P + p] = f(x̄)``, ``out[1, …] = (1/m) Σ_i f(x_i)``, ``out[2, …] = (1/m) Σ_i ‖x_i − x̄‖²``.
    Event e: i = nodes[r, e], j = peers[r, e]; x_i, x_j ← (x_i + x_j)/2; x_i ← x_i − η (h ⊙ x̂_i + sd·z);
    x̂_i ← x_i.  X, read (R, m, d); nodes, peers (R, E); counts (R, P); ptr (R,); out (3, R·P)."""
    R, m, d = X.shape
    P = counts.shape[1]
    xbar = np.empty(d)
    for r in range(R):
        for b in range(z.shape[0]):
            e = e0 + b
            while ptr[r] < P and counts[r, ptr[r]] == e:
                cell = r * P + ptr[r]
                for c in range(d):
                    acc = 0.0
                    for i in range(m):
                        acc += X[r, i, c]
                    xbar[c] = acc / m
                fa = 0.0
                fn = 0.0
                cons = 0.0
                for c in range(d):
                    fa += 0.5 * h[c] * xbar[c] * xbar[c]
                for i in range(m):
                    for c in range(d):
                        x = X[r, i, c]
                        fn += 0.5 * h[c] * x * x
                        dev = x - xbar[c]
                        cons += dev * dev
                out[0, cell] = fa
                out[1, cell] = fn / m
                out[2, cell] = cons / m
                ptr[r] += 1
            i = nodes[r, e]
            j = peers[r, e]
            for c in range(d):
                avg = 0.5 * (X[r, i, c] + X[r, j, c])
                X[r, j, c] = avg
                new = avg - eta * (h[c] * read[r, i, c] + sd * z[b, r, c])
                X[r, i, c] = new
                read[r, i, c] = new
