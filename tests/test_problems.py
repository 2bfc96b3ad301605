"""Real problems (DESIGN §9, issue 23): logistic regression's optimum and constants against the
test's own computation, the mini-batch gradient's mean and variance by simulation, sparse rows
as dense ones, the data files' preparation and refusals, and SGD on a problem through the update
trace against the model problem's independent engine."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize
from scipy.special import logsumexp

from distsgd import ParameterError, make_scheme, parse_delay
from distsgd.error import LearningRate, Problem, simulate_error
from distsgd.error.general import linearised_floor, simulate_problem
from distsgd.problems import builtin, logistic, logreg, prepare
from tests.test_cli import cli

Z95 = 1.959963984540054


def _data(n: int, p: int, classes: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)) * rng.uniform(0.5, 2.0, size=p)
    y = rng.integers(classes, size=n)
    X[:, 0] += y  # some signal
    return X, y + 3  # labels that are not 0..C−1


def _own_objective(X: np.ndarray, y: np.ndarray, lam: float):
    """f, ∇f and the per-row gradients written here from DESIGN §9 (intercept appended)."""
    A = np.hstack([X, np.ones((len(X), 1))])
    labels = np.unique(y)
    n, p1 = A.shape
    if labels.size == 2:
        s = np.where(y == labels[1], 1.0, -1.0)

        def rows(w):  # ∇f_i(w), (n, d)
            z = A @ w
            return (-s / (1 + np.exp(s * z)))[:, None] * A + lam * w

        def f(w):
            return float(np.mean(np.logaddexp(0, -s * (A @ w))) + lam / 2 * w @ w)
        return f, lambda w: rows(w).mean(axis=0), rows, p1
    Y = (y[:, None] == labels[None, :]).astype(float)
    C = labels.size

    def rows_m(w):
        W = w.reshape(p1, C)
        Z = A @ W
        P = np.exp(Z - logsumexp(Z, axis=1, keepdims=True))
        return np.einsum("ip,ic->ipc", A, P - Y).reshape(n, -1) + lam * w

    def f_m(w):
        Z = A @ w.reshape(p1, C)
        return float(np.mean(logsumexp(Z, axis=1) - (Z * Y).sum(axis=1)) + lam / 2 * w @ w)
    return f_m, lambda w: rows_m(w).mean(axis=0), rows_m, p1 * C


@pytest.mark.parametrize("classes", [2, 4])
def test_optimum_and_constants_against_the_tests_own_computation(classes: int) -> None:
    X, y = _data(300, 5, classes, seed=classes)
    lam = 0.05
    pb = logistic(X, y, lam=lam)
    f, g, rows, d = _own_objective(X, y, lam)
    res = minimize(f, np.zeros(d), jac=g, method="L-BFGS-B", options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 5000})
    c = pb.constants
    assert c.f_star.kind == "exact" and c.f_star.gap <= 1e-10
    assert c.f_star.value == pytest.approx(f(res.x), abs=1e-9)
    assert f(res.x) >= c.f_star.value - c.f_star.gap - 1e-12  # f* is certified from below too
    assert pb.loss(np.zeros((1, d)))[0] == pytest.approx(f(np.zeros(d)), rel=1e-12)
    A = np.hstack([X, np.ones((len(X), 1))])
    gram = np.linalg.eigvalsh(A.T @ A)[-1] / len(X)
    assert c.L.value == pytest.approx(gram / (4 if classes == 2 else 2) + lam, rel=1e-10) and c.L.kind == "bound"
    assert c.mu.value == lam
    G = rows(pb.w_star)
    assert c.sigma2.value == pytest.approx(float((G**2).sum(axis=1).mean()), rel=1e-7)
    assert c.sigma2_bound.value == pytest.approx((A**2).sum(axis=1).mean() * (1 if classes == 2 else 2), rel=1e-12)
    assert c.F0.value == pytest.approx(f(np.zeros(d)) - f(res.x), abs=1e-9)
    # the full gradient is the mean of the per-row ones, anywhere
    w = np.random.default_rng(1).normal(size=d)
    np.testing.assert_allclose(pb.full_grad(w[None])[0], g(w), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("classes", [2, 3])
def test_the_mini_batch_gradient_is_unbiased_with_variance_sigma2_over_b(classes: int) -> None:
    X, y = _data(60, 3, classes, seed=10 + classes)
    pb = logistic(X, y, lam=0.1)
    _, g, rows, d = _own_objective(X, y, 0.1)
    w = np.random.default_rng(2).normal(size=d) * 0.3
    G = rows(w)
    var1 = float(((G - G.mean(axis=0)) ** 2).sum(axis=1).mean())  # σ²(w) of one row, exact
    R, b = 40_000, 4
    draws = pb.grad(np.tile(w, (R, 1)), np.random.default_rng(3), b)
    mean = draws.mean(axis=0)
    se = draws.std(axis=0, ddof=1) / math.sqrt(R)
    assert np.all(np.abs(mean - g(w)) <= 4.5 * se), "the mini-batch gradient is biased"
    sq = ((draws - g(w)) ** 2).sum(axis=1)  # its variance is σ²(w)/b
    assert abs(sq.mean() - var1 / b) <= 4.5 * sq.std(ddof=1) / math.sqrt(R)


@pytest.mark.parametrize("classes", [2, 3])
def test_sparse_rows_give_what_dense_rows_give(classes: int) -> None:
    X, y = _data(50, 6, classes, seed=20 + classes)
    X[np.abs(X) < 0.7] = 0.0
    dense, sparse = logistic(X, y, lam=0.1), logistic(sp.csr_matrix(X), y, lam=0.1)
    W = np.random.default_rng(4).normal(size=(5, dense.dim))
    np.testing.assert_allclose(sparse.loss(W), dense.loss(W), rtol=1e-12)
    np.testing.assert_allclose(sparse.grad(W, np.random.default_rng(5), 7), dense.grad(W, np.random.default_rng(5), 7),
                               rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(sparse.full_grad(W), dense.full_grad(W), rtol=1e-10, atol=1e-12)
    assert sparse.constants.f_star.value == pytest.approx(dense.constants.f_star.value, abs=1e-12)


def test_preparation_splits_stratified_and_standardises_with_the_training_statistics() -> None:
    X, y = _data(200, 4, 3, seed=30)
    X[:, 2] = 7.0  # a constant column: dropped, counted
    pb = prepare(X, y, lam=0.1, test_fraction=0.25, split_seed=5)
    assert pb.info["dropped_columns"] == 1 and pb.p1 == 4  # 3 features + intercept
    assert pb.info["n_train"] + pb.info["n_test"] == 200 and pb.info["n_test"] == 50
    feats = pb.X[:, :-1]
    np.testing.assert_allclose(feats.mean(axis=0), 0, atol=1e-12)
    np.testing.assert_allclose(feats.std(axis=0), 1, rtol=1e-12)
    counts = np.bincount(pb.y_test)
    assert np.all(np.abs(counts / 50 - np.bincount(pb.y) / 150) < 0.03)  # stratified
    assert prepare(X, y, lam=0.1, test_fraction=0.0).X_test is None


def test_bundled_sets_at_their_optimum() -> None:
    """λ = 1/n on the 25 % split (split seed 0): the accuracy the seed papers' setting reaches."""
    for name, n, low in (("breast_cancer", 426, 0.95), ("digits", 1347, 0.955)):
        pb = builtin(f"logreg:{name}", lam=1 / n)
        assert pb.n == n and pb.constants.f_star.kind == "exact"
        assert pb.metrics(pb.w_star[None])["test_accuracy"][0] >= low


