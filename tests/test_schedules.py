"""Adaptive schedules (DESIGN §13): the rules against hand-computed values, the specs and their
refusals, a scheduled run's update times on a replayed trace worked out by hand, and a ``steps``
schedule against an independent simulation of the same process written here."""

from __future__ import annotations

import math

import numpy as np
import pytest

from distsgd import make_scheme, parse_delay
from distsgd.clusters import make_cluster
from distsgd.error import Problem, simulate_error
from distsgd.error.general import simulate_problem
from distsgd.error.scheduled import run_scheduled
from distsgd.params import ParameterError
from distsgd.problems import bundled
from distsgd.schedules import adacomm_H, adasync_K, check_schedule, schedule

# -- the rules -------------------------------------------------------------------------------------


def test_adasync_rule_by_hand():
    # m = 8, K0 = 2: K0²/(m − K0) = 4/6.  g(K) = K²/(8 − K): 1/7, 4/6, 9/5, 16/4, 25/3, 36/2, 49/1.
    # r = 1: target 0.667 → K = 2; r = 0.25: 2.667, between g(3) = 1.8 and g(4) = 4, nearer 1.8 → 3;
    # r = 0.1: 6.667, between 4 and 8.333, nearer 8.333 → 5; r = 0.01: 66.7 > 49 → 7; r = 0 → m;
    # r = 2 (the loss rose): 0.333, between 1/7 and 4/6, nearer 4/6 (0.333 vs 0.190) → 1? no:
    # |0.143 − 0.333| = 0.190 < |0.667 − 0.333| = 0.333 → 1.
    assert adasync_K([1.0, 0.25, 0.1, 0.01, 0.0, 2.0], 2, 8).tolist() == [2, 3, 5, 7, 8, 1]
    assert adasync_K([1.0, 0.01], 8, 8).tolist() == [8, 8]  # K0 = m stays m


def test_adacomm_rule_by_hand():
    # ⌈√r · H0⌉ with H0 = 8: r = 1 → 8, 0.25 → 4, 0.3 → ⌈4.38⌉ = 5, 0.001 → ⌈0.25⌉ = 1, 4 → 16
    assert adacomm_H([1.0, 0.25, 0.3, 0.001, 4.0], 8).tolist() == [8, 4, 5, 1, 16]


def test_specs_written_one_way():
    assert schedule(" AdaSync( K0 = 3 , period=2.50 ) ").spec == "adasync(K0=3, period=2.5)"
    s = schedule("steps(0:2, 50:4, 100.5:8)", "H")
    assert (s.parameter, s.start, s.spec) == ("H", 2, "steps(0:2, 50:4, 100.5:8)")
    assert s.checkpoints(100.0).tolist() == [50.0]
    assert schedule("adacomm(H0=8, period=10)").checkpoints(35.0).tolist() == [10.0, 20.0, 30.0]
    assert schedule("adacomm(H0=8, period=10)").checkpoints(30.0).tolist() == [10.0, 20.0]


BAD = [  # (spec, scheme, the part named inside the message)
    ("adasync(K0=9, period=5)", "k-sync", "K0"),  # K0 outside [1, m]
    ("adasync(K0=0, period=5)", "k-sync", "K0"),
    ("adasync(K0=2, period=0)", "k-sync", "period"),  # non-positive period
    ("adasync(K0=2, period=-1)", "k-sync", "period"),
    ("steps(5:2, 9:3)", "k-sync", "first step must be at time 0"),
    ("steps(0:2, 9:3, 9:4)", "k-sync", "must increase"),
    ("steps(0:2, 9:30)", "k-sync", "steps"),  # a K above m
    ("steps(0:2, x)", "k-sync", "malformed step"),
    ("steps()", "k-sync", "at least one"),
    ("nope(K0=2)", "k-sync", "unknown schedule"),
    ("adacomm(H0=4, period=5)", "k-sync", "schedules H, not K"),
    ("adasync(K0=2, period=5)", "local-sgd", "schedules K, not H"),
    ("adasync(K0=2, period=5)", "async", "no K or H"),  # a scheme without a K or H to schedule
    ("adasync(K0=2, period=5)", "k-batch-async", "no K or H"),
    ("adasync(K0=2)", "k-sync", "period"),
    ("adasync(K0=2, period=5, H0=3)", "k-sync", "H0"),
    ("", "k-sync", "expected a schedule"),
]


