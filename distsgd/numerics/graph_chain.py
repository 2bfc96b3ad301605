"""d-psgd's cycle time on a graph, analytic (DESIGN §12.3): the exact Markov chain of the
iteration-count gaps for exponential times, the bounds otherwise.

The graph is anything with ``indptr`` and ``indices`` (:mod:`~distsgd.numerics.graph_csr`: a
:class:`~distsgd.topology.Topology`, or a CSR built from plain arrays): node i's neighbours,
itself excluded, are ``indices[indptr[i]:indptr[i + 1]]``; it is undirected and connected.

**The chain** (exponential X, rate λ_i at node i, no shift).  Node i has finished c_i iterations; it
computes iteration c_i + 1 once it and every neighbour have finished iteration c_i, i.e. it is *busy*
iff c_i ≤ c_j for every neighbour j, and a busy node finishes at rate λ_i whatever it has done so far
(memorylessness).  The gaps g = c − min(c) are a finite continuous-time Markov chain: neighbours differ
by at most 1 (a node cannot start more than one iteration ahead of a neighbour), and every integer
g ≥ 0 with min 0 and |g_i − g_j| ≤ 1 on each edge is reachable from 0 (raise, level after level, each
node whose target exceeds the level: it is never ahead of a neighbour), so the states are exactly the
1-Lipschitz functions of the graph modulo constants, enumerated vertex by vertex along a BFS tree
(``tests/test_engines_graph.py`` checks them against a plain BFS of the transitions).  Over a long
time τ every node finishes about τ/γ iterations; node i finishes at rate λ_i while busy, so
1/γ = λ_i·P_π(i busy) for every i and, summed, **γ = m / Σ_i λ_i P_π(i busy)** — with one rate,
γ = m / (λ·E_π[number of busy nodes]).  Each transition adds 1 to Σ_i g_i except the one that
lifts the last minimal node (then every gap drops by 1: Σ g changes by 1 − m), so in order of the
level Σ g_i Gauss–Seidel needs the old values only on the renormalising transitions and converges
in tens of sweeps (no factorisation: LU fill-in made 9 000 states take seconds).  Refused (None)
above ``limits.GRAPH_CHAIN_MAX_STATES`` states: the caller falls back to the bounds.

**Bounds** (i.i.d. X; Baccelli et al. 1992 for the max-plus setting).  t_i(k) is the largest sum of
X along a walk of k steps that may stay put (each step to a node of the closed neighbourhood), ending
at i.  *Lower*: following the largest X of the current closed neighbourhood at each step gives a
walk whose steps add E[X_{(d+1):(d+1)}] at least (d the smallest degree), so
γ ≥ E[X_{(d+1):(d+1)}] ≥ E[X].  *Upper*: there are at most (Δ+1)^{k−1} such walks into i (Δ the
largest degree), each a sum of k independent X, so E max ≤ (1/θ) ln Σ E e^{θ·sum} gives
γ ≤ inf_θ [ln(Δ+1) + ln E e^{θX}]/θ, whatever m; and with every edge added the walks only grow, so
γ ≤ E[X_{m:m}], the complete graph's (sync).  On a cluster: γ ≥ max_i E[X_i] (a node's own
mini-batches alone), γ ≤ sync's value on the cluster (the same mini-batches, pathwise), and with
independent workers the moment bound with the largest ln E e^{θX_i}.
"""

from __future__ import annotations

import hashlib
import math
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import scipy.sparse as sp
from scipy import optimize

from .. import jit, limits
from ..clusters import Cluster
from ..clusters.independent_orderstats import kth_of_independent
from ..delays import Delay
from ..estimate import VALUE_KINDS, Estimate, infinite, numeric_kind, unavailable
from ..jit import kernel
from ..memo import Memo
from ..orderstats import order_statistic_mean
from ..reasons import Phrase, Text
from .graph_csr import CSR, Graph, csr_arrays

__all__ = ["Graph", "CSR", "csr_arrays", "ChainSolution", "gap_states", "solve_gap_chain", "mgf_bound",
           "dpsgd_cycle_time", "dpsgd_cluster_cycle_time", "dpsgd_bounds", "adpsgd_node_staleness"]

