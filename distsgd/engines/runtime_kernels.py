"""Compiled kernels of the Monte Carlo engines: the loops numpy cannot vectorise.

Each kernel is plain Python over numpy arrays, compiled by :func:`distsgd.jit.kernel`
(``numba.njit(nogil=True, cache=True)``: a running kernel releases the GIL, DESIGN §11).
No kernel draws a random number: the caller draws them in blocks with its own numpy Generator
and passes them in, so a kernel and the pure-numpy reference path of its engine consume the
same stream and give the same numbers for the same seed (``tests/test_engines_kernels.py``).

Ties are broken by worker id everywhere: "the K earliest finishers" are the K smallest by
(finish time, worker id), and they push in that order.

* :func:`kasync_steps` — k-async, update by update, for R independent replicas;
* :func:`previous_pushes` — the merged stream of async / k-batch-async: each push's worker's
  previous push;
* :func:`kbatch_sync_kth` — k-batch-sync in event order, m + K − 1 draws per iteration (its
  numpy reference draws whole paths instead, so the two agree in law, not draw for draw).
"""

from __future__ import annotations

import numpy as np

from ..jit import kernel

__all__ = ["kasync_steps", "previous_pushes", "kbatch_sync_kth"]


@kernel
def _sort_by_key_id(key: np.ndarray, ids: np.ndarray, tkey: np.ndarray, tid: np.ndarray) -> None:
    """Sort (key, ids) in place by key, ties by id: insertion sort when short, else a bottom-up
    merge sort through the scratch arrays tkey, tid (at least as long)."""
    n = key.size
    if n <= 16:
        for i in range(1, n):
            k, w = key[i], ids[i]
            j = i - 1
            while j >= 0 and (key[j] > k or (key[j] == k and ids[j] > w)):
                key[j + 1], ids[j + 1] = key[j], ids[j]
                j -= 1
            key[j + 1], ids[j + 1] = k, w
        return
    width, into_scratch = 1, True
    while width < n:
        if into_scratch:
            _merge_pass(key, ids, tkey, tid, n, width)
        else:
            _merge_pass(tkey, tid, key, ids, n, width)
        into_scratch = not into_scratch
        width *= 2
    if not into_scratch:  # the last pass wrote the scratch arrays (a loop, not a slice assignment:
        for i in range(n):  # numba's broadcasting setitem tripled this kernel's compile time)
            key[i], ids[i] = tkey[i], tid[i]


@kernel
def _merge_pass(src_k: np.ndarray, src_i: np.ndarray, dst_k: np.ndarray, dst_i: np.ndarray, n: int,
                width: int) -> None:
    """One pass of the bottom-up merge sort: sorted runs of ``width`` merged pairwise into dst."""
    for lo in range(0, n, 2 * width):
        mid, hi = min(lo + width, n), min(lo + 2 * width, n)
        a, c = lo, mid
        for o in range(lo, hi):
            if c >= hi or (a < mid and (src_k[a] < src_k[c] or (src_k[a] == src_k[c] and src_i[a] < src_i[c]))):
                dst_k[o], dst_i[o] = src_k[a], src_i[a]
                a += 1
            else:
                dst_k[o], dst_i[o] = src_k[c], src_i[c]
                c += 1


@kernel
def _merge_pushers(skey: np.ndarray, sid: np.ndarray, nkey: np.ndarray, nid: np.ndarray, okey: np.ndarray,
                   oid: np.ndarray, K: int) -> None:
    """okey, oid[:m] ← skey, sid[K:m] (sorted) merged with nkey, nid[:K] (sorted), by (key, id).
    K = 1 or K ≥ m − 1: each element's place counted (independent comparisons); else a branch-free
    merge (+inf sentinels at skey[m], nkey[K])."""
    m = okey.size - 1
    if (m - K) * K <= m:
        for a in range(K, m):
            ka, ia = skey[a], sid[a]
            before = 0
            for c in range(K):
                before += (nkey[c] < ka) | ((nkey[c] == ka) & (nid[c] < ia))
            okey[a - K + before], oid[a - K + before] = ka, ia
        for c in range(K):
            kc, ic = nkey[c], nid[c]
            before = 0
            for a in range(K, m):
                before += (skey[a] < kc) | ((skey[a] == kc) & (sid[a] < ic))
            okey[c + before], oid[c + before] = kc, ic
        return
    a, c = K, 0
    for i in range(m):
        ka, kc, ia, ic = skey[a], nkey[c], sid[a], nid[c]
        ta = (ka < kc) | ((ka == kc) & (ia < ic))
        okey[i] = ka if ta else kc
        oid[i] = ia if ta else ic
        a += ta
        c += 1 - ta