# -- files and refusals ---------------------------------------------------------------------------

def test_a_csv_file_with_a_header_and_a_named_label(tmp_path) -> None:
    rows = ["a,label,b"] + [f"{i % 7},{'yes' if i % 3 else 'no'},{(i * 13) % 11}" for i in range(40)]
    path = tmp_path / "d.csv"
    path.write_text("\n".join(rows))
    pb = logreg(str(path), label="label", test_fraction=0.2)
    assert pb.classes == 2 and list(pb.labels) == ["no", "yes"] and pb.p1 == 3


@pytest.mark.parametrize("text, label, words", [
    ("a,b,y\n1,2,0\n1,x,1\n", None, ["d.csv", "row 3", "column b", "'x'"]),
    ("a,b,y\n1,2,0\n1,inf,1\n", None, ["row 3", "column b", "'inf'"]),
    ("a,,y\n1,2,0\n1,x,1\n", None, ["row 3", "column 2:", "'x'"]),  # a column without a name: its place
    ("a,y\n1,0\n2,0\n3,0\n", None, ["two classes"]),
    ("a,y\n1,0\n2,1\n", "z", ["no column named 'z'", "a, y"]),
])
def test_a_bad_csv_is_refused_naming_row_and_column(tmp_path, text: str, label: str | None, words: list[str]) -> None:
    path = tmp_path / "d.csv"
    path.write_text(text)
    with pytest.raises(ParameterError) as e:
        logreg(str(path), label=label, test_fraction=0.0)
    for w in words:
        assert w in str(e.value)


