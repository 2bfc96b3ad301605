"""What the library says besides its refusals, as templates of :data:`distsgd.reasons.REASONS`
(merged into that one table): the warnings of a Monte Carlo run, why a bound is not drawn, how a
law was fitted, and how an analytic result was obtained (an ``Estimate``'s method, a
:class:`~distsgd.reasons.Text`).  Each is English filled from its fields by ``str.format``; the
dashboard translates the template (``locales/zh/LC_MESSAGES/reasons.po``) and fills it the same way.
"""

from __future__ import annotations

__all__ = ["TEXTS"]

TEXTS: dict[str, str] = {
    # -- warnings of a Monte Carlo run, not refusals (distsgd.montecarlo: RuntimeSample.note_parts) ----
    "mc_power": "tail index α = {alpha}",
    "mc_power_jobs": "tail index α = {alpha}, {jobs} jobs must all be long: {jobs}·α = {product}",
    "mc_mean_infinite_renewal": "E[X] is infinite, and so is the long-run time per update ({power} ≤ 1): the "
                                "simulated mean does not converge and the interval is meaningless",
    "mc_mean_infinite": "E[T] is infinite ({power} ≤ 1): the simulated mean does not converge and the interval "
                        "is meaningless",
    "mc_variance_infinite": "{law} is infinite ({power} ≤ 2): the simulated mean converges slowly and the "
                            "confidence interval is unreliable (heavy tail)",
    "mc_variable": "the delay law is very variable (Var[X]/E[X]² = {cv2})",
    "mc_short_warmup": "; the run starts with every worker on a fresh job, and a law this variable needs more "
                       "than the {pushes} warm-up pushes per worker to forget it, so the simulated runtime and "
                       "staleness may be biased (the long-run mean staleness is {staleness})",
    # -- why no bound is drawn (distsgd.error.bounds: BoundCurve.why, TargetTime.why) ----------------
    "bound_local_sgd": "no bound is drawn for local SGD (Dutta et al.'s bounds are for a parameter server); on "
                       "the model problem its exact curve is drawn instead",
    "bound_graph_dpsgd": "Dutta et al.'s bounds are for a parameter server, not a graph; on the model problem the "
                         "exact d-psgd curve (DESIGN §12.4) is drawn instead",
    "bound_graph_adpsgd": "Dutta et al.'s bounds are for a parameter server, not a graph; ad-psgd has no exact "
                          "curve either",
    "bound_eta_fresh": "the bound needs η ≤ 1/L = {limit:.4g} (η = {eta:g})",
    "bound_async_needs": "the asynchronous bound needs {missing}",
    "bound_gamma_above_1": "γ = {gamma:.3g} > 1: the bound's assumption on stale gradients fails",
    "bound_eta_async": "the asynchronous bound needs η ≤ 1/(2L(1/K+1)) = {limit:.4g} (η = {eta:g})",
    "bound_no_contraction": "γ' = 1 − γ + p₀/2 = {gp:.3g} ≤ 0: no contraction",
    "bound_eta_mu_gp": "ημγ' = {x:.3g} ≥ 1",
    "bound_runtime_unknown": "E[T] is infinite or unknown",
    "bound_needs_constants": "the bound needs L, μ and a bound on σ² (give them to from_functions)",
    "bound_no_constants": "the problem has no constants for it",
    "bound_schedule": "the bound and the exact curve are for a fixed K or H; a schedule changes it during the run",
    # -- how a law was fitted to measured times (distsgd.fit: Fit.fixed_parts) ------------------------
    "fit_loc_zero": "loc = 0",
    "fit_exp_shift": "shift = min(x), the MLE (biased up by 1/(nλ) on average; not corrected)",
    "fit_pareto_shift": "shift and x_m by scipy's MLE (shift + x_m = min)",
    "fit_xm_min": "x_m = min(x), the MLE",
    "fit_shift_interior": "shift = scipy's MLE (the interior maximum of the likelihood)",
    "fit_shift_scipy": "shift = scipy's MLE",
    "fit_shift_rule": "shift = min − first gap (no interior maximum: the likelihood grows without bound as the "
                      "shift → min)",
    "fit_truncated_shift": "truncated at shift = min(x) (the MLE)",
    "fit_truncated_zero": "truncated at 0",
    "fit_truncnorm": "MLE by scipy.optimize (truncnorm.fit cannot tie a = −μ/σ)",
    "fit_normal_at_bound": "mean/std at its bound −30 (the likelihood rises towards an exponential)",
    "fit_uniform": "low = min(x), high = max(x), the MLE",
    "fit_subsample": "fitted on a subsample of {size} of the {n} times (seed {seed}), log-likelihood and KS on all",
    # -- how an analytic result was obtained (Estimate.method as a Text; the runtime tables) -------
    "method_exp_os": "exponential order statistic Δ + (H_n − H_{{n−k}})/λ",
    "method_pareto_os": "Pareto order statistic x_m Γ(n+1)Γ(n−k+1−1/α)/(Γ(n−k+1)Γ(n+1−1/α))",
    "method_pareto_os_infinite": "Pareto order statistic: infinite since α(n−k+1) = {x:g} ≤ 1",
    "method_uniform_os": "uniform order statistic a + (b − a)k/(n+1)",
    "method_empirical_os": "empirical order statistic (finite sum over the trace)",
    "method_quadrature_os": "quadrature of I_{{1-F}}(n-k+1,k)",
    "method_quadrature_os_infinite": "quadrature of I_{{1-F}}(n-k+1,k): the tail integral diverges",
    "method_renewal_nodes": "elementary renewal theorem E[X]/m (no node waits)",
    "method_renewal_reward_nodes": "1 / Σ_i 1/E[X_i] (renewal–reward, no node waits)",
    "method_mean_infinite_m": "{scheme}: E[X]/m with E[X] = ∞",
    "method_nodes_infinite": "{scheme}: every node has E[X_i] = ∞",
    "method_renewal": "elementary renewal theorem {what}",
    "method_renewal_infinite": "{scheme}: {what} with E[X] = ∞",
    "method_workers_infinite": "{scheme}: every worker has E[X_i] = ∞",
    "method_renewal_reward": "{K} / Σ_i 1/E[X_i] (renewal–reward, DESIGN §7)",
    "method_k1_async": "{method} (K = 1 is async)",
    "method_km_sync": "{method} (K = m: everyone waits, as sync)",
    "method_memoryless_kasync": "memoryless: (H_m − H_{{m−K}})/λ (Dutta et al. 2018)",
    "method_nlu_bound": "E[X_{{K:m}}] bounds k-async for new-longer-than-used delays (Dutta et al. 2018); {method}",
    "method_kasync_no_form": "k-async: no closed form, and E[X_{{K:m}}] is an upper bound only for "
                             "new-longer-than-used delays, which this one is not",
    "method_kasync_dependent": "k-async on a {kind} cluster whose mini-batches are not independent: no bound (DESIGN "
                               "§7)",
    "method_kasync_markov": "k-async under random slowdowns: one mini-batch's law is the mixture (1 − π)F(x) + "
                            "πF(x/s), which is not NLU, so E[X_{{K:m}}] is no bound (DESIGN §7)",
    "method_kasync_group_not_nlu": "k-async: E[X_{{K:m}}] bounds it only when every worker's law is "
                                   "new-longer-than-used, and one group's is not",
    "method_cluster_nlu_bound": "E[X_{{K:m}}] of the independent workers bounds k-async when every law is "
                                "new-longer-than-used (DESIGN §7); {method}",
    "method_replay_kth": "replay: mean over the steps of the K-th smallest time (DESIGN §7)",
    "method_replay_largest": "replay: mean over the steps of the largest time (DESIGN §7)",
    "method_poisson_superposition": "Poisson superposition K/(mλ)",
    "method_constant_kbatch": "constant delay: ⌈K/m⌉·x",
    "method_kbatch_one_worker_infinite": "k-batch-sync with m = 1: K·E[X] with E[X] = ∞",
    "method_kbatch_one_worker": "one worker: sum of K delays K·E[X]",
    "method_kbatch_infinite": "k-batch-sync: infinite since m·α = {x:g} ≤ 1 (all m workers can be stuck on long jobs)",
    "method_poisson_superposition_groups": "Poisson superposition K/Σ_i λ_i",
    "method_replay_local": "replay: mean over one cycle of rounds of (max_i Σ_h t + D)/H (DESIGN §7)",
    "method_per_local_step": "{method}; per local step (E[max S] + D)/H",
    "method_plus_d_h1": "{method} + D (H = 1)",
    "method_h1": "{method} (H = 1)",
    "method_local_infinite": "local SGD: E[S] = ∞ since α = {alpha:g} ≤ 1",
    "method_constant_local": "constant delay: (H·x + D)/H",
    "method_local_one_worker": "one worker: (H·E[X] + D)/H",
    "method_per_step": "(E[max_i S_i] + D)/H, S_i a sum of H = {H} delays",
    "method_gamma_quadrature": "HΔ + E[max of m Gamma(H, λ)] by quadrature of 1 − G(x)^m; {per_step}",
    "method_local_bound": "local SGD: E[X_{{m:m}}] + D/H bounds the runtime per step (max of sums ≤ sum of maxima; "
                          "lower bound {lower:.6g}); {method}",
    "method_then": "{method}; {then}",
    "method_cluster_none": "{scheme} on a {kind} cluster: no analytic result in this version",
    "method_graph_no_upper": "d-psgd cycle time on {what}: no finite upper bound (E[X_{{m:m}}] and the moment bound "
                             "are both infinite or unknown)",
    "method_this_law": "this law",
    "method_this_cluster": "this cluster",
    "method_graph_upper": "upper bound on the d-psgd cycle time: {bound}",
    "method_graph_upper_tighter": "upper bound on the d-psgd cycle time: {bound} (tighter than {other})",
    "method_graph_infinite": "d-psgd: E[X] = ∞, and γ ≥ E[X]",
    "method_graph_lower_degree": "lower bound E[X_{sub}] (d = {d}, the smallest degree: the walk that follows "
                                 "the slowest neighbour)",
    "method_graph_lower_mean": "lower bound E[X] (each node's own mini-batches)",
    "method_graph_sync": "E[X_{sub}], the complete graph (sync)",
    "method_graph_mgf": "inf_θ [ln(Δ+1) + ln E e^{{θX}}]/θ with Δ = {D} (θ = {theta:.4g})",
    "method_graph_cluster_infinite": "d-psgd: some node has E[X_i] = ∞, and γ ≥ max_i E[X_i]",
    "method_graph_lower_top": "lower bound max_i E[X_i] (each node's own mini-batches)",
    "method_graph_cluster_sync": "sync's E[max_i X_i] on the cluster (the complete graph)",
    "method_graph_cluster_mgf": "inf_θ [ln(Δ+1) + max_i ln E e^{{θX_i}}]/θ with Δ = {D} (θ = {theta:.4g})",
    "method_graph_chain": "Markov chain of the iteration-count gaps ({states} states, {what}): γ = m / Σ_i λ_i P(i "
                          "busy)",
    "method_rate_every_node": "rate λ at every node",
    "method_rate_each_node": "rate λ_i at node i",
    "method_graph_complete": "complete graph = sync: E[X_{sub}]",
    "method_graph_chain_too_big": "{method}; the exact chain has more than {max_states} states",
    "method_graph_cluster_complete": "complete graph = sync on the cluster: E[max_i X_i]",
    "method_tail_too_heavy": "the tail is too heavy to integrate",
    "method_on_lattice": "the trace lies on the lattice",
    "method_midpoint": "extrapolation failed, midpoint of the lattice bracket",
    "method_maxsum_bracket": "max of m sums of H delays: the bracket H·L ≤ E[max S] ≤ H·E[X_{{m:m}}] is tighter than "
                             "1e-9 relative",
    "method_maxsum_underflow": "max of m sums of H delays: the lattice step underflows next to the lower end of X",
    "method_maxsum_lattice": "max of m sums of H delays: FFT convolution power on lattices, Richardson",
    "method_maxsum_budget": "local SGD with m = {m}, H = {H}: the convolution exceeds the work budget",
    "method_maxsum_asymptote": "beyond x = {x:.4g} the subexponential asymptote P(S > x) ≈ H·P(X > x − (H−1)E[X]) is "
                               "used",
    "method_wald": "(K+m)E[X]/m (Wald)",
    "method_kth_pathwise": "E[X_{{K:m}}] (pathwise)",
    "method_cmax_pathwise": "⌈K/m⌉·E[X_{{m:m}}] (pathwise)",
    "method_kbatch_no_bound": "k-batch-sync: {why}, and no finite bound is known",
    "method_kbatch_upper": "k-batch-sync: upper bound {bound}; {why}",
    "method_kbatch_bracket": "k-batch-sync: the bracket ⌈K/m⌉·L ≤ E[T] ≤ {bound} is tighter than 1e-9 relative",
    "method_underflow": "the lattice step underflows next to the lower end of X",
    "method_renewal_budget_mk": "the renewal computation for m = {m}, K = {K} exceeds the work budget",
    "method_renewal_budget": "the renewal computation exceeds the work budget",
    "method_superposition_lattice": "renewal superposition ∫P(N(t)<K)dt (lattice FFT convolution, Richardson)",
    "method_power_tail": "power-law tail extrapolated beyond the grid",
    "method_tail_left_out": "the tail beyond t = {t:.3g} is too heavy to extrapolate and is left out",
    "method_kth_infinite": "X_{{K:m}} needs m − K + 1 = {n} slow workers; their tail indices sum to {alpha:g} ≤ 1",
    "method_pb_integral_budget": "the Poisson-binomial integral needs about {terms:.3g} binomial terms, over the "
                                 "{work:.3g} budget",
    "method_pb_quadrature": "Poisson-binomial quadrature of P(#{{i: X_i ≤ x}} < K) over {groups} groups of "
                            "independent workers",
    "method_pb_quadrature_one": "Poisson-binomial quadrature of P(#{{i: X_i ≤ x}} < K) over {groups} group of "
                                "independent workers",
    "method_pb_sum_budget": "the Poisson-binomial sum needs about {terms:.3g} binomial terms, over the {work:.3g} "
                            "budget",
    "method_pb_sum": "Poisson-binomial sum of P(#{{i: X_i ≤ x}} < K) over the {atoms} atoms of {groups} groups of "
                     "independent workers (exact: constant between atoms)",
    "method_pb_sum_one": "Poisson-binomial sum of P(#{{i: X_i ≤ x}} < K) over the {atoms} atoms of {groups} group of "
                         "independent workers (exact: constant between atoms)",
    "method_groups_superposition": "renewal superposition ∫P(N(t)<K)dt, one renewal function per group (lattice FFT, "
                                   "Richardson)",
    "method_groups_kbatch_infinite": "k-batch-sync on groups: a group's E[X] is infinite (the lattice needs a light "
                                     "tail)",
    "method_kbatch_groups": "k-batch-sync on groups",
    "method_local_groups": "local SGD on groups",
    "method_groups_kbatch_heavy": "P(T > t) does not fall below 1e-13 within 64 times the renewal scale (a heavy "
                                  "tail): no value",
    "method_over_budget": "{what}: {method} exceeds the work budget",
    "method_what_heavy": "{what}: {heavy}",
    "method_groups_maxsum": "E[max_i S_i] = ∫(1 − Π_g G_g(x)^(n_g))dx, G_g the law of a sum of H = {H} (lattice FFT, "
                            "Richardson)",
    "method_groups_local_infinite": "local SGD on groups: a group's E[X] is infinite",
    "method_groups_local_heavy": "P(max S > x) does not fall below 1e-13 within the window (a heavy tail): no value",
}