@pytest.mark.parametrize("spec, name, part", BAD)
def test_bad_schedules_name_the_parameter(spec, name, part):
    kw = {"K": 2} if name in ("k-sync", "k-async", "k-batch-async") else {"H": 2} if name == "local-sgd" else {}
    with pytest.raises(ParameterError) as e:
        check_schedule(spec, make_scheme(name, 8, **kw))
    assert e.value.parameter == "schedule" and part in str(e.value)


def test_a_bad_schedule_is_refused_before_anything_runs():
    with pytest.raises(ParameterError, match="^schedule: .*K0"):
        simulate_error(make_scheme("k-sync", 4, K=2), parse_delay("exp(rate=1)"), Problem(), 10.0,
                       schedule="adasync(K0=5, period=1)")


# -- update times worked out by hand ----------------------------------------------------------------

#: a replayed trace: worker 0 takes 1, 2, 3, … and worker 1 takes 10, 20, 30, … in its j-th mini-batch
TRACE = np.array([np.arange(1.0, 9.0), 10 * np.arange(1.0, 9.0)])


def _times(scheme, spec, horizon=100.0):
    problem = Problem(dim=2).gradient_problem()
    s, = [spec]
    sched = check_schedule(s, scheme)
    grid = np.linspace(0, horizon, 5)
    p = run_scheduled(scheme, sched, make_cluster(trace=TRACE), problem, 0.05, 1, grid, 2,
                      np.random.default_rng(0), 10_000, math.inf)
    n = int(p.counts[0])
    return p.times[0, :n].tolist(), p.values[0, :n].tolist()


def test_k_sync_schedule_changes_at_the_next_iteration():
    # K = 1 until t = 5: iterations take min(j+1, 10(j+1)) = 1, 2, 3 → ends 1, 3, 6; the one from 3
    # was in progress at 5 and keeps K = 1; from 6 on K = 2: max = 40, 50 → 46, 96, 156 (> 100).
    # A change in the middle of the iteration from 3 would end it at 3 + 30 = 33; restarting the
    # job queues at the checkpoint would give 6 + 10 = 16.
    t, v = _times(make_scheme("k-sync", 2, K=1), "steps(0:1, 5:2)")
    assert t == [1.0, 3.0, 6.0, 46.0, 96.0, 156.0]
    assert v == [1, 1, 1, 2, 2, 2]


def test_local_sgd_schedule_takes_h_jobs_a_round():
    # H = 2 first: round 0 takes jobs 0, 1: max(1 + 2, 10 + 20) = 30, in progress at the checkpoint
    # t = 4; then H = 1: max(3, 30) = 30 → 60, then 40 → 100, 50 → 150.  Taking one job a round
    # instead of H would give 30 + 20 = 50 next.
    t, v = _times(make_scheme("local-sgd", 2, H=2), "steps(0:2, 4:1)")
    assert t == [30.0, 60.0, 100.0, 150.0]
    assert v == [2, 1, 1, 1]