#: Gauss–Seidel sweeps before the chain's value is reported with its estimated error
MAX_SWEEPS = 2000
#: the chain is reported ``exact`` when its estimated relative error is below this
_EXACT_REL = 1e-12
#: Gauss–Seidel stops only when the balance equations hold to this relative residual too
_RESIDUAL = 1e-12


# -- the chain of the gaps ---------------------------------------------------------------------------

@dataclass(frozen=True)
class ChainSolution:
    """The stationary chain of the gaps: ``states`` reachable states, ``throughput`` =
    Σ_i λ_i P_π(i busy) (iterations finished per unit time, all nodes together; with rates 1 it is
    E_π[busy nodes]), its estimated absolute ``error``, and the Gauss–Seidel ``sweeps`` it took."""

    m: int
    states: int
    throughput: float
    error: float
    sweeps: int

    @property
    def cycle_time(self) -> float:
        """γ = m / Σ_i λ_i P_π(i busy)."""
        return self.m / self.throughput


def _bfs_tree(indptr: np.ndarray, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """BFS order from node 0 and each node's parent (−1 for the root); ValueError if disconnected."""
    m = indptr.size - 1
    parent = np.full(m, -1, dtype=np.int64)
    seen = np.zeros(m, dtype=bool)
    seen[0] = True
    order = [0]
    queue = deque([0])
    while queue:
        u = queue.popleft()
        for v in indices[indptr[u]:indptr[u + 1]]:
            if not seen[v]:
                seen[v], parent[v] = True, u
                order.append(int(v))
                queue.append(int(v))
    if len(order) != m:
        raise ValueError("graph: not connected")
    return np.array(order, dtype=np.int64), parent


def gap_states(graph: Graph, cap: int = limits.GRAPH_CHAIN_MAX_STATES) -> np.ndarray | None:
    """Every state of the gap chain, (S, m) int8 (module doc: the 1-Lipschitz g ≥ 0 with min 0), or
    None when there are more than ``cap``.  The 2^m − 1 vectors of 0s and 1s but not all 1s are states,
    so m > log₂(cap + 1) is refused at once (and m > 30, whose base-3 keys would pass 2^53); partial
    enumerations above 4·cap are refused too."""
    indptr, indices = csr_arrays(graph)
    m = indptr.size - 1
    if m > 30 or 2**m - 1 > cap:
        return None
    order, parent = _bfs_tree(indptr, indices)
    pos = np.empty(m, dtype=np.int64)
    pos[order] = np.arange(m)
    F = np.zeros((1, m), dtype=np.int8)  # values relative to the root
    steps = np.array([-1, 0, 1], dtype=np.int8)
    for v in order[1:]:
        p = parent[v]
        earlier = [u for u in indices[indptr[v]:indptr[v + 1]] if pos[u] < pos[v] and u != p]
        c = np.repeat(F, 3, axis=0)
        c[:, v] = c[:, p] + np.tile(steps, F.shape[0])
        ok = np.ones(c.shape[0], dtype=bool)
        for u in earlier:
            ok &= np.abs(c[:, v].astype(np.int16) - c[:, u]) <= 1
        F = c[ok]
        if F.shape[0] > 4 * cap:
            return None
    if F.shape[0] > cap:
        return None
    return F - F.min(axis=1, keepdims=True)


def solve_gap_chain(graph: Graph, rates: Sequence[float] | np.ndarray | None = None,
                    max_states: int = limits.GRAPH_CHAIN_MAX_STATES) -> ChainSolution | None:
    """The stationary gap chain (module doc) with node i finishing at rate ``rates[i]`` (all 1 by
    default), or None above ``max_states`` states.  Cached per graph and rates."""
    indptr, indices = csr_arrays(graph)
    lam = np.ones(indptr.size - 1) if rates is None else np.asarray(rates, dtype=float)
    if lam.shape != (indptr.size - 1,) or not np.all(np.isfinite(lam) & (lam > 0)):
        raise ValueError("rates: one positive finite rate per node")
    # the sizes fix where each array's bytes end, so the digest names the graph and the rates
    key = (hashlib.sha1(indptr.tobytes() + indices.tobytes() + lam.tobytes()).digest(), indptr.size, indices.size,
           int(max_states))
    return _SOLVED.cached(key, lambda: _solve(indptr, indices, lam, int(max_states)))


#: solutions by (SHA-1 of the graph and the rates, cap): five numbers each, so room for every graph of a
#: class's charts over m (≈ 12 values of m × 4 graphs for each m a student picks, asked in the same order
#: every rerun: a cache of 32 made each of them a miss, and a ring of 13 nodes costs 0.5 s)
_SOLVED: Memo[tuple[bytes, int, int, int], ChainSolution | None] = Memo(4096)


def _solve(indptr: np.ndarray, indices: np.ndarray, lam: np.ndarray, cap: int) -> ChainSolution | None:
    m = indptr.size - 1
    F = gap_states(CSR(indptr, indices), cap)
    if F is None:
        return None
    S = F.shape[0]
    order, parent = _bfs_tree(indptr, indices)
    child = order[1:]
    # a state is fixed by its differences along the BFS tree, each in {-1, 0, 1}: a base-3 key (exact
    # in float64 below 3^33), the first child the most significant digit, so that gap_states, which
    # varies the last vertex fastest, lists the states in increasing key order; lifting node i changes
    # the key by a constant (its digit up, its children's down), and each node's busy states and their
    # successors' keys come in increasing order too
    digit = np.zeros(m, dtype=np.int64)
    digit[child] = 3 ** np.arange(m - 2, -1, -1, dtype=np.int64)
    diff = F[:, child].astype(np.float64) - F[:, parent[child]] + 1.0
    key = np.rint(diff @ digit[child].astype(np.float64)).astype(np.int64)
    if S > 1 and not np.all(key[1:] > key[:-1]):
        raise AssertionError("gap chain: the states are not in key order")
    delta = digit.copy()
    np.subtract.at(delta, parent[child], digit[child])
    level = F.sum(axis=1, dtype=np.int64)
    busy = np.empty((S, m), dtype=bool)
    for i in range(m):
        nb = indices[indptr[i]:indptr[i + 1]]
        busy[:, i] = F[:, i] <= F[:, nb].min(axis=1) if nb.size else True
    src_parts, dst_parts, rate_parts = [], [], []
    for i in range(m):
        s = np.flatnonzero(busy[:, i])
        want = key[s] + delta[i]
        at = np.minimum(np.searchsorted(key, want), S - 1)
        if not np.array_equal(key[at], want):
            raise AssertionError("gap chain: a successor is not a state (the enumeration is wrong)")
        src_parts.append(s)
        dst_parts.append(at)
        rate_parts.append(np.full(s.size, lam[i]))
    src, dst, rate = np.concatenate(src_parts), np.concatenate(dst_parts), np.concatenate(rate_parts)
    out_rate = busy.astype(np.float64) @ lam
    # from here on the states are in order of level (memory order for the sweeps)
    visit = np.argsort(level, kind="stable")
    pos = np.empty(S, dtype=np.int64)
    pos[visit] = np.arange(S)
    src, dst, level, out_rate = pos[src], pos[dst], level[visit], out_rate[visit]
    sweep = _Sweep(src, dst, rate, level, out_rate)

    def residual(x: np.ndarray) -> float:
        """‖πQ‖₁ / ‖π·out‖₁: the balance equations' relative residual."""
        flow = x * out_rate
        return float(np.abs(np.bincount(dst, weights=rate * x[src], minlength=S) - flow).sum() / flow.sum())

    x = np.full(S, 1.0 / S)
    value, err, prev_step, sweeps = float(x @ out_rate), math.inf, math.inf, 0
    for sweeps in range(1, MAX_SWEEPS + 1):
        sweep(x)
        x /= x.sum()
        new = float(x @ out_rate)
        step = abs(new - value)
        value = new
        ratio = step / prev_step if prev_step > 0 else 0.0
        prev_step = step
        err = step * ratio / (1.0 - ratio) if ratio < 1.0 else math.inf
        if (step == 0.0 or (sweeps > 2 and err <= 0.1 * _EXACT_REL * value)) and residual(x) <= _RESIDUAL:
            err = min(err, step)
            break
    return ChainSolution(m, S, value, err, sweeps)


class _Sweep:
    """One Gauss–Seidel sweep of the balance equations π_s·out(s) = Σ_{u→s} rate·π_u (transitions
    u = src → s = dst), the states numbered in order of level Σ_i g_i: every transition goes one
    level up except the renormalising ones, so the sources one level down already have this sweep's
    values and only the renormalising ones last sweep's.  The compiled loop (:func:`_gauss_seidel`)
    when kernels are compiled, else the numpy reference level by level (the same iteration, summed
    in another order)."""

    def __init__(self, src: np.ndarray, dst: np.ndarray, rate: np.ndarray, level: np.ndarray,
                 out_rate: np.ndarray) -> None:
        S = level.size
        self.out_rate = out_rate
        if jit.ENABLED:
            q = sp.csr_matrix((rate, (dst, src)), shape=(S, S))
            self.csr = (q.indptr.astype(np.int64), q.indices.astype(np.int64), q.data)
            return
        up = level[dst] == level[src] + 1
        self.renorm = sp.csr_matrix((rate[~up], (dst[~up], src[~up])), shape=(S, S))
        inflow = sp.csr_matrix((rate[up], (dst[up], src[up])), shape=(S, S))
        bounds = np.searchsorted(level, np.arange(int(level[-1]) + 2))
        self.blocks = [(int(bounds[k - 1]) if k else 0, int(bounds[k]), int(bounds[k + 1]),
                        inflow[bounds[k]:bounds[k + 1], bounds[k - 1]:bounds[k]].tocsr() if k else None)
                       for k in range(bounds.size - 1)]

    def __call__(self, x: np.ndarray) -> None:
        if jit.ENABLED:
            _gauss_seidel(*self.csr, self.out_rate, x)
            return
        r = self.renorm @ x  # inflow from higher levels: last sweep's values
        for below, a, b, blk in self.blocks:
            inc = r[a:b] if blk is None else r[a:b] + blk @ x[below:a]
            x[a:b] = inc / self.out_rate[a:b]


@kernel
def _gauss_seidel(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, out_rate: np.ndarray,
                  x: np.ndarray) -> None:
    """x_s ← Σ_p data[p]·x[indices[p]] / out_rate[s] over row s's inflows, for s = 0, 1, … in turn."""
    for s in range(x.size):
        acc = 0.0
        for p in range(indptr[s], indptr[s + 1]):
            acc += data[p] * x[indices[p]]
        x[s] = acc / out_rate[s]


# -- bounds ------------------------------------------------------------------------------------------

def mgf_bound(log_mgf: Callable[[float], float], radius: float, scale: float, degree: int) -> tuple[float, float]:
    """inf_{θ>0} [ln(Δ+1) + ln E e^{θX}]/θ for Δ = ``degree`` (module doc) and the θ that gives it:
    ``log_mgf`` is inf where the function diverges, ``radius`` = sup{θ: finite}.  Every θ gives a valid
    bound; the function is unimodal in θ (its derivative's sign is that of θψ′ − ψ − ln(Δ+1), which
    increases), so a log-spaced grid over θ·scale in [1e-4, 1e4] (and towards the radius) and a
    bounded Brent search in ln θ around the best point find its minimum.  (inf, nan) when no θ works."""
    a = math.log(degree + 1.0)

    def f(theta: float) -> float:
        v = log_mgf(theta)
        return (a + v) / theta if math.isfinite(v) else math.inf

    grid = np.geomspace(1e-4, 1e4, 81) / scale
    if math.isfinite(radius):
        grid = np.concatenate([grid[grid < radius], radius * (1.0 - np.geomspace(0.5, 1e-9, 30))])
    if grid.size == 0:
        return math.inf, math.nan
    vals = np.array([f(float(t)) for t in grid])
    best = int(np.argmin(vals))
    if not math.isfinite(vals[best]):
        return math.inf, math.nan
    lo, hi = math.log(grid[max(best - 1, 0)]), math.log(grid[min(best + 1, grid.size - 1)])
    theta, value = float(grid[best]), float(vals[best])
    if hi > lo:
        res = optimize.minimize_scalar(lambda u: f(math.exp(u)), bounds=(lo, hi), method="bounded",
                                       options={"xatol": 1e-10})
        t_opt = math.exp(float(res.x))
        v_opt = f(t_opt)
        if v_opt < value:
            theta, value = t_opt, v_opt
    return value, theta


def _scale(delay: Delay) -> float:
    """A time scale of X − Δ for the θ grid: its standard deviation, else its mean, else 1."""
    for v in (delay.std, delay.mean - delay.shift):
        if math.isfinite(v) and v > 0:
            return float(v)
    return 1.0


@lru_cache(maxsize=256)
def _law_mgf_bound(laws: tuple[Delay, ...], degree: int) -> tuple[float, float]:
    """:func:`mgf_bound` with ln E e^{θX} the largest of the ``laws``' (one law: i.i.d. nodes)."""
    radius = min(d.mgf_radius for d in laws)
    if radius <= 0:
        return math.inf, math.nan
    return mgf_bound(lambda t: max(d.log_mgf(t) for d in laws), radius, min(_scale(d) for d in laws), degree)


def _degrees(graph: Graph) -> tuple[int, int, int]:
    """(m, smallest degree, largest degree)."""
    indptr, _ = csr_arrays(graph)
    deg = np.diff(indptr)
    return indptr.size - 1, int(deg.min()), int(deg.max())


def _upper(candidates: list[tuple[float, Phrase]], what: Phrase) -> Estimate:
    """The smallest finite candidate as an ``upper_bound``, its method saying which it is."""
    finite = [(v, s) for v, s in candidates if math.isfinite(v)]
    if not finite:
        return unavailable(Text.of("method_graph_no_upper", what=what))
    v, s = min(finite, key=lambda c: c[0])
    others = [t for u, t in finite if t != s]
    if others:
        return Estimate(v, "upper_bound", Text.of("method_graph_upper_tighter", bound=s, other=others[0]))
    return Estimate(v, "upper_bound", Text.of("method_graph_upper", bound=s))


def dpsgd_bounds(source: Delay | Cluster, graph: Graph, work: float = limits.ANALYTIC_WORK
                 ) -> tuple[Estimate, Estimate]:
    """(lower, upper) bounds on d-psgd's cycle time γ (module doc), each an Estimate of kind
    ``lower_bound`` / ``upper_bound`` (``infinite`` when E[X] is; ``unavailable`` when no finite
    upper bound is known); the upper is the tighter of E[X_{m:m}] (sync) and the moment bound."""
    m, d, D = _degrees(graph)
    if isinstance(source, Cluster):
        return _cluster_bounds(source, m, D, work)
    delay = source
    if not math.isfinite(delay.mean):
        return (infinite(Text.of("method_graph_infinite")),) * 2
    low = order_statistic_mean(delay, d + 1, d + 1)
    if low.kind in VALUE_KINDS and low.value is not None:
        lower = Estimate(low.value, "lower_bound",
                         Text.of("method_graph_lower_degree", sub=f"{{{d + 1}:{d + 1}}}", d=d))
    else:
        lower = Estimate(delay.mean, "lower_bound", Text.of("method_graph_lower_mean"))
    sync = order_statistic_mean(delay, m, m)
    cands = [(sync.value if sync.kind in VALUE_KINDS and sync.value is not None else math.inf,
              Phrase("method_graph_sync", sub=f"{{{m}:{m}}}"))]
    bound, theta = _law_mgf_bound((delay,), D)
    cands.append((bound, Phrase("method_graph_mgf", D=D, theta=theta)))
    return lower, _upper(cands, Phrase("method_this_law"))


def _sync_on(cluster: Cluster, work: float) -> Estimate:
    """Sync's E[max_i X_i] on the cluster: exact on a replay, else the Poisson-binomial quadrature
    of the stationary marginals (independent workers; the Markov states are stationary)."""
    exact = cluster.exact_kth_mean(cluster.m)
    if exact is not None:
        return Estimate(exact, "exact", Text.of("method_replay_largest"))
    return kth_of_independent(cluster.marginals(), cluster.m, work)


def _cluster_bounds(cluster: Cluster, m: int, D: int, work: float) -> tuple[Estimate, Estimate]:
    means = cluster.worker_means()
    top = float(np.max(means))
    if not math.isfinite(top):
        return (infinite(Text.of("method_graph_cluster_infinite")),) * 2
    lower = Estimate(top, "lower_bound", Text.of("method_graph_lower_top"))
    sync = _sync_on(cluster, work)
    cands = [(sync.value if sync.kind in VALUE_KINDS and sync.value is not None else math.inf,
              Phrase("method_graph_cluster_sync"))]
    if cluster.groups is not None:  # independent workers, i.i.d. over time: the moment bound
        bound, theta = _law_mgf_bound(tuple(g.delay for g in cluster.groups), D)
        cands.append((bound, Phrase("method_graph_cluster_mgf", D=D, theta=theta)))
    return lower, _upper(cands, Phrase("method_this_cluster"))


def _chain_estimate(sol: ChainSolution, scale: float, what: Phrase) -> Estimate:
    """γ from a solved chain (rates in units of 1/scale) as an Estimate."""
    value, err = sol.cycle_time * scale, sol.cycle_time * scale * sol.error / sol.throughput
    kind = "exact" if err <= _EXACT_REL * value else numeric_kind(value, err)
    return Estimate(value, kind, Text.of("method_graph_chain", states=sol.states, what=what), error=err)


def _states_for(work: float, max_states: int) -> int:
    """The largest chain ``work`` pays for (≈ limits.GRAPH_CHAIN_STATE_WORK a state), at most ``max_states``."""
    return max(1, min(int(max_states), int(work // limits.GRAPH_CHAIN_STATE_WORK)))


def dpsgd_cycle_time(delay: Delay, graph: Graph, work: float = limits.ANALYTIC_WORK,
                     max_states: int = limits.GRAPH_CHAIN_MAX_STATES) -> Estimate:
    """d-psgd's cycle time γ for i.i.d. X: the complete graph is sync (E[X_{m:m}], its kind);
    exponential X without a shift on a graph whose chain has at most ``max_states`` states (and at
    most ``work`` / ``limits.GRAPH_CHAIN_STATE_WORK``) exactly (module doc); otherwise the tighter
    upper bound of :func:`dpsgd_bounds`."""
    m, d, _ = _degrees(graph)
    if d == m - 1:
        return order_statistic_mean(delay, m, m).renamed(Text.of("method_graph_complete", sub=f"{{{m}:{m}}}"))
    max_states = _states_for(work, max_states)
    if delay.memoryless:
        sol = solve_gap_chain(graph, None, max_states)
        if sol is not None:
            return _chain_estimate(sol, delay.mean, Phrase("method_rate_every_node"))
    lower, upper = dpsgd_bounds(delay, graph, work)
    if upper.value is None or not delay.memoryless:
        return upper
    return upper.renamed(Text.of("method_graph_chain_too_big", method=upper.method, max_states=max_states))


def dpsgd_cluster_cycle_time(cluster: Cluster, graph: Graph, work: float = limits.ANALYTIC_WORK,
                             max_states: int = limits.GRAPH_CHAIN_MAX_STATES) -> Estimate:
    """γ on a cluster: the complete graph is sync on the cluster; independent exponential nodes (rates
    λ_i, no shift, no state) exactly by the chain (within ``work``, as :func:`dpsgd_cycle_time`);
    otherwise the tighter upper bound."""
    m, d, _ = _degrees(graph)
    if d == m - 1:
        return _sync_on(cluster, work).renamed(Text.of("method_graph_cluster_complete"))
    max_states = _states_for(work, max_states)
    groups = cluster.groups
    if groups is not None and all(g.delay.memoryless for g in groups):
        sol = solve_gap_chain(graph, 1.0 / cluster.worker_means(), max_states)
        if sol is not None:
            return _chain_estimate(sol, 1.0, Phrase("method_rate_each_node"))
    return dpsgd_bounds(cluster, graph, work)[1]


def adpsgd_node_staleness(worker_means: np.ndarray, graph: Graph) -> np.ndarray:
    """Each node's long-run mean ad-psgd staleness (DESIGN §12.3: averagings a neighbour started while
    the gradient was computed): neighbour k finishes 1/μ_k gradients per unit time and picks i with
    probability 1/d_k, node i finishes 1/μ_i, so by renewal–reward it is μ_i Σ_{k∈N(i)} 1/(d_k μ_k).
    Weighted by the nodes' rates the mean over gradients is exactly 1 (every averaging lands on one
    gradient in progress)."""
    indptr, indices = csr_arrays(graph)
    m = indptr.size - 1
    mu = np.asarray(worker_means, dtype=float)
    deg = np.diff(indptr)
    per = 1.0 / (np.maximum(deg, 1) * mu)  # averagings node k starts with each neighbour per unit time
    return mu * np.bincount(np.repeat(np.arange(m), deg), weights=per[indices], minlength=m)
