"""L2-regularised logistic regression as a problem (DESIGN §9), vectorised over replicas.

Objective ``f(w) = (1/n) Σ ℓ(w; x_i, y_i) + (λ/2)‖w‖²`` over the training rows (an intercept
column of ones appended to the features; the intercept is regularised too, so f is λ-strongly
convex).  Two classes: ℓ = log(1 + exp(−y xᵀw)) with y = ±1 (the larger label +1), w of length
p + 1.  C ≥ 3 classes: ℓ = logsumexp(xᵀW) − x_yᵀW with W of shape (p + 1, C), flattened
row-major.  Dense features are numpy arrays, sparse ones CSR matrices (kept sparse: a replica's
mini-batch is one block of a block-diagonal sparse matrix).

>>> import numpy as np
>>> X = np.array([[0.0], [1.0], [2.0], [3.0]]); y = np.array([0, 0, 1, 1])
>>> p = logistic(X, y, lam=0.1)
>>> p.dim, p.classes, p.constants.f_star.kind
(2, 2, 'exact')
>>> bool(np.linalg.norm(p.full_grad(p.w_star[None])) < 1e-7)
True
"""

from __future__ import annotations

import math
from functools import cached_property
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator, cg, eigsh
from scipy.special import expit, log_expit, softmax

from .. import limits
from ..params import ParameterError
from .base import GAP_CERTIFIED, LAM, Constant, Constants

__all__ = ["LogisticRegression", "logistic"]

#: elements of one block of scores (rows × models × classes) when the loss of many models is
#: evaluated at once (8 MiB of float64)
SCORE_BLOCK = 2**20
#: Newton iterations at most (each a conjugate-gradient solve and a backtracking line search)
NEWTON_MAX_STEPS = 60


def _with_intercept(X: Any) -> Any:
    ones = np.ones((X.shape[0], 1))
    if sp.issparse(X):
        return sp.hstack([X, sp.csr_matrix(ones)], format="csr", dtype=np.float64)
    return np.hstack([np.asarray(X, dtype=np.float64), ones])


def _check_features(X: Any, parameter: str) -> Any:
    """A float64 feature matrix (dense or CSR), finite, within the caps."""
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
        values = X.data
    else:
        try:
            X = np.asarray(X, dtype=np.float64)
        except (TypeError, ValueError):
            raise ParameterError(parameter, "problem_not_numeric") from None
        if X.ndim != 2:
            raise ParameterError(parameter, "problem_not_matrix", shape=X.shape)
        values = X
    n, p = X.shape
    if n > limits.PROBLEM_MAX_ROWS:
        raise ParameterError(parameter, "problem_rows_cap", rows=n, cap=limits.PROBLEM_MAX_ROWS)
    if p > limits.PROBLEM_MAX_FEATURES:
        raise ParameterError(parameter, "problem_features_cap", features=p, cap=limits.PROBLEM_MAX_FEATURES)
    if values.size > limits.PROBLEM_MAX_VALUES:
        raise ParameterError(parameter, "problem_values_cap", values=values.size, cap=limits.PROBLEM_MAX_VALUES)
    if not np.isfinite(values).all():
        bad = np.argwhere(~np.isfinite(X.toarray() if sp.issparse(X) else X))[0]
        raise ParameterError(parameter, "problem_not_finite", row=int(bad[0]), column=int(bad[1]))
    return X


def _class_reductions(Z: np.ndarray, y: np.ndarray, first_max: bool = False) -> tuple[np.ndarray, np.ndarray | None]:
    """For scores Z (rows, classes, models): ℓ = log Σ_c exp(Z[:, c]) − Z[:, y] of each row and model,
    stably (the maximum subtracted), overwriting Z; and, if ``first_max``, whether the first class of
    largest score is y (``argmax``'s rule: at a tie the lowest class).  The classes sit in the middle
    so that each reduction runs over whole contiguous (rows, models) slices: numpy's reductions over
    a short last axis, and ``scipy.special.logsumexp`` more so, were 2–3 times slower on these
    blocks (tests/test_problems.py compares both with scipy and ``argmax``)."""
    picked = Z[np.arange(Z.shape[0]), y]
    if first_max:
        top, best = Z[:, 0].copy(), np.zeros(picked.shape, dtype=np.intp)
        for c in range(1, Z.shape[1]):
            higher = Z[:, c] > top
            np.copyto(top, Z[:, c], where=higher)
            best[higher] = c
        right: np.ndarray | None = best == y[:, None]
    else:
        top, right = Z.max(axis=1), None
    Z -= top[:, None]
    np.exp(Z, out=Z)
    return np.log(Z.sum(axis=1)) + top - picked, right