def test_libsvm_rows_stay_sparse_and_a_bad_token_names_its_line(tmp_path) -> None:
    good = "\n".join(f"{1 if i % 2 else -1} 1:{i % 5} 7:{(i * 3) % 4}.5" for i in range(40))
    (tmp_path / "d.svm").write_text(good)
    pb = logreg(str(tmp_path / "d.svm"), test_fraction=0.25)
    assert pb.sparse and pb.p1 == 3  # columns 1 and 7 (others constant zero: dropped) + intercept
    (tmp_path / "bad.svm").write_text(good + "\n1 2:3 5:abc\n")
    with pytest.raises(ParameterError, match=r"line 41: '5:abc'"):
        logreg(str(tmp_path / "bad.svm"))


def test_the_cli_refuses_quadratic_flags_on_a_real_problem_and_runs_one() -> None:
    base = ["error", "--scheme", "k-async", "--m", "4", "--K", "2", "--delay", "exp(rate=1)", "--eta", "0.1",
            "--b", "4", "--time", "20", "--points", "5", "--replicas", "8", "--seed", "3"]
    code, _, err = cli(*base, "--problem", "logreg:breast_cancer", "--sigma2", "1")
    assert code == 2 and "sigma2" in err and "quadratic" in err
    code, _, err = cli(*base, "--problem", "logreg:nothing-here.csv")
    assert code == 2 and "problem" in err
    code, out, err = cli(*base, "--problem", "logreg:breast_cancer", "--target-accuracy", "0.9", "--json")
    assert code == 0, err
    j = json.loads(out)
    assert set(j["problem"]["constants"]) == {"f_star", "L", "mu", "sigma2", "sigma2_bound", "F0"}
    assert j["problem"]["n_train"] == 426 and j["problem"]["n_test"] == 143 and j["problem"]["classes"] == 2
    assert j["floor"]["kind"] == "approximation"
    assert len(j["metrics"]["test_accuracy"]["mean"]) == 5
    assert j["time_to_target"]["test_accuracy"]["target"] == 0.9


def test_a_problem_function_with_the_wrong_shape_or_nan_is_named() -> None:
    class Bad:
        name, dim = "bad", 3
        constants = logistic(*_data(30, 2, 2, 1), lam=0.1).constants

        def __init__(self, broken: str) -> None:
            self.broken = broken

        def w0(self):
            return np.zeros(3)

        def loss(self, W):
            return np.full(W.shape[0], np.nan) if self.broken == "loss" else np.zeros(W.shape[0])

        def grad(self, W, rng, b):
            return np.zeros((W.shape[0], 2)) if self.broken == "grad" else np.zeros_like(W)

    for broken, words in (("loss", "loss returned a non-finite value"),
                          ("grad", re.escape("grad returned shape (1, 2)"))):
        with pytest.raises(ParameterError, match=words):
            simulate_problem(make_scheme("sync", 2), parse_delay("exp(rate=1)"), Bad(broken), 0.1, 1, 5.0, 3, 2, 0)