def test_k_async_schedule_changes_at_the_next_update():
    # K = 1: worker 0 pushes at 1, 3 (1 + 2) and 6 (3 + 3); the update at 6 was collecting at the
    # checkpoint t = 5 and keeps K = 1.  Then K = 2: worker 0 (6 + 4 = 10) and worker 1 (its first
    # job, 10) push at 10, tie broken by id; then 15 and 30 → 30; 36 and 60 → 60; 67 and 100 → 100;
    # 75 and 150 → 150.  Worker 1's first gradient was computed on version 0 and used by update 3.
    scheme = make_scheme("k-async", 2, K=1)
    sched = check_schedule("steps(0:1, 5:2)", scheme)
    p = run_scheduled(scheme, sched, make_cluster(trace=TRACE), Problem(dim=2).gradient_problem(), 0.05, 1,
                      np.linspace(0, 100.0, 5), 2, np.random.default_rng(0), 10_000, math.inf)
    n = int(p.counts[0])
    assert p.times[0, :n].tolist() == [1.0, 3.0, 6.0, 10.0, 30.0, 60.0, 100.0, 150.0]
    assert p.values[0, :n].tolist() == [1, 1, 1, 2, 2, 2, 2, 2]
    assert p.workers is not None and p.stale is not None
    assert p.workers[0, 3].tolist() == [0, 1] and p.stale[0, 3].tolist() == [0, 3]
    assert p.workers[0, 4].tolist() == [0, 1]  # in push order: worker 0 at 15, worker 1 at 30
    assert p.workers[0, 0].tolist() == [0, -1]  # K = 1: one pusher, the rest padding


# -- the process in law -----------------------------------------------------------------------------


def _independent(R, m, steps, horizon, grid, eta, h, sd, w0, rng):
    """k-sync on the quadratic with K from a step schedule, one replica at a time: an iteration
    that starts at s uses the value of the last step time ≤ s (a start exactly at a step time keeps
    the earlier value, as the library's does; it has probability 0 here)."""
    out = np.empty((R, grid.size))
    for r in range(R):
        t, w = 0.0, w0.copy()
        f = [(0.0, 0.5 * (h * w * w).sum())]
        while t <= horizon:
            K = [v for at, v in steps if at < t or at == 0][-1]
            t += np.sort(rng.exponential(1.0, m))[K - 1]
            w = w - eta * (h * w + rng.normal(0.0, sd / math.sqrt(K), w.size))
            f.append((t, 0.5 * (h * w * w).sum()))
        times = np.array([a for a, _ in f])
        vals = np.array([b for _, b in f])
        out[r] = vals[np.searchsorted(times, grid, side="right") - 1]
    return out


def test_steps_schedule_matches_an_independent_simulation():
    m, steps, horizon = 4, [(0.0, 1), (3.0, 4)], 8.0
    problem = Problem(eta=0.2, L=2.0, mu=0.5, sigma2=2.0, dim=2, f0=1.0)
    grid = np.linspace(0.0, horizon, 9)
    R = 1500
    lib = simulate_error(make_scheme("k-sync", m, K=1), parse_delay("exp(rate=1)"), problem, horizon,
                         points=grid.size, replicas=R, seed=3, schedule="steps(0:1, 3:4)", keep_errors=True)
    ref = _independent(R, m, steps, horizon, grid, problem.eta, problem.h, math.sqrt(problem.sigma2 / problem.dim),
                       problem.w0, np.random.default_rng(4))
    assert lib.errors is not None
    se = np.sqrt(lib.errors.var(axis=0, ddof=1) / R + ref.var(axis=0, ddof=1) / R)
    z = np.abs(lib.mean[1:] - ref.mean(axis=0)[1:]) / se[1:]
    assert z.max() < 4.0, z  # 8 comparisons at 4 standard errors
    # K rises from 1 to 4 at t = 3: on the grid, the value in force is 1 at t = 0 and 4 at the end
    rec = lib.schedule
    assert rec is not None and rec.checkpoints.tolist() == [3.0] and rec.value.tolist() == [4.0]
    assert rec.grid_value[0][0] == 1.0 and rec.grid_value[0][-1] == 4.0


