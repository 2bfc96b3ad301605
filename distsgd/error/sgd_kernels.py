"""Compiled SGD loops on the model problem (DESIGN §3, §11): the per-update loops of
:mod:`distsgd.error.simulate`, written once over numpy arrays and compiled by
:func:`distsgd.jit.kernel` (numba, GIL released).

Both kernels advance R replicas through a block of updates ``j0 … j0 + B − 1`` in place, with no
temporary array per update; the asynchronous one replica by replica (so each replica's parameters
and its workers' read parameters stay in cache).  The helpers take whole arrays and indices, not
row views: a view per update costs a reference count and made the kernel 2–4 times slower.
The Gaussian noise is drawn by the caller, ``z[b, r]`` for update ``j0 + b`` of replica r, in
the order of the numpy reference (one ``(R, d)`` draw per update), so both give the same numbers
for the same seed.  The law is the one of :func:`distsgd.error.simulate._run_sgd_numpy`:

* fresh schemes: ``w ← shrink ⊙ w + sd_round ⊙ z`` (one update: the mean of K fresh gradients
  times η, or a local-SGD round of H steps, sampled exactly);
* asynchronous schemes: update j averages the K gradients ``h ⊙ u_k + ξ_k``, each at the
  parameters ``u_k`` its worker read, with the learning-rate rule :data:`CONSTANT`,
  :data:`ADAPTIVE` or :data:`STALENESS` (see :class:`distsgd.error.problem.LearningRate`).
"""

from __future__ import annotations

import numpy as np

from ..jit import kernel

__all__ = ["CONSTANT", "ADAPTIVE", "STALENESS", "RULES", "fresh_sgd", "scheduled_fresh", "scheduled_async", "async_sgd"]

#: the learning-rate rules, as the integer codes the kernel takes
CONSTANT, ADAPTIVE, STALENESS = 0, 1, 2
RULES = {"constant": CONSTANT, "adaptive": ADAPTIVE, "staleness": STALENESS}


@kernel
def fresh_sgd(w: np.ndarray, shrink: np.ndarray, sd_round: np.ndarray, h: np.ndarray, z: np.ndarray,
              err: np.ndarray, j0: int) -> None:
    """Fresh-gradient updates j0 … j0 + B − 1 (B = len(z)) of every replica, in place:
    ``w[r] ← shrink ⊙ w[r] + sd_round ⊙ z[b, r]`` and ``err[r, j + 1] = ½ Σ_i h_i w_i²``.

    w (R, d); shrink, sd_round, h (d,); z (B, R, d) standard normals; err (R, n + 1).  Update
    by update (the state is only w, and z is read in memory order)."""
    R, d = w.shape
    for b in range(z.shape[0]):
        for r in range(R):
            s = 0.0
            for i in range(d):
                x = shrink[i] * w[r, i] + sd_round[i] * z[b, r, i]
                w[r, i] = x
                s += h[i] * x * x
            err[r, j0 + b + 1] = 0.5 * s


@kernel
def _record(w: np.ndarray, r: int, h: np.ndarray, k: int, counts: np.ndarray, loss: np.ndarray, col0: int,
            j: int) -> int:
    """A scheduled run's grid: ``loss[r, col0 + j] = ½ Σ_i h_i w_i²`` for the columns j, from the
    given one on, at which replica r has made k updates (counts[r, j] == k); the next column."""
    J = counts.shape[1]
    if j < J and counts[r, j] == k:
        s = 0.0
        for i in range(w.shape[1]):
            s += h[i] * w[r, i] * w[r, i]
        while j < J and counts[r, j] == k:
            loss[r, col0 + j] = 0.5 * s
            j += 1
    return j


@kernel
def scheduled_fresh(w: np.ndarray, applied: np.ndarray, upto: np.ndarray, values: np.ndarray,
                    shrink: np.ndarray, sd_round: np.ndarray, z: np.ndarray, h: np.ndarray,
                    counts: np.ndarray, loss: np.ndarray, col0: int) -> None:
    """Fresh-gradient updates applied[r] … upto[r] − 1 of every replica r, each with its own K
    (k-sync) or H (local SGD) (a scheduled run, DESIGN §13), in place: ``w[r] ← shrink[v] ⊙ w[r]
    + sd_round[v] ⊙ z[p]`` with v = values[r, k], p running over z replica by replica, update by
    update; and ``loss[r, col0 + j] = ½ Σ_i h_i w_i²`` when replica r has made counts[r, j] updates.

    w (R, d); values (R, n); shrink, sd_round (vmax + 1, d); z (Σ (upto − applied), d) standard
    normals; counts (R, J), each row non-decreasing within [applied[r], upto[r]]; loss (R, P)."""
    R, d = w.shape
    p = 0
    for r in range(R):
        j = 0
        for k in range(applied[r], upto[r] + 1):
            j = _record(w, r, h, k, counts, loss, col0, j)
            if k == upto[r]:
                break
            v = values[r, k]
            for i in range(d):
                w[r, i] = shrink[v, i] * w[r, i] + sd_round[v, i] * z[p, i]
            p += 1