# -- SGD through the update trace -----------------------------------------------------------------

class _NoiselessQuadratic:
    """The model problem of DESIGN §3 with σ² = 0 as a problem of the protocol: the general engine
    must then give exactly what the model problem's own engine gives."""

    def __init__(self, q: Problem) -> None:
        self.q, self.name, self.dim = q, "quadratic", q.dim
        from distsgd.problems import Constant, Constants
        self.constants = Constants(*(Constant(v, "exact") for v in (0.0, q.L, q.mu, 0.0, 0.0, q.f0)))

    def w0(self):
        return self.q.w0

    def loss(self, W):
        return 0.5 * (W * W) @ self.q.h

    def grad(self, W, rng, b):
        return W * self.q.h


@pytest.mark.parametrize("scheme, rule", [
    (make_scheme("sync", 4), "constant"), (make_scheme("k-sync", 4, K=2), "constant"),
    (make_scheme("k-batch-sync", 4, K=6), "constant"), (make_scheme("local-sgd", 4, H=3), "constant"),
    (make_scheme("async", 4), "constant"), (make_scheme("k-async", 4, K=2), "constant"),
    (make_scheme("k-async", 4, K=2), "staleness"), (make_scheme("k-async", 4, K=3), "adaptive"),
    (make_scheme("k-batch-async", 4, K=3), "constant"),
])
def test_sgd_on_a_problem_follows_the_update_trace_as_the_model_problems_engine(scheme, rule: str) -> None:
    """Stale gradients at the stale model, reads before or after the update, local averaging: a
    gradient evaluated at the fresh model instead fails the asynchronous rows."""
    q = Problem(eta=0.3, L=2.0, mu=0.5, sigma2=0.0, b=1, f0=1.0, dim=4)
    delay = parse_delay("lognormal(mu=0, sigma=0.8)")
    lr = LearningRate(rule, C=0.05)
    ours = simulate_problem(scheme, delay, _NoiselessQuadratic(q), q.eta, 1, 6.0, 13, 6, 17, lr, keep_errors=True)
    theirs = simulate_error(scheme, delay, q, 6.0, 13, 6, 17, lr, keep_errors=True)
    np.testing.assert_allclose(ours.errors, theirs.errors, rtol=1e-9, atol=1e-15)
    if not scheme.fresh:
        assert ours.staleness_mean == theirs.staleness_mean and ours.staleness_mean > 0


def test_the_simulated_floor_on_breast_cancer_is_the_linearised_one() -> None:
    """Started at w*, sync SGD's stationary error is η·σ²*/(4bK) to within the approximation's
    accuracy (small η·L; DESIGN §9): the mean over the last half of the run, over replicas."""
    pb = builtin("logreg:breast_cancer", lam=1e-2)

    class AtOptimum:
        name, dim, constants = pb.name, pb.dim, pb.constants
        loss, grad = pb.loss, pb.grad

        def w0(self):
            return pb.w_star

    scheme, eta, b = make_scheme("sync", 2), 0.02, 1
    sim = simulate_problem(scheme, parse_delay("shifted-exp(rate=100, shift=1)"), AtOptimum(), eta, b, 3000.0, 61, 60,
                           5, keep_errors=True)
    late = sim.errors[:, 30:].mean(axis=1)  # per replica: independent
    floor = linearised_floor(scheme, pb, eta, b).value
    est, hw = late.mean(), Z95 * late.std(ddof=1) / math.sqrt(late.size)
    assert abs(est - floor) <= 0.25 * floor + hw, (est, hw, floor)