@kernel
def kasync_steps(finish: np.ndarray, read: np.ndarray, draws: np.ndarray, j0: np.ndarray, times: np.ndarray,
                 stale: np.ndarray, workers: np.ndarray, record: bool, until: float, made: np.ndarray) -> None:
    """k-async: up to b consecutive updates j0[r], j0[r] + 1, … of R independent replicas, in
    place: b of them, or (a scheduled run, DESIGN §13) fewer when one ends after ``until``: the
    first that does is the replica's last (``made[r]`` updates; its unused draws are dropped).

    Process (DESIGN §2): worker i of replica r finishes its job at ``finish[r, i]``; it read
    the parameters after update ``read[r, i]`` − 1.  At each update the K earliest finishers
    (ties by id) push, in that order; the update happens at the K-th push, time t; pusher k
    then starts a fresh job on the new parameters and finishes at t + ``draws[r, jj, k]``.
    The others are not interrupted.

    Each replica's workers are kept sorted by (finish, id): the K pushers are the first K, and
    their new finish times, sorted, are merged back with the other m − K (O(m) per update).

    finish (R, m) float, read (R, m) int: the state, updated;  draws (R, b, K) float;  j0 (R,) int;
    out: times (R, b), stale (R, b, K) = update index − version read, made (R,) int, and, when
    ``record``, workers (R, b, K): the pushers in push order.
    """
    R, m = finish.shape
    _, b, K = draws.shape
    skey, sid = np.full(m + 1, np.inf), np.full(m + 1, m, dtype=np.int64)  # sorted by (finish, id)
    okey, oid = np.full(m + 1, np.inf), np.full(m + 1, m, dtype=np.int64)  # the merge's output
    nkey, nid = np.full(K + 1, np.inf), np.full(K + 1, m, dtype=np.int64)  # the pushers' new times
    for r in range(R):
        for i in range(m):
            skey[i], sid[i] = finish[r, i], i
        _sort_by_key_id(skey[:m], sid[:m], okey, oid)
        made[r] = b
        for jj in range(b):
            if jj > 0 and times[r, jj - 1] > until:
                made[r] = jj
                break
            t = skey[K - 1]
            times[r, jj] = t
            j = j0[r] + jj
            for k in range(K):
                w = sid[k]
                stale[r, jj, k] = j - read[r, w]
                read[r, w] = j + 1
                if record:
                    workers[r, jj, k] = w
                nkey[k] = t + draws[r, jj, k]
                nid[k] = w
            _sort_by_key_id(nkey[:K], nid[:K], okey, oid)
            _merge_pushers(skey, sid, nkey, nid, okey, oid, K)
            skey, okey = okey, skey
            sid, oid = oid, sid
        for i in range(m):
            finish[r, sid[i]] = skey[i]


@kernel
def previous_pushes(g0: int, w: np.ndarray, last_push: np.ndarray, prev: np.ndarray) -> None:
    """The merged stream (async, k-batch-async): push g0 + i is by worker ``w[i]``; ``prev[i]``
    is that worker's previous push (``last_push[w]`` before it, −1 for a first), and
    ``last_push`` is updated."""
    for i in range(w.size):
        wi = w[i]
        prev[i] = last_push[wi]
        last_push[wi] = g0 + i


