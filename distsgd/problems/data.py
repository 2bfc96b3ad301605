"""Data for logistic regression (DESIGN §9): scikit-learn's bundled sets, the user's CSV/TSV or
LIBSVM file, and the preparation every set goes through — a stratified train/test split,
features standardised with the training mean and standard deviation (ddof = 0; constant columns
dropped and counted; sparse features scaled, not centred, so that they stay sparse), then the
intercept :class:`~distsgd.problems.logistic.LogisticRegression` appends.

Every file is read within caps before it is parsed (:func:`distsgd.tables.read_source`: its
bytes; the first record's fields before pandas parses a CSV), and every refusal is a
:class:`~distsgd.params.ParameterError` of parameter ``problem`` naming the file and the row,
column or line.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import scipy.sparse as sp

from .. import limits, tables
from ..params import ParameterError
from .base import DEFAULT_LAM, LAM, SPLIT_SEED, TEST_FRACTION
from .logistic import LogisticRegression

__all__ = ["BUILTIN_SETS", "builtin_data", "read_data_file", "prepare", "logreg", "bundled", "check_set", "DataSet",
           "prepared"]

#: scikit-learn's bundled sets (loaded from the installed package, never downloaded)
BUILTIN_SETS = {"breast_cancer": "load_breast_cancer", "digits": "load_digits"}
_SVM_EXTENSIONS = (".svm", ".svmlight", ".libsvm")
_SVM_LINE = re.compile(rb"^\s*[+-]?[0-9.eEinfINFa-z]+(\s+qid:\S+)?(\s+\d+:\S+)+\s*(#.*)?$")
_SVM_TOKEN = re.compile(rb"^\d+:[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$")


def check_set(name: str) -> None:
    """``name`` is one of :data:`BUILTIN_SETS`, else a ParameterError of ``problem`` listing them."""
    if name not in BUILTIN_SETS:
        raise ParameterError("problem", "one_of", choices=", ".join(f"logreg:{k}" for k in BUILTIN_SETS),
                             value=f"logreg:{name}")


def builtin_data(name: str) -> tuple[np.ndarray, np.ndarray]:
    """(X, y) of a bundled set, from the installed scikit-learn."""
    import sklearn.datasets

    check_set(name)
    X, y = getattr(sklearn.datasets, BUILTIN_SETS[name])(return_X_y=True)
    return np.asarray(X, dtype=np.float64), np.asarray(y)


def _error(shown: str, reason: str, /, **fields: Any) -> ParameterError:
    return ParameterError("problem", reason, file=shown, **fields)


def _is_svmlight(data: bytes, shown: str) -> bool:
    if shown.lower().endswith(_SVM_EXTENSIONS):
        return True
    if shown.lower().endswith((".csv", ".tsv")):
        return False
    first = next((ln for ln in data.split(b"\n", 64)[:64] if ln.strip() and not ln.lstrip().startswith(b"#")), b"")
    return bool(_SVM_LINE.match(first))


def _read_svmlight(data: bytes, shown: str) -> tuple[sp.csr_matrix, np.ndarray]:
    from sklearn.datasets import load_svmlight_file

    try:
        X, y = load_svmlight_file(io.BytesIO(data), dtype=np.float64)
    except (ValueError, RuntimeError, OverflowError) as exc:
        for line_no, line in enumerate(data.split(b"\n"), start=1):  # the error path only: name the line
            body = line.split(b"#", 1)[0].split()
            if not body:
                continue
            bad = [t for t in body[1:] if not t.startswith(b"qid:") and not _SVM_TOKEN.match(t)]
            try:
                float(body[0])
            except ValueError:
                bad.insert(0, body[0])
            if bad:
                raise _error(shown, "problem_svm_token", line=line_no,
                              token=bad[0][:40].decode("utf-8", "replace")) from None
        raise _error(shown, "cannot_parse", format="LIBSVM", why=str(exc)[:200]) from None
    return sp.csr_matrix(X), np.asarray(y)


def _read_text(data: bytes, shown: str, label: str | None) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """(X, y, feature names) of a CSV/TSV: a header row when its cells are not all numbers;
    the label column named ``label`` (else the last); every other column a numeric feature."""
    body, skipped, fmt, sep = tables.text_body(data, shown, None, parameter="problem")
    fields = tables.csv_fields(body, sep, shown, parameter="problem")
    if body.count(b"\n") + 1 > limits.PROBLEM_MAX_ROWS + 1:
        raise _error(shown, "problem_file_rows_cap", rows=body.count(b"\n") + 1, cap=limits.PROBLEM_MAX_ROWS)
    try:
        columns = tables.read_csv(body, sep, fields)
    except Exception as exc:  # pandas' ParserError, …: worded with the file's name
        raise _error(shown, "cannot_parse", format=fmt.upper(), why=str(exc).strip()[:200] or type(exc).__name__) \
            from None
    first = [str(c[0]).strip() for c in columns]
    header = not all(_is_number(v) for v in first if v) or not all(first)
    names = [name if header and name else str(j + 1) for j, name in enumerate(first)]  # unnamed: its place
    start = 1 if header else 0
    rows = len(columns[0]) - start
    if rows <= 0:
        raise _error(shown, "no_data_rows")
    if label is None:
        j_label = len(columns) - 1
    elif label in names:
        j_label = names.index(label)
    else:
        raise ParameterError("label", "problem_no_label_column", file=shown, label=label,
                             columns=", ".join(names[:20]))
    if len(columns) < 2:
        raise _error(shown, "problem_no_features")
    y_text = np.array([str(v).strip() for v in columns[j_label].slice(start).to_pylist()], dtype=object)
    if (empty := np.flatnonzero(y_text == "")).size:
        raise _error(shown, "problem_bad_cell", row=int(empty[0]) + start + 1 + skipped, column=names[j_label],
                      value="")
    y: np.ndarray = y_text
    if all(_is_number(v) for v in y_text):
        y = y_text.astype(np.float64)
    feats = [j for j in range(len(columns)) if j != j_label]
    X = np.empty((rows, len(feats)))
    for i, j in enumerate(feats):
        text = columns[j].slice(start)
        x = tables.numbers(text)
        if (bad := np.flatnonzero(~np.isfinite(x))).size:
            r = int(bad[0])
            raise _error(shown, "problem_bad_cell", row=r + start + 1 + skipped, column=names[j],
                          value=str(text[r]).strip()[:40])
        X[:, i] = x
    return X, y, [names[j] for j in feats]


def _is_number(text: str) -> bool:
    try:
        return np.isfinite(float(text))
    except ValueError:
        return False


def read_data_file(source: tables.Source, *, label: str | None = None, name: str | None = None
                   ) -> tuple[np.ndarray | sp.csr_matrix, np.ndarray, str]:
    """(X, y, the name shown) of a CSV/TSV or LIBSVM file (a path, bytes or an upload), read within
    ``limits.PROBLEM_MAX_BYTES`` and the row, feature and value caps."""
    data, shown = tables.read_source(source, name, parameter="problem", max_bytes=limits.PROBLEM_MAX_BYTES)
    if _is_svmlight(data, shown):
        if label is not None:
            raise ParameterError("label", "problem_label_svmlight", file=shown)
        if data.count(b"\n") > limits.PROBLEM_MAX_ROWS + 1:
            raise _error(shown, "problem_file_rows_cap", rows=data.count(b"\n"), cap=limits.PROBLEM_MAX_ROWS)
        X, y = _read_svmlight(data, shown)
    else:
        X, y, _ = _read_text(data, shown, label)
    if X.shape[1] > limits.PROBLEM_MAX_FEATURES:
        raise _error(shown, "problem_file_features_cap", features=X.shape[1], cap=limits.PROBLEM_MAX_FEATURES)
    return X, y, shown


def check_labels(y: np.ndarray, test_fraction: float) -> None:
    """At least two classes, and a stratified split of ``test_fraction`` that leaves every class
    in both parts; else a ParameterError (``problem``: one class; ``test_fraction``: too few rows)."""
    labels, counts = np.unique(y, return_counts=True)
    if labels.size < 2:
        raise ParameterError("problem", "problem_one_class", label=str(labels[0]) if labels.size else "")
    if test_fraction > 0:
        n_test = int(np.ceil(test_fraction * len(y)))
        if counts.min() < 2 or n_test < labels.size or len(y) - n_test < labels.size:
            raise ParameterError("test_fraction", "problem_split_too_small", rows=len(y), classes=labels.size,
                                 smallest=int(counts.min()), fraction=test_fraction)


def prepare(X: Any, y: np.ndarray, *, lam: float, test_fraction: float = 0.25, split_seed: int = 0,
            name: str = "logistic") -> LogisticRegression:
    """The stratified split (``test_fraction`` of the rows held out, fixed by ``split_seed``; 0
    keeps every row for training), standardisation with the training statistics, constant
    columns dropped; then logistic regression with ``lam``."""
    from sklearn.model_selection import train_test_split

    lam = LAM.check(lam, "lam")
    test_fraction = TEST_FRACTION.check(test_fraction, "test_fraction")
    split_seed = SPLIT_SEED.check(split_seed, "split_seed")
    check_labels(y, test_fraction)
    if test_fraction > 0:
        X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=test_fraction, stratify=y, random_state=split_seed)
    else:
        X_tr, X_te, y_tr, y_te = X, None, y, None
    if sp.issparse(X_tr):
        X_tr = sp.csr_matrix(X_tr)
        mean_sq = np.asarray(X_tr.multiply(X_tr).mean(axis=0)).ravel()
        mean = np.asarray(X_tr.mean(axis=0)).ravel()
        std = np.sqrt(np.maximum(mean_sq - mean**2, 0.0))
    else:
        mean, std = X_tr.mean(axis=0), X_tr.std(axis=0)
    keep = std > 1e-12 * np.maximum(1.0, np.abs(mean))
    if not keep.any():
        raise ParameterError("problem", "problem_all_constant", columns=int(keep.size))
    scale = 1.0 / std[keep]

    def transform(A: Any) -> Any:
        if A is None:
            return None
        if sp.issparse(A):
            return sp.csr_matrix(A)[:, np.flatnonzero(keep)] @ sp.diags(scale)
        return (A[:, keep] - mean[keep]) * scale

    info = {"n_train": int(len(y_tr)), "n_test": 0 if y_te is None else int(len(y_te)),
            "dropped_columns": int((~keep).sum()), "centred": not sp.issparse(X_tr),
            "test_fraction": test_fraction, "split_seed": split_seed}
    return LogisticRegression(transform(X_tr), y_tr, lam=lam, X_test=transform(X_te), y_test=y_te, name=name,
                              info=info)


def logreg(source: str, *, lam: float = DEFAULT_LAM, test_fraction: float = 0.25, split_seed: int = 0,
           label: str | None = None, name: str | None = None, data: Any = None) -> LogisticRegression:
    """``logreg:breast_cancer``, ``logreg:digits`` or ``logreg:FILE`` (``source`` is the part after
    ``logreg:``; ``data`` replaces the file's bytes, e.g. an upload, with ``source`` its name)."""
    if source in BUILTIN_SETS and data is None:
        X, y = builtin_data(source)
        shown = source
    else:
        if not source and data is None:
            raise ParameterError("problem", "problem_no_file")
        X, y, shown = read_data_file(data if data is not None else source, label=label,
                                     name=name or (os.path.basename(source) if data is not None else None))
    return prepare(X, y, lam=lam, test_fraction=test_fraction, split_seed=split_seed, name=f"logreg:{shown}")


@lru_cache(maxsize=16)
def bundled(name: str, lam: float, test_fraction: float = 0.25, split_seed: int = 0) -> LogisticRegression:
    """``logreg:NAME`` of a bundled set, built once per process for each (λ, split): the dashboard's
    worker processes each keep the ones they were asked for (f* is a Newton solve)."""
    check_set(name)
    return logreg(name, lam=lam, test_fraction=test_fraction, split_seed=split_seed)



@dataclass(frozen=True, eq=False)
class DataSet:
    """A user's data file read once (:func:`read_data_file`, within its caps): the features, the
    labels, the name shown, and the SHA-256 of the bytes and the label column, which is its
    identity — equality, hash and every cache key — so a dashboard can pass it around by value
    without hashing the arrays on each rerun."""

    name: str
    digest: str
    X: Any
    y: np.ndarray

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DataSet) and other.digest == self.digest

    def __hash__(self) -> int:
        return hash(self.digest)

    @classmethod
    def read(cls, data: bytes, *, name: str, label: str | None = None,
             test_fraction: float = 0.25) -> DataSet:
        """Read ``data`` (a file's bytes, ``name`` shown in messages); its labels checked for
        two classes and a stratified split of ``test_fraction`` (:func:`check_labels`)."""
        X, y, shown = read_data_file(bytes(data), label=label, name=name)
        check_labels(y, TEST_FRACTION.check(test_fraction, "test_fraction"))
        key = hashlib.sha256(bytes(data))
        key.update(b"\0label=" + (label or "").encode())
        return cls(shown, key.hexdigest(), X, y)


@lru_cache(maxsize=4)
def prepared(data: DataSet, lam: float, test_fraction: float = 0.25, split_seed: int = 0) -> LogisticRegression:
    """``logreg:FILE`` of a read :class:`DataSet`, built once per process for each (set, λ,
    split), as :func:`bundled` does for the bundled sets."""
    return prepare(data.X, data.y, lam=lam, test_fraction=test_fraction, split_seed=split_seed,
                   name=f"logreg:{data.name}")