def test_the_loss_blocks_reductions_are_scipys_logsumexp_and_numpys_argmax() -> None:
    from distsgd.problems.logistic import _class_reductions
    rng = np.random.default_rng(6)
    Z = rng.normal(size=(7, 5, 4)) * 30
    Z[:3] = rng.integers(-1, 2, size=(3, 5, 4))  # whole-number scores: ties for the largest
    Z[3] = 0.0
    y = rng.integers(5, size=7)
    ell, right = _class_reductions(Z.copy(), y, first_max=True)
    picked = np.take_along_axis(Z, y[:, None, None], axis=1)[:, 0]
    np.testing.assert_allclose(ell, logsumexp(Z, axis=1) - picked, rtol=1e-14)
    np.testing.assert_array_equal(right, Z.argmax(axis=1) == y[:, None])
    assert not right[3].all() or y[3] == 0  # all tied: only class 0 is predicted
    np.testing.assert_array_equal(_class_reductions(Z.copy(), y)[0], ell)


# -- a user's own functions -------------------------------------------------------------------------

def _least_squares(n: int = 80, d: int = 3, seed: int = 40):
    """f(w) = (1/2n) Σ (a_iᵀw − y_i)², its exact minimiser by lstsq (the test's own truth)."""
    rng = np.random.default_rng(seed)
    A, y = rng.normal(size=(n, d)), rng.normal(size=n)

    def loss(W):
        return 0.5 * ((W @ A.T - y) ** 2).mean(axis=1)

    def grad(W, rng, b):
        idx = rng.integers(n, size=(W.shape[0], b))
        r = np.einsum("rbd,rd->rb", A[idx], W) - y[idx]
        return np.einsum("rb,rbd->rd", r, A[idx]) / b

    w_hat = np.linalg.lstsq(A, y, rcond=None)[0]
    return loss, grad, A, y, w_hat


def test_from_functions_finds_f_star_and_sigma2_and_labels_them_estimated() -> None:
    from distsgd.problems import from_functions
    loss, grad, A, y, w_hat = _least_squares()
    pb = from_functions(loss, grad, np.zeros(3), mu=float(np.linalg.eigvalsh(A.T @ A / len(y))[0]))
    c = pb.constants
    f_hat = float(loss(w_hat[None])[0])
    assert c.f_star.kind == "estimated" and c.f_star.value == pytest.approx(f_hat, abs=1e-8)
    per_row = (A @ w_hat - y)[:, None] * A  # ∇f_i(w*); their mean is 0
    assert c.sigma2.kind == "estimated"
    assert c.sigma2.value == pytest.approx(float((per_row**2).sum(axis=1).mean()), rel=0.08)  # 4096 draws
    assert c.L.kind == "unknown" and c.mu.kind == "given"
    curve_input = (make_scheme("sync", 2), parse_delay("exp(rate=1)"))
    from distsgd.records import problem_error_curve
    curve = problem_error_curve(*curve_input, pb, 0.1, 2, 5.0, 5, 10, 0)
    assert curve.bound is not None and curve.bound.kind == "unavailable" and "from_functions" in curve.bound.note
    assert curve.simulated.mean[0] == pytest.approx(float(loss(np.zeros((1, 3)))[0]) - c.f_star.value)


def test_from_functions_names_a_bad_function() -> None:
    from distsgd.problems import from_functions
    loss, grad, *_ = _least_squares()
    with pytest.raises(ParameterError, match="grad: must be a function"):
        from_functions(loss, 3, np.zeros(3))
    pb = from_functions(lambda W: np.zeros(W.shape[0] + 1), grad, np.zeros(3), f_star=0.0)
    with pytest.raises(ParameterError, match=re.escape("loss returned shape (2,), expected shape (1,)")):
        simulate_problem(make_scheme("sync", 2), parse_delay("exp(rate=1)"), pb, 0.1, 1, 5.0, 3, 2, 0)
    big = from_functions(loss, grad, np.zeros(500))
    with pytest.raises(ParameterError, match="f_star: give f_star or full_grad"):
        _ = big.constants