@kernel
def _gather(w: np.ndarray, read: np.ndarray, workers: np.ndarray, staleness: np.ndarray, r: int, j: int, K: int,
            mid_any: bool, h2: np.ndarray, eta: float, rule: int, drift: np.ndarray
            ) -> tuple[float, float, float, float]:
    """The K gradients of update j of replica r (the first K of ``workers[r, j]``): ``drift =
    Σ_k λ_k u_k`` (λ_k = η / max(1, staleness) under :data:`STALENESS`, else 1) and (Σ_k λ_k²,
    Σ_k ‖w − u_k‖², Σ_k Σ_i h_i² (w_i − u_ki)², Σ_i h_i² w_i²).  u_k is the read row of worker
    ``workers[r, j, k]``, or w itself when some push reads mid-window and the gradient is fresh
    (staleness 0: computed on the current parameters)."""
    d = w.shape[1]
    gnow = 0.0
    for i in range(d):
        drift[i] = 0.0
        gnow += (w[r, i] * w[r, i]) * h2[i]
    lam2 = dist2 = gdiff = 0.0
    for k in range(K):
        q = workers[r, j, k]
        st = staleness[r, j, k]
        own = mid_any and st == 0
        lam = eta / max(st, 1) if rule == STALENESS else 1.0
        lam2 += lam * lam
        s = g = 0.0
        for i in range(d):
            u = w[r, i] if own else read[r, q, i]
            diff = w[r, i] - u
            gap2 = diff * diff
            s += gap2
            g += gap2 * h2[i]
            drift[i] += lam * u
        dist2 += s
        gdiff += g
    return lam2, dist2, gdiff, gnow


@kernel
def _rates(rule: int, K: int, lam2: float, dist2: float, coef: np.ndarray) -> tuple[float, float]:
    """(η of the update, sd of the noise of the mean gradient); the step is
    ``η · (h ⊙ mean + sd · z)`` (see :func:`_update`); coef = (η, σ per coordinate, C, η_max)."""
    eta, sd, C, eta_max = coef[0], coef[1], coef[2], coef[3]
    if rule == STALENESS:  # λ_k already in the drift: step = h ⊙ drift / K + sd √(Σλ²) / K · z
        return 1.0, sd * np.sqrt(lam2) / K
    if rule == CONSTANT:
        return eta, sd / np.sqrt(K)
    mean2 = dist2 / K  # adaptive: η_j = min(C / mean ‖w − u_k‖², η_max), η_max when nothing is stale
    eta_j = min(C / mean2, eta_max) if mean2 > 0 else eta_max
    return eta_j, sd / np.sqrt(K)


@kernel
def _write(read: np.ndarray, workers: np.ndarray, r: int, j: int, after: np.ndarray, when: bool,
           w: np.ndarray) -> None:
    """Worker ``workers[r, j, k]`` reads w (its read row := w[r]) for the pushes k with
    ``after[k] == when``."""
    for k in range(workers.shape[2]):
        if after[k] == when:
            q = workers[r, j, k]
            for i in range(w.shape[1]):
                read[r, q, i] = w[r, i]


@kernel
def _update(w: np.ndarray, r: int, h: np.ndarray, drift: np.ndarray, z: np.ndarray, b: int, K: int,
            eta_j: float, noise_sd: float, divide: bool) -> float:
    """``w[r] ← w[r] − η_j (h ⊙ mean + noise_sd · z[b, r])`` in place, mean = drift / K when
    ``divide`` else drift · (1 / K) (as the reference computes each rule); returns the error
    ½ Σ h_i w_i² after the update."""
    inv = 1.0 / K
    e = 0.0
    for i in range(w.shape[1]):
        mean = drift[i] / K if divide else drift[i] * inv
        x = w[r, i] - eta_j * (h[i] * mean + noise_sd * z[b, r, i])
        w[r, i] = x
        e += 0.5 * (x * x) * h[i]
    return e