def _same_in_law(scheme, delay, problem, time, replicas, spec):
    """The fixed run (seed 5) and the run with the schedule ``spec`` (seed 6), after checking that
    their mean errors agree on the grid within 4 standard errors of the difference."""
    a = simulate_error(scheme, delay, problem, time, points=7, replicas=replicas, seed=5, keep_errors=True)
    b = simulate_error(scheme, delay, problem, time, points=7, replicas=replicas, seed=6, keep_errors=True,
                       schedule=spec)
    assert a.errors is not None and b.errors is not None
    se = np.sqrt(a.errors.var(axis=0, ddof=1) / replicas + b.errors.var(axis=0, ddof=1) / replicas)
    assert (np.abs(a.mean - b.mean)[1:] / se[1:]).max() < 4.0
    return a, b


def test_a_one_step_schedule_is_the_fixed_scheme():
    # steps(0:3) is k-sync with K = 3 throughout: the scheduled path and the fixed engines agree
    scheme, delay, problem = make_scheme("k-sync", 6, K=3), parse_delay("pareto(alpha=3, xm=1)"), Problem(eta=0.1)
    _same_in_law(scheme, delay, problem, 30.0, 800, "steps(0:3)")


def test_adasync_on_a_real_problem_raises_k_as_the_loss_falls():
    pb = bundled("breast_cancer", 1e-3, 0.25, 0)
    sim = simulate_problem(make_scheme("k-sync", 8, K=1), parse_delay("exp(rate=1)"), pb, 0.5, 4, 30.0, points=11,
                           replicas=20, seed=0, schedule="adasync(K0=1, period=5)")
    rec = sim.schedule
    assert rec is not None and rec.checkpoints.tolist() == [5.0, 10.0, 15.0, 20.0, 25.0]
    assert (np.diff(rec.loss_ratio) < 0.05).all() and rec.loss_ratio[-1] < 0.5  # the loss falls …
    assert rec.value[-1] > rec.value[0] >= 1  # … and K grows with it
    assert set(sim.metrics) >= {"test_accuracy"} and sim.mean[-1] < sim.mean[0]


# -- the command line ---------------------------------------------------------------------------------

QUAD = ["--delay", "exp(rate=1)", "--eta", "0.05", "--b", "1", "--points", "5", "--replicas", "20",
        "--L", "2", "--mu", "0.5", "--sigma2", "4", "--f0", "1", "--dim", "4", "--seed", "1"]


def _cli(capsys, *args):
    from distsgd.cli import main
    try:
        code = main(["error", *args])
    except SystemExit as exc:
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_json_schedule_object(capsys):
    import json
    code, out, err = _cli(capsys, "--scheme", "k-sync", "--m", "8", "--K", "1", "--time", "40", *QUAD, "--json",
                          "--K-schedule", "adasync(K0=2, period=10)")
    assert code == 0, err
    d = json.loads(out)["schedule"]
    assert d["spec"] == "adasync(K0=2, period=10)" and d["parameter"] == "K"
    assert d["checkpoints"] == [10.0, 20.0, 30.0] and len(d["value"]) == len(d["loss_ratio"]) == 3
    assert all(1 <= v <= 8 for v in d["value"]) and all(0 < r < 1 for r in d["loss_ratio"])
    assert json.loads(out)["bound_kind"] == "unavailable" and json.loads(out)["exact_model"] is None


@pytest.mark.parametrize("args, part", [
    (["--scheme", "k-sync", "--m", "8", "--K", "2", "--K-schedule", "adasync(K0=9, period=10)"], "K0"),
    (["--scheme", "k-sync", "--m", "8", "--K", "2", "--K-schedule", "steps(0:2)", "--H-schedule", "steps(0:2)"],
     "not both"),
    (["--scheme", "local-sgd", "--m", "8", "--H", "2", "--K-schedule", "steps(0:2)"], "schedules K, not H"),
    (["--scheme", "sync", "--m", "8", "--K-schedule", "steps(0:2)"], "no K or H"),
])
def test_cli_bad_schedule_exits_2_naming_it(capsys, args, part):
    code, out, err = _cli(capsys, *args, "--time", "10", *QUAD)
    assert code == 2 and "schedule:" in err and part in err and "Traceback" not in err and out == ""