def test_a_long_run_reaches_the_test_accuracy_of_the_optimum() -> None:
    """λ = 1/n on the bundled sets (issue 23: ≈ 0.96 on both with split seed 0): sync SGD with
    b = 32 reaches the optimum's test accuracy to within 0.01 (the last grid time, over replicas)."""
    for name, n in (("breast_cancer", 426), ("digits", 1347)):
        pb = builtin(f"logreg:{name}", lam=1 / n)
        best = pb.metrics(pb.w_star[None])["test_accuracy"][0]
        sim = simulate_problem(make_scheme("sync", 4), parse_delay("exp(rate=1)"), pb, 0.5, 32, 300.0, 7, 20, 3)
        assert abs(sim.metrics["test_accuracy"][0][-1] - best) <= 0.01, (name, best, sim.metrics["test_accuracy"][0])


def test_the_caps_are_named(tmp_path, monkeypatch) -> None:
    from distsgd import limits
    path = tmp_path / "wide.csv"
    path.write_text("\n".join(",".join(str((i * j) % 7) for j in range(6)) for i in range(30)))
    monkeypatch.setattr(limits, "PROBLEM_MAX_ROWS", 20)
    with pytest.raises(ParameterError, match=r"wide.csv: 30 rows: more than the 20"):
        logreg(str(path))
    monkeypatch.setattr(limits, "PROBLEM_MAX_ROWS", 200_000)
    monkeypatch.setattr(limits, "PROBLEM_MAX_FEATURES", 3)
    with pytest.raises(ParameterError, match=r"5 features: more than the 3"):
        logreg(str(path))
    monkeypatch.setattr(limits, "PROBLEM_MAX_BYTES", 50)
    with pytest.raises(ParameterError, match=r"problem: .*wide.csv"):
        logreg(str(path))


def test_a_chart_on_a_real_problem_runs_the_replicas_and_points_that_fit_its_work_cap() -> None:
    """curves.error_rows (the dashboard's rows): a data set's run over the chart's work cap runs
    as many replicas as fit (at least 10), then as many grid points as fit (at least 21), and is
    refused beyond; the work counts each recorded model's evaluation on all 569 rows of d = 31
    (breast cancer: 17 639 a model, against 4 rows × K = 4 × 31 = 496 a sync update here)."""
    from distsgd import curves
    from distsgd.error.general import RealProblem
    spec = RealProblem("breast_cancer", 0.01, 0.1, 4)
    schemes = (curves.build("sync", 4, 2, 2),)
    delay = parse_delay("exp(rate=1)")
    per_model = 569 * 31
    _, summary = curves.error_rows(schemes, delay, spec, 20.0, 5, 40, 1, max_work=2e6)
    n = summary[0]["replicas"]
    assert 10 <= n < 40 and n * 5 * per_model <= 2e6  # (evaluations alone: a bound the SGD only adds to)
    _, more = curves.error_rows(schemes, delay, spec, 20.0, 5, 40, 1, max_work=2e6 * 40 / n * 1.05)
    assert more[0]["replicas"] == 40  # when all fit, all run
    rows, fewer = curves.error_rows(schemes, delay, spec, 20.0, 101, 40, 1, max_work=5e6)
    points = len({r["time"] for r in rows})
    assert fewer[0]["replicas"] == 10
    assert 21 <= points < 101 and 5e6 // (10 * per_model) - 1 <= points <= 5e6 // (10 * per_model)
    _, refused = curves.error_rows(schemes, delay, spec, 20.0, 101, 40, 1, max_work=1e6)
    assert refused[0]["skipped_reason"]["reason"] == "sgd_work_cap"  # 10 replicas × 21 points do not fit