@kernel
def kbatch_sync_kth(draws: np.ndarray, m: int, K: int, out: np.ndarray) -> None:
    """k-batch-sync: the K-th point of m superposed renewal processes started at 0, per row.

    Process (DESIGN §2), in event order: row r's first m draws are the workers' first jobs; the
    earliest finisher restarts on the same parameters at its finish time t and finishes again
    at t + the next draw, K − 1 times; the K-th finish is ``out[r]``.  Every draw is an
    independent job duration, so which worker takes which draw does not change the law, and
    exactly m + K − 1 draws per iteration suffice (``draws`` is (n, m + K − 1)).  The finish
    times are kept in a binary min-heap; among equal times the one popped does not change the
    multiset of times, so no tie rule is needed.
    """
    n = draws.shape[0]
    heap = np.full(2 * m + 2, np.inf)  # +inf beyond m: a missing child never wins
    for r in range(n):
        for i in range(m):  # (a loop, not heap[:m] = draws[r, :m]: 2 s less to compile)
            heap[i] = draws[r, i]
        for i in range(m // 2 - 1, -1, -1):
            _sift_down(heap, m, i, heap[i])
        for j in range(K - 1):
            _sift_down(heap, m, 0, heap[0] + draws[r, m + j])
        out[r] = heap[0]


@kernel
def _sift_down(heap: np.ndarray, m: int, i: int, x: float) -> None:
    """Put x at node i of the min-heap heap[:m] and sift it down (heap[m:] is +inf; the
    smaller child is chosen without a branch: a third faster on random keys than branching)."""
    c = 2 * i + 1
    while c < m:
        c += heap[c + 1] < heap[c]
        if heap[c] >= x:
            break
        heap[i] = heap[c]
        i = c
        c = 2 * i + 1
    heap[i] = x


# -- decentralised SGD on a graph (DESIGN §12.3; the engines in engines/graph.py) ------------------

__all__ += ["maxplus_steps", "gossip_staleness"]


@kernel
def maxplus_steps(t: np.ndarray, x: np.ndarray, indptr: np.ndarray, indices: np.ndarray, means: np.ndarray,
                  record: bool) -> None:
    """d-psgd: b iterations of the max-plus recursion for R independent replicas, in place.

    Process (DESIGN §12): node i starts iteration k + 1 once it and every neighbour finished
    iteration k, so ``t_i(k+1) = max_{j ∈ N(i) ∪ {i}} t_j(k) + X_i(k)``.  ``t`` (R, m) holds t(k)
    and becomes t(k + b); ``x`` (R, b, m) the draws X(k), …, X(k + b − 1), overwritten by the
    finish times t(k + 1), …, t(k + b) when ``record``; ``means`` (R, b) receives
    (1/m) Σ_i t_i(k + 1 + jj) (summed in node order).  Node i's neighbours are
    ``indices[indptr[i]:indptr[i + 1]]`` (itself excluded).
    """
    R, b, m = x.shape
    cur = np.empty(m)
    nxt = np.empty(m)
    for r in range(R):
        for i in range(m):
            cur[i] = t[r, i]
        for k in range(b):
            s = 0.0
            for i in range(m):
                v = cur[i]
                for p in range(indptr[i], indptr[i + 1]):
                    u = cur[indices[p]]
                    if u > v:
                        v = u
                v += x[r, k, i]
                nxt[i] = v
                s += v
                if record:
                    x[r, k, i] = v
            means[r, k] = s / m
            cur, nxt = nxt, cur
        for i in range(m):
            t[r, i] = cur[i]


@kernel
def gossip_staleness(nodes: np.ndarray, peers: np.ndarray, since: np.ndarray, out: np.ndarray) -> None:
    """ad-psgd: the staleness of consecutive gradients, in time order.

    Event e is node ``nodes[e]`` finishing a gradient and averaging with ``peers[e]`` (−1: none).
    Its staleness ``out[e]`` is the number of averagings a neighbour started with it since it
    read its model (right after its previous event); ``since`` (m,) carries those counts from one
    block of events to the next."""
    for e in range(nodes.size):
        i = nodes[e]
        out[e] = since[i]
        since[i] = 0
        j = peers[e]
        if j >= 0:
            since[j] += 1