@kernel
def scheduled_async(w: np.ndarray, read: np.ndarray, values: np.ndarray, workers: np.ndarray, staleness: np.ndarray,
                    applied: np.ndarray, upto: np.ndarray, z: np.ndarray, h: np.ndarray, coef: np.ndarray, rule: int,
                    counts: np.ndarray, loss: np.ndarray, col0: int) -> None:
    """k-async updates applied[r] … upto[r] − 1 of every replica r, each with its own K (a
    scheduled run, DESIGN §13), in place: update k averages the K = values[r, k] gradients
    ``h ⊙ u + ξ`` of workers[r, k, :K] at the parameters u they read, with the rule's rate, as
    :func:`async_sgd` does (all pushers read after the update); the noise of the mean is z[p]
    scaled, p running over z replica by replica, update by update; ``loss[r, col0 + j] =
    ½ Σ_i h_i w_i²`` when replica r has made counts[r, j] updates.

    w (R, d); read (R, m, d); values (R, n); workers, staleness (R, n, kmax); z (Σ (upto −
    applied), d); coef = (η, σ per coordinate, C, η_max); counts (R, J), each row non-decreasing
    within [applied[r], upto[r]]; loss (R, P)."""
    R, d = w.shape
    h2 = h * h
    drift = np.empty(d)
    p = 0
    for r in range(R):
        j = 0
        for k in range(applied[r], upto[r] + 1):
            j = _record(w, r, h, k, counts, loss, col0, j)
            if k == upto[r]:
                break
            K = values[r, k]
            lam2, dist2, _, _ = _gather(w, read, workers, staleness, r, k, K, False, h2, coef[0], rule, drift)
            eta_j, noise_sd = _rates(rule, K, lam2, dist2, coef)
            inv = 1.0 / K
            for i in range(d):
                mean = drift[i] / K if rule == STALENESS else drift[i] * inv
                w[r, i] -= eta_j * (h[i] * mean + noise_sd * z[p, i])
            p += 1
            for q in range(K):
                wk = workers[r, k, q]
                for i in range(d):
                    read[r, wk, i] = w[r, i]


@kernel
def async_sgd(w: np.ndarray, read: np.ndarray, workers: np.ndarray, staleness: np.ndarray, after: np.ndarray,
              z: np.ndarray, err: np.ndarray, j0: int, h: np.ndarray, coef: np.ndarray, rule: int,
              acc: np.ndarray) -> None:
    """Asynchronous updates j0 … j0 + B − 1 (B = len(z)) of every replica, in place.

    Update j of replica r averages the K gradients ``h ⊙ u_k + ξ_k`` of workers[r, j] at the
    parameters u_k their workers read, with the rule's rate (see :func:`_rates`); the noise of
    the mean is one Gaussian per coordinate, ``z[b, r]`` scaled.  Pushes with ``after[k]`` False
    (k-batch-async, all but the K-th) read w before the update, the others after it.

    w (R, d) parameters; read (R, m, d) each worker's read parameters; workers, staleness
    (R, n, K) the trace; after (K,); z (B, R, d); err (R, n + 1) gets ½ Σ h w² after each
    update; coef = (η, σ per coordinate, C, η_max); rule one of :data:`RULES`; acc (R, 2)
    accumulates Σ_j Σ_k Σ_i h_i² (w_i − u_ki)² and Σ_j Σ_i h_i² w_i² (w before update j)."""
    R, d = w.shape
    K = workers.shape[2]
    mid_any = False
    for k in range(K):
        mid_any = mid_any or not after[k]
    h2 = h * h
    drift = np.empty(d)
    for r in range(R):
        for b in range(z.shape[0]):
            j = j0 + b
            lam2, dist2, gdiff, gnow = _gather(w, read, workers, staleness, r, j, K, mid_any, h2, coef[0], rule,
                                               drift)
            acc[r, 0] += gdiff
            acc[r, 1] += gnow
            eta_j, noise_sd = _rates(rule, K, lam2, dist2, coef)
            if mid_any:  # mid-window reads: before the update
                _write(read, workers, r, j, after, False, w)
            err[r, j + 1] = _update(w, r, h, drift, z, b, K, eta_j, noise_sd, rule == STALENESS)
            _write(read, workers, r, j, after, True, w)