def test_a_runs_work_counts_the_evaluation_of_its_models() -> None:
    """simulate_problem's work cap (the library's time bound) counts each recorded model's loss
    and metrics on every training and held-out row, not only the gradients' b rows: 4 000 rows,
    d = 3, 5 replicas × 41 grid points ≈ 2.5e6 of evaluation against ≈ 1e3 of SGD."""
    rng = np.random.default_rng(30)
    X, y = rng.normal(size=(4000, 2)), rng.integers(2, size=4000)
    pb = logistic(X[:3000], y[:3000], lam=0.1, X_test=X[3000:], y_test=y[3000:])
    scheme, delay = make_scheme("sync", 2), parse_delay("exp(rate=1)")
    with pytest.raises(ParameterError) as e:
        simulate_problem(scheme, delay, pb, 0.1, 1, 10.0, 41, 5, 1, max_work=1e6)
    assert e.value.parameter == "replicas" and "evaluation" in str(e.value)
    assert simulate_problem(scheme, delay, pb, 0.1, 1, 10.0, 41, 5, 1, max_work=4e6).replicas == 5


def test_sgd_on_a_problem_runs_on_a_cluster_as_the_model_problems_engine_does() -> None:
    """A cluster (two persistent stragglers) drives the same update trace for a problem as for
    the quadratic: with σ² = 0 the two engines agree to 1e-9 (async: staleness from the cluster)."""
    from distsgd import make_cluster
    q = Problem(eta=0.3, L=2.0, mu=0.5, sigma2=0.0, b=1, f0=1.0, dim=4)
    cluster = make_cluster(m=6, delay=parse_delay("exp(rate=1)"), slow=2, slowdown=5)
    for scheme in (make_scheme("async", 6), make_scheme("k-sync", 6, K=4)):
        ours = simulate_problem(scheme, cluster, _NoiselessQuadratic(q), q.eta, 1, 6.0, 7, 4, 21, keep_errors=True)
        theirs = simulate_error(scheme, cluster, q, 6.0, 7, 4, 21, keep_errors=True)
        np.testing.assert_allclose(ours.errors, theirs.errors, rtol=1e-9, atol=1e-15)


# -- an uploaded file and the trade-offs on a real problem -----------------------------------------

def test_an_uploaded_file_is_one_data_set_by_its_bytes() -> None:
    """DataSet.read (the dashboard's upload): equal and hashed by the file's bytes and label
    column, so caches key on a digest; its problem is the file's; one class is refused at read."""
    from distsgd.error.general import RealProblem
    from distsgd.problems.data import DataSet
    X, y = _data(60, 3, 2, seed=4)
    text = "\n".join(",".join(f"{v:.6g}" for v in row) + f",{label}" for row, label in zip(X, y, strict=True))
    a, b = DataSet.read(text.encode(), name="a.csv"), DataSet.read(text.encode(), name="b.csv")
    assert a == b and hash(a) == hash(b) and a != DataSet.read((text + "\n").replace(",3\n", ",4\n", 1).encode(),
                                                                name="a.csv")
    spec = RealProblem(a.name, 0.05, 0.1, 2, data=a)
    pb = spec.problem
    assert (pb.n, pb.p1, pb.classes) == (45, 4, 2)  # 25 % held out, stratified; the intercept appended
    assert spec.problem is RealProblem("other name", 0.05, 0.1, 2, data=b).problem  # built once
    with pytest.raises(ParameterError, match="two classes"):
        DataSet.read(b"a,y\n1,0\n2,0\n3,0\n4,0\n", name="one.csv")
    with pytest.raises(ParameterError) as e:
        RealProblem("mine", 0.05, 0.1, 2)  # a name that is no bundled set, and no data
    assert e.value.parameter == "problem"