# -- sweeps -------------------------------------------------------------------------------------------

SWEEP = """
seed = 2
[base]
delay = "exp(rate=1)"
m = 6
K = 1
H = 2
[grid]
scheme = ["k-sync", "local-sgd", "async"]
schedule = ["none", "adasync(K0=2, period=5)", "AdaComm(H0=4,period=5)"]
[compute]
runtime = false
[compute.error]
eta = 0.1
b = 1
time = 20.0
points = 5
replicas = 10
eps = 0.05
L = 2.0
mu = 0.5
sigma2 = 1.0
f0 = 1.0
dim = 2
"""


def test_schedules_as_sweep_values(tmp_path):
    import distsgd
    path = tmp_path / "grid.toml"
    path.write_text(SWEEP, encoding="utf-8")
    df = distsgd.sweep(path, local_workers=0)
    assert len(df) == 3 + 3 + 1  # async takes no schedule: one point, the key left empty
    df = df.astype(object).where(df.notna(), None)
    rows = {(r.scheme, r.schedule): r for r in df.itertuples()}
    assert rows[("async", None)].error is None
    fixed, ada = rows[("k-sync", "none")], rows[("k-sync", "adasync(K0=2, period=5)")]
    assert fixed.error is None and fixed.final_schedule_value is None and fixed.K == 1
    assert ada.error is None and 1 <= ada.final_schedule_value <= 6 and ada.K == 2  # K says where it started
    assert "schedules H, not K" in rows[("k-sync", "adacomm(H0=4, period=5)")].error  # a row saying why
    assert rows[("local-sgd", "adacomm(H0=4, period=5)")].error is None
    assert "schedules K, not H" in rows[("local-sgd", "adasync(K0=2, period=5)")].error


def test_a_one_step_k_async_schedule_is_the_fixed_k_async():
    # steps(0:2) on k-async: the scheduled stepper and SGD against the fixed engines and kernels, in
    # law: the error on the grid and the staleness of the gradients
    scheme, delay, problem = make_scheme("k-async", 6, K=2), parse_delay("exp(rate=1)"), Problem(eta=0.1)
    a, b = _same_in_law(scheme, delay, problem, 30.0, 600, "steps(0:2)")
    # mean staleness of k-async with m = 6, K = 2 is (m − K)/K = 2 per gradient in the long run
    assert a.staleness_mean is not None and b.staleness_mean is not None
    assert abs(b.staleness_mean - a.staleness_mean) < 0.1 and abs(b.fresh_fraction - a.fresh_fraction) < 0.02
    assert 1.7 < b.staleness_mean < 2.0  # (the first updates' gradients are fresher: the run starts idle)


def test_a_one_step_h_schedule_is_the_fixed_local_sgd():
    # steps(0:4) on local SGD: the scheduled round (sampled exactly on the model problem) and the fixed engines agree
    scheme, delay = make_scheme("local-sgd", 6, H=4, comm_delay=2.0), parse_delay("exp(rate=1)")
    problem = Problem(eta=0.1)
    _same_in_law(scheme, delay, problem, 40.0, 800, "steps(0:4)")


def test_a_schedule_that_keeps_k_on_a_cluster_is_the_fixed_run():
    # k-sync on Markov slowdowns, with checkpoints that leave K = 3: the job queues continued across
    # the checkpoints against the fixed cluster engine, in law
    scheme = make_scheme("k-sync", 6, K=3)
    cluster = make_cluster(m=6, delay="exp(rate=1)", slow_fraction=0.3, persistence=0.9, slowdown=6.0)
    problem = Problem(eta=0.1)
    _same_in_law(scheme, cluster, problem, 30.0, 800, "steps(0:3, 5:3, 10:3, 20:3)")