class LogisticRegression:
    """See the module's docstring.  ``X``, ``y``: the training rows as given (an intercept is
    appended); ``X_test``, ``y_test``: the held-out rows for :meth:`metrics` (labels among the
    training labels); ``info``: what the data's preparation reports (split, dropped columns)."""

    def __init__(self, X: Any, y: Any, *, lam: float, X_test: Any = None, y_test: Any = None,
                 name: str = "logistic", info: dict[str, Any] | None = None) -> None:
        self.lam = LAM.check(lam, "lam")
        self.name = name
        self.info = dict(info or {})
        X = _check_features(X, "X")
        y = np.asarray(y)
        if y.ndim != 1 or y.shape[0] != X.shape[0]:
            raise ParameterError("y", "problem_labels_shape", labels=y.shape, rows=X.shape[0])
        if X.shape[0] == 0:
            raise ParameterError("X", "problem_no_rows")
        self.labels = np.unique(y)
        if self.labels.size < 2:
            raise ParameterError("y", "problem_one_class", label=str(self.labels[0]) if self.labels.size else "")
        if self.labels.size > limits.PROBLEM_MAX_CLASSES:
            raise ParameterError("y", "problem_classes_cap", classes=self.labels.size, cap=limits.PROBLEM_MAX_CLASSES)
        self.classes = int(self.labels.size)
        self.X = _with_intercept(X)
        self.n, self.p1 = self.X.shape
        self.C = 1 if self.classes == 2 else self.classes
        self.dim = self.p1 * self.C
        if self.dim > limits.PROBLEM_MAX_DIM:
            raise ParameterError("X", "problem_dim_cap", dim=self.dim, cap=limits.PROBLEM_MAX_DIM)
        self.y = self._encode(y, "y")
        self.X_test = self.y_test = None
        self.n_test = 0
        if X_test is not None and y_test is not None:
            Xt = _check_features(X_test, "X_test")
            if Xt.shape[1] != X.shape[1]:
                raise ParameterError("X_test", "problem_test_columns", test=Xt.shape[1], train=X.shape[1])
            yt = np.asarray(y_test)
            if yt.ndim != 1 or yt.shape[0] != Xt.shape[0]:
                raise ParameterError("y_test", "problem_labels_shape", labels=yt.shape, rows=Xt.shape[0])
            if Xt.shape[0]:
                self.X_test, self.y_test = _with_intercept(Xt), self._encode(yt, "y_test")
                self.n_test = int(Xt.shape[0])
        self.sparse = sp.issparse(self.X)
        self._sq_norms = (np.asarray(self.X.multiply(self.X).sum(axis=1)).ravel() if self.sparse
                          else np.einsum("ij,ij->i", self.X, self.X))

    def _encode(self, y: np.ndarray, parameter: str) -> np.ndarray:
        """±1 (binary, the larger label +1) or the class index (multinomial)."""
        idx = np.searchsorted(self.labels, y)
        idx = np.minimum(idx, self.labels.size - 1)
        if (bad := np.flatnonzero(self.labels[idx] != y)).size:
            raise ParameterError(parameter, "problem_unknown_label", label=str(y[bad[0]]), row=int(bad[0]))
        return np.where(idx == 1, 1.0, -1.0) if self.classes == 2 else idx.astype(np.intp)

    # -- the protocol --------------------------------------------------------------------------

    def w0(self) -> np.ndarray:
        """Zeros: f(0) = log 2 (binary) or log C, plus nothing from the regulariser."""
        return np.zeros(self.dim)

    def _scores(self, X: Any, W: np.ndarray) -> np.ndarray:
        """xᵀw of every row for every model: (n, B) binary, (n, B, C) multinomial."""
        if self.C == 1:
            return np.asarray(X @ W.T)
        B = W.shape[0]
        W2 = W.reshape(B, self.p1, self.C).transpose(1, 0, 2).reshape(self.p1, B * self.C)
        return np.asarray(X @ W2).reshape(X.shape[0], B, self.C)

    def _evaluate(self, X: Any, y: np.ndarray, W: np.ndarray,
                  accuracy: bool = False) -> tuple[np.ndarray, np.ndarray | None]:
        """Mean ℓ over the rows of X for each model (B,) and, if asked, the fraction of rows whose
        predicted class (the sign; the first class of largest score) is y; in blocks of SCORE_BLOCK
        scores."""
        B = W.shape[0]
        loss, acc = np.empty(B), np.empty(B) if accuracy else None
        step = max(1, SCORE_BLOCK // (X.shape[0] * self.C))
        for s in range(0, B, step):
            Wb = W[s:s + step]
            if self.C == 1:
                Z = np.asarray(X @ Wb.T)
                ell, right = -log_expit(y[:, None] * Z), ((Z > 0) == (y[:, None] > 0)) if accuracy else None
            else:
                W2 = Wb.reshape(-1, self.p1, self.C).transpose(1, 2, 0).reshape(self.p1, -1)
                Z = np.asarray(X @ W2).reshape(X.shape[0], self.C, Wb.shape[0])
                ell, right = _class_reductions(Z, y, accuracy)
            loss[s:s + step] = ell.mean(axis=0)
            if acc is not None and right is not None:
                acc[s:s + step] = right.mean(axis=0)
        return loss, acc

    def loss(self, W: np.ndarray) -> np.ndarray:
        """f(w) of each row of W (R, d), regulariser included."""
        W = np.atleast_2d(W)
        return self._evaluate(self.X, self.y, W)[0] + 0.5 * self.lam * np.einsum("rd,rd->r", W, W)

    def metrics(self, W: np.ndarray) -> dict[str, np.ndarray]:
        """Test accuracy and test loss (mean ℓ, no regulariser) of each model; {} without test rows."""
        if self.X_test is None or self.y_test is None:
            return {}
        loss, acc = self._evaluate(self.X_test, self.y_test, np.atleast_2d(W), accuracy=True)
        assert acc is not None
        return {"test_accuracy": acc, "test_loss": loss}

    def _residual(self, Z: np.ndarray, y: np.ndarray) -> np.ndarray:
        """∂ℓ/∂score: −y·σ(−y z) (binary) or softmax(z) − e_y (multinomial), same shape as Z."""
        if self.C == 1:
            return -y * expit(-y * Z)
        P = softmax(Z, axis=-1)
        np.put_along_axis(P, y[..., None], np.take_along_axis(P, y[..., None], axis=-1) - 1.0, axis=-1)
        return P

    def grad(self, W: np.ndarray, rng: np.random.Generator, b: int) -> np.ndarray:
        """An unbiased mini-batch gradient for each row of W (R, d): each replica draws b training
        rows uniformly with replacement and averages ∇ℓ_i, plus λw."""
        R = W.shape[0]
        idx = rng.integers(self.n, size=(R, b))
        yb = self.y[idx]
        if self.sparse:
            rows = self.X[idx.ravel()]
            shift = np.repeat(np.repeat(np.arange(R), b) * self.p1, np.diff(rows.indptr))
            block = sp.csr_matrix((rows.data, rows.indices + shift, rows.indptr), shape=(R * b, R * self.p1))
            if self.C == 1:
                res = self._residual(block @ W.ravel(), yb.ravel())
                g = np.asarray(block.T @ res).reshape(R, self.p1)
            else:
                Z = np.asarray(block @ W.reshape(R * self.p1, self.C))
                g = np.asarray(block.T @ self._residual(Z, yb.ravel())).reshape(R, self.dim)
            return g / b + self.lam * W
        Xb = self.X[idx]  # (R, b, p1)
        if self.C == 1:
            res = self._residual(np.matmul(Xb, W[:, :, None])[..., 0], yb)
            g = np.matmul(res[:, None, :], Xb)[:, 0, :]
        else:
            Z = np.matmul(Xb, W.reshape(R, self.p1, self.C))
            g = np.matmul(Xb.transpose(0, 2, 1), self._residual(Z, yb)).reshape(R, self.dim)
        return g / b + self.lam * W

    def full_grad(self, W: np.ndarray) -> np.ndarray:
        """∇f(w) over every training row, for each row of W (R, d)."""
        W = np.atleast_2d(W)
        out = np.empty_like(W, dtype=np.float64)
        step = max(1, SCORE_BLOCK // (self.n * self.C))
        for s in range(0, W.shape[0], step):
            Wb = W[s:s + step]
            B = Wb.shape[0]
            Z = self._scores(self.X, Wb)
            if self.C == 1:
                G = np.asarray(self.X.T @ self._residual(Z, self.y[:, None])).T
            else:
                res = self._residual(Z, np.repeat(self.y[:, None], B, axis=1))  # (n, B, C)
                G = np.asarray(self.X.T @ res.reshape(self.n, B * self.C)).reshape(self.p1, B, self.C)
                G = G.transpose(1, 0, 2).reshape(B, self.dim)
            out[s:s + step] = G / self.n + self.lam * Wb
        return out

    # -- the optimum and the constants ---------------------------------------------------------

    def _hessp(self, w: np.ndarray, v: np.ndarray) -> np.ndarray:
        """∇²f(w)·v."""
        if self.C == 1:
            z = np.asarray(self.X @ w)
            s = expit(z) * expit(-z)
            return np.asarray(self.X.T @ (s * np.asarray(self.X @ v))) / self.n + self.lam * v
        P = softmax(np.asarray(self.X @ w.reshape(self.p1, self.C)), axis=1)
        A = np.asarray(self.X @ v.reshape(self.p1, self.C))
        PA = P * A
        M = PA - P * PA.sum(axis=1, keepdims=True)
        return (np.asarray(self.X.T @ M) / self.n).ravel() + self.lam * v

    @cached_property
    def w_star(self) -> np.ndarray:
        """The minimiser, by Newton's method (conjugate gradients on Hessian-vector products,
        a backtracking line search) until the certificate ‖∇f‖²/(2λ) is below GAP_CERTIFIED/100
        or it stops improving."""
        w = self.w0()
        f = float(self.loss(w[None])[0])
        for _ in range(NEWTON_MAX_STEPS):
            g = self.full_grad(w[None])[0]
            gnorm = float(np.linalg.norm(g))
            if gnorm**2 / (2 * self.lam) <= GAP_CERTIFIED / 100:
                break
            H = LinearOperator((self.dim, self.dim), matvec=lambda v, w=w: self._hessp(w, v), dtype=np.float64)
            step, _ = cg(H, -g, rtol=min(0.1, math.sqrt(gnorm)), maxiter=max(50, 2 * self.dim))
            t, slope = 1.0, float(g @ step)
            if slope >= 0:  # (CG's direction is a descent direction; guard against rounding)
                step, slope = -g, -gnorm**2
            f_new = float(self.loss((w + step)[None])[0])
            while f_new > f + 1e-4 * t * slope and t > 1e-12:
                t *= 0.5
                f_new = float(self.loss((w + t * step)[None])[0])
            if t <= 1e-12:  # no decrease left to find in floating point
                break
            w, f = w + t * step, f_new
        return w

    @cached_property
    def constants(self) -> Constants:
        """f* with its certificate, L (the bound of DESIGN §9), μ = λ, σ²* at the optimum, the
        everywhere bound on σ², and F0 (see DESIGN §9 for each formula)."""
        w = self.w_star
        f_star = float(self.loss(w[None])[0])
        g = self.full_grad(w[None])[0]
        gap = float(g @ g) / (2 * self.lam)
        kind = "exact" if gap <= GAP_CERTIFIED else "estimated"
        mean_sq = float(self._sq_norms.mean())
        factor = 4.0 if self.C == 1 else 2.0
        L = self._gram_max() / (factor * self.n) + self.lam
        sigma2 = self._sigma2_at(w)
        F0 = float(self.loss(self.w0()[None])[0]) - f_star
        return Constants(f_star=Constant(f_star, kind, gap), L=Constant(L, "bound"), mu=Constant(self.lam, "exact"),
                         sigma2=Constant(sigma2, "exact" if kind == "exact" else "estimated"),
                         sigma2_bound=Constant(mean_sq * (1.0 if self.C == 1 else 2.0), "bound"),
                         F0=Constant(F0, kind))

    def _gram_max(self) -> float:
        """λ_max(XᵀX): dense eigenvalues up to PROBLEM_MAX_NEWTON_DIM columns, else Lanczos."""
        if self.p1 <= limits.PROBLEM_MAX_NEWTON_DIM:
            G = self.X.T @ self.X
            G = G.toarray() if sp.issparse(G) else G
            return float(np.linalg.eigvalsh(G)[-1])
        op = LinearOperator((self.p1, self.p1), matvec=lambda v: self.X.T @ (self.X @ v), dtype=np.float64)
        return float(eigsh(op, k=1, which="LA", return_eigenvectors=False, tol=1e-10)[0])

    def _sigma2_at(self, w: np.ndarray) -> float:
        """σ²(w) = (1/n) Σ_i ‖∇f_i(w) − ∇f(w)‖² with f_i = ℓ_i + (λ/2)‖w‖²: at w* (∇f = 0) it is
        (1/n) Σ ‖r_i x_i + λw‖², r_i the residual of row i."""
        Z = np.asarray(self._scores(self.X, w[None]))[:, 0]
        res = self._residual(Z, self.y)
        g = self.full_grad(w[None])[0]
        if self.C == 1:
            xw = np.asarray(self.X @ w)
            per = res**2 * self._sq_norms + 2 * self.lam * res * xw + self.lam**2 * float(w @ w)
        else:
            per = (res * res).sum(axis=1) * self._sq_norms + 2 * self.lam * (res * Z).sum(axis=1) \
                + self.lam**2 * float(w @ w)
        return float(per.mean() - g @ g)


def logistic(X: Any, y: Any, *, lam: float, X_test: Any = None, y_test: Any = None,
             name: str = "logistic") -> LogisticRegression:
    """Logistic regression on the features exactly as given (DESIGN §9: no standardisation; an
    intercept column is appended).  Labels may be any two or more distinct values."""
    return LogisticRegression(X, y, lam=lam, X_test=X_test, y_test=y_test, name=name)