def test_trade_offs_on_a_real_problem_agree_with_the_error_chart_and_the_bound() -> None:
    """curves.target_rows (the Trade-offs page) on breast cancer: the simulated times to ε and to
    a test accuracy are the first grid times at which the Error page's chart (curves.error_rows,
    the same seed) reaches them, and sync's bound time is the test's own t* = E[T]·J with
    J = log((ε − F)/(F₀ − F)) / log(1 − ημ), F = ηLσ²/(2μbK), from the problem's constants."""
    from distsgd import curves
    from distsgd.error.general import RealProblem
    spec = RealProblem("breast_cancer", 0.01, 0.2, 4)
    delay = parse_delay("exp(rate=1)")
    schemes = (curves.build("sync", 4), curves.build("async", 4))
    eps, acc, T, points, R = 0.06, 0.92, 40.0, 41, 20
    rows = curves.target_rows(schemes, delay, spec, eps, T, points, R, 3, target_accuracy=acc)
    chart, _ = curves.error_rows(schemes, delay, spec, T, points, R, 3, gamma=0.5)
    for s, row in zip(schemes, rows, strict=True):
        mine = [r for r in chart if r["scheme"] == s.label]
        first_err = next((r["time"] for r in mine if r["simulated_mean"] <= eps), math.inf)
        first_acc = next((r["time"] for r in mine if r["test_accuracy_mean"] >= acc), math.inf)
        assert row["time_to_target"] == first_err and row["time_to_accuracy"] == first_acc
        assert row["time_to_target_low"] <= row["time_to_target"] <= row["time_to_target_high"]
    assert all(math.isfinite(r["time_to_accuracy"]) and math.isfinite(r["time_to_target"]) for r in rows)
    # the bound alone (no replicas: nothing simulated), where it is between 0 and ∞
    slow = RealProblem("breast_cancer", 0.01, 0.01, 64)
    c = slow.problem.constants
    L, mu, s2, F0 = c.L.value, c.mu.value, c.sigma2_bound.value, c.F0.value
    F = slow.eta * L * s2 / (2 * mu * slow.b * 4)
    eps = (F + F0) / 2
    J = math.log((eps - F) / (F0 - F)) / math.log(1 - slow.eta * mu)
    (row,) = curves.target_rows(schemes[:1], delay, slow, eps)
    assert "time_to_target" not in row and 0 < J < math.inf
    assert row["bound_time_to_target"] == pytest.approx(sum(1 / i for i in range(1, 5)) * J, rel=1e-9)  # E[T] = H_4


def test_the_quadratic_as_a_problem_is_the_model_problems_process() -> None:
    """Problem.gradient_problem() (DESIGN §3 through the protocol) run by the general engine against the
    model problem's own engine, other draws: the mean error on the grid within 3 combined standard
    errors of the two (their bands; 3 > 2.87, Bonferroni's z for 12 comparisons at 5 %), for fresh
    and stale gradients; its gradient noise has total variance σ²/b; its constants are exact."""
    q = Problem(eta=0.1, L=2.0, mu=0.5, sigma2=8.0, b=2, f0=1.0, dim=6)
    pb = q.gradient_problem()
    assert pb.constants.f_star.value == 0 and pb.constants.sigma2.value == 8.0 and pb.constants.L.value == 2.0
    g = pb.grad(np.zeros((20000, 6)), np.random.default_rng(2), 4)
    assert np.sum(g.var(axis=0)) == pytest.approx(8.0 / 4, rel=4 * math.sqrt(2 / 20000))
    delay = parse_delay("exp(rate=1)")

    def se(s):
        return (s.ci95_high - s.ci95_low) / (2 * Z95)

    for scheme in (make_scheme("sync", 4), make_scheme("async", 4)):
        ours = simulate_problem(scheme, delay, pb, q.eta, q.b, 30.0, 7, 300, 5)
        theirs = simulate_error(scheme, delay, q, 30.0, 7, 300, 6)
        gap = np.abs(ours.mean - theirs.mean)[1:]
        assert np.all(gap <= 3 * np.hypot(se(ours), se(theirs))[1:]), (scheme.label, gap, se(ours)[1:])
