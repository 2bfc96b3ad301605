"""A measured trace as a delay law: X takes each observed value with probability 1/n."""

from __future__ import annotations

import hashlib
import math
import os
import re
import stat
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar

import numpy as np
from scipy import special

from .. import limits
from ..estimate import Estimate
from ..params import Domain, ParameterError
from ..params import shortest as _fmt
from ..reasons import Text
from .base import Delay

__all__ = ["Empirical", "EMPIRICAL_MAX_VALUES", "EMPIRICAL_MAX_BYTES", "TRACE_TIME"]

EMPIRICAL_MAX_VALUES = limits.EMPIRICAL_MAX_VALUES
EMPIRICAL_MAX_BYTES = limits.EMPIRICAL_MAX_BYTES
#: one time of a measured trace: positive and at most limits.MAX_TRACE_TIME
TRACE_TIME = Domain("time", 0.0, limits.MAX_TRACE_TIME, low_open=True, doc="one measured time")


class _EmpiricalLaw:
    """The resampling law of a finite trace: mass 1/n on each observed value."""

    def __init__(self, values: np.ndarray) -> None:
        self.x = np.sort(values)
        self.n = self.x.size

    def cdf(self, t: Any) -> np.ndarray:
        return np.searchsorted(self.x, t, side="right") / self.n

    def sf(self, t: Any) -> np.ndarray:
        return 1.0 - self.cdf(t)

    def pdf(self, t: Any) -> np.ndarray:  # no density: a histogram is drawn instead
        return np.zeros_like(np.asarray(t, dtype=float))

    def ppf(self, q: Any) -> np.ndarray:
        # generalised inverse inf{x : F(x) ≥ q}
        idx = np.ceil(np.asarray(q, dtype=float) * self.n).astype(np.int64) - 1
        return self.x[np.clip(idx, 0, self.n - 1)]

    def isf(self, q: Any) -> np.ndarray:
        # inf{x : P(X > x) ≤ q} = x_(n - floor(q n)) in 1-based order
        idx = self.n - 1 - np.floor(np.asarray(q, dtype=float) * self.n).astype(np.int64)
        return self.x[np.clip(idx, 0, self.n - 1)]

    def mean(self) -> float:
        return float(self.x.mean())

    def var(self) -> float:
        return float(self.x.var())

    def support(self) -> tuple[float, float]:
        return float(self.x[0]), float(self.x[-1])


@dataclass(frozen=True, kw_only=True, eq=False)
class Empirical(Delay):
    """A measured trace, resampled: X takes each observed value with probability 1/n.

    Spec ``empirical(file=path)`` reads a text/CSV column of positive times (API and CLI only;
    the dashboard builds one from an upload with :meth:`from_values`).  Every time must lie in
    (0, limits.MAX_TRACE_TIME]; a trace holds 2 to limits.EMPIRICAL_MAX_VALUES of them.
    """

    values: np.ndarray = field(repr=False)
    file: str = "<data>"
    name: ClassVar[str] = "empirical"
    PARAMS: ClassVar[tuple[Domain, ...]] = ()
    SCALING: ClassVar[dict[str, str]] = {"values": "time"}
    TITLES: ClassVar[dict[str, str]] = {"empirical": "measured trace (upload)"}

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.file, str):
            raise ParameterError("file", "file_name_type", type=type(self.file).__name__)
        raw = self.values
        size = getattr(raw, "size", None)
        if isinstance(size, (int, np.integer)) and size > EMPIRICAL_MAX_VALUES:
            raise ParameterError("file", "trace_values_cap", cap=EMPIRICAL_MAX_VALUES, count=int(size))
        try:
            v = np.array(raw, dtype=float).ravel()
        except (TypeError, ValueError, OverflowError):
            raise ParameterError("file", "trace_not_numbers", type=type(raw).__name__) from None
        if v.size < 2:
            raise ParameterError("file", "trace_too_few", count=v.size)
        if v.size > EMPIRICAL_MAX_VALUES:
            raise ParameterError("file", "trace_values_cap", cap=EMPIRICAL_MAX_VALUES, count=v.size)
        bad = np.flatnonzero(~((v > 0) & (v <= limits.MAX_TRACE_TIME)))
        if bad.size:
            i = int(bad[0])
            raise ParameterError("file", "trace_bad_value", n=i + 1, value=v[i], range=TRACE_TIME.phrase())
        v.setflags(write=False)
        object.__setattr__(self, "values", v)

    @classmethod
    def from_values(cls, values: Any, name: str = "<data>", shift: float = 0.0) -> Empirical:
        return cls(values=values, file=name, shift=shift)

    @classmethod
    def from_text(cls, text: str, name: str = "<data>", shift: float = 0.0) -> Empirical:
        if not isinstance(text, str):
            raise ParameterError("file", "expected_text", type=type(text).__name__)
        return cls.from_values(_parse_trace(text), name=name, shift=shift)

    @classmethod
    def from_file(cls, path: str, shift: float = 0.0) -> Empirical:
        """Read a trace from a *regular* file of at most limits.EMPIRICAL_MAX_BYTES.

        Devices (/dev/zero), FIFOs and directories are refused without reading; a FIFO is never
        opened for blocking reads (the open is non-blocking and checked again on the open file),
        and at most the byte cap + 1 bytes are read.
        """
        if not isinstance(path, (str, os.PathLike)):
            raise ParameterError("file", "expected_path", type=type(path).__name__)
        path = os.fspath(path)
        shown = path if len(path) <= 200 else path[:200] + "…"
        if "\x00" in path:
            raise ParameterError("file", "path_invalid", path=shown)
        try:
            st = os.stat(path)
        except (OSError, ValueError) as exc:
            why = str(getattr(exc, "strerror", None) or exc)
            raise ParameterError("file", "path_unreadable", path=shown, why=why) from None
        if not stat.S_ISREG(st.st_mode):
            raise ParameterError("file", "path_not_regular", path=shown)
        if st.st_size > EMPIRICAL_MAX_BYTES:
            raise ParameterError("file", "path_too_large", path=shown, mib=EMPIRICAL_MAX_BYTES // 2**20)
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
        except OSError as exc:
            raise ParameterError("file", "path_unreadable", path=shown, why=str(exc.strerror or exc)) from None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):  # replaced since the stat above
                raise ParameterError("file", "path_not_regular", path=shown)
            with os.fdopen(fd, "rb", closefd=False) as fh:
                data = fh.read(EMPIRICAL_MAX_BYTES + 1)
        except OSError as exc:
            raise ParameterError("file", "path_unreadable", path=shown, why=str(exc.strerror or exc)) from None
        finally:
            os.close(fd)
        if len(data) > EMPIRICAL_MAX_BYTES:
            raise ParameterError("file", "path_too_large", path=shown, mib=EMPIRICAL_MAX_BYTES // 2**20)
        return cls.from_text(data.decode("utf-8", errors="replace"), name=path, shift=shift)

    @cached_property
    def _digest(self) -> str:
        return hashlib.sha1(self.values.tobytes()).hexdigest()

    @property
    def key(self) -> str:
        """``empirical(sha1=…, n=…[, shift=Δ])``: a digest of the values plus the shift (the file
        name is not part of the law)."""
        tail = f", shift={_fmt(self.shift)}" if self.shift else ""
        return f"empirical(sha1={self._digest}, n={self.values.size}{tail})"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Empirical) and self.shift == other.shift
                and self._digest == other._digest)

    def __hash__(self) -> int:
        return hash((self._digest, self.shift))

    def __reduce__(self) -> Any:
        return (Empirical.from_values, (np.asarray(self.values), self.file, self.shift))

    def _scipy(self) -> Any:
        return _EmpiricalLaw(self.values)

    def _sample_base(self, rng: np.random.Generator, size: Any) -> np.ndarray:
        return self.values[rng.integers(0, self.values.size, size)]

    @cached_property
    def _moments(self) -> tuple[float, float]:  # asked for at every run-length estimate of a cluster
        return float(self.values.mean()), float(self.values.var())

    @property
    def mean(self) -> float:
        return self._moments[0] + self.shift

    @property
    def var(self) -> float:
        return self._moments[1]

    def parameters(self) -> dict[str, float]:
        return {}

    def spec_items(self) -> list[tuple[str, float | str]]:
        items: list[tuple[str, float | str]] = [("file", self.file)]
        if self.shift:
            items.append(("shift", self.shift))
        return items

    def _nlu(self) -> bool:
        # sf(s + t) ≤ sf(s)·sf(t), i.e. n·#{X > s+t} ≤ #{X > s}·#{X > t} in exact integer
        # counts.  sf is a step function, so the worst cases sit at its jumps: every pair of
        # distinct observed values (and 0) when there are at most 2 000 of them, else 2 000
        # observed order statistics evenly spread in rank.  Rows are checked in blocks and the
        # check stops at the first violation.  The law checked is that of X = Δ + Y: a shift
        # can make a trace NLU (sf(s+t) falls to 0 sooner), so the shifted values are used.
        x = self._dist.x + self.shift  # sorted
        n = x.size
        distinct = np.empty(n, dtype=bool)
        distinct[0] = True
        np.not_equal(x[1:], x[:-1], out=distinct[1:])
        if int(distinct.sum()) <= 2000:
            pts = x[distinct]
        else:
            pts = x[np.unique(np.round(np.linspace(0, n - 1, 2000)).astype(np.int64))]
        pts = np.concatenate([[0.0], pts])
        above = (n - np.searchsorted(x, pts, side="right")).astype(np.int64)  # #{X > p}
        rows = max(1, 2**20 // pts.size)
        for i0 in range(0, pts.size, rows):
            q = pts[i0:i0 + rows, None] + pts[None, :]
            lhs = (n - np.searchsorted(x, q.ravel(), side="right")).reshape(q.shape).astype(np.int64) * n
            if np.any(lhs > above[i0:i0 + rows, None] * above[None, :]):
                return False
        return True

    def order_statistic(self, k: int, n: int) -> Estimate:
        """Exact mean and standard deviation of X_{k:n} for the resampling law: with distinct
        sorted values x_1 < … < x_d, ``E = x_1 + Σ_j (x_{j+1} − x_j) P(X_{k:n} > x_j)`` and
        ``P(X_{k:n} > x_j) = I_{S(x_j)}(n−k+1, k)``.

        >>> Empirical.from_values([1.0, 3.0]).order_statistic(2, 2).value   # 1 + 2·(3/4)
        2.5
        """
        x, counts = np.unique(np.asarray(self.values, float), return_counts=True)
        total = counts.sum()
        sf = (total - np.cumsum(counts)) / total  # P(X > x_j), exact rationals
        s = special.betainc(n - k + 1, k, sf)
        mean = x[0] + float(np.sum(np.diff(x) * s[:-1]))
        pmf = np.concatenate([[1.0], s[:-1]]) - s
        var = float(np.sum(pmf * (x - mean) ** 2))
        return Estimate(mean + self.shift, "exact", Text.of("method_empirical_os"),
                        std=math.sqrt(max(var, 0.0)))

    @property
    def atoms(self) -> np.ndarray:
        return np.asarray(self.values, float) + self.shift

    @property
    def constant(self) -> float | None:
        v = np.asarray(self.values, float)
        return float(v[0]) + self.shift if np.all(v == v[0]) else None

    def _label(self) -> str:
        return f"trace {os.path.basename(self.file)} (n={self.values.size})"

    def _latex(self, v: str) -> str:
        return f"\\tfrac{{1}}{{n}}\\textstyle\\sum_i \\delta({v} - x_i),\\quad n = {self.values.size}"


def _parse_trace(text: str) -> np.ndarray:
    """First column of a text/CSV file: numbers, one per line; a header line and # comments allowed.

    A value that is not a time in (0, limits.MAX_TRACE_TIME] is refused with its line number."""
    out: list[float] = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        first = re.split(r"[,;\s]+", line)[0]
        try:
            value = float(first)
        except ValueError:
            if out:  # only the first data line may be a header
                raise ParameterError("file", "line_not_number", line=lineno, text=first[:40]) from None
            continue
        if not (0 < value <= limits.MAX_TRACE_TIME):
            raise ParameterError("file", "line_not_time", line=lineno, text=first[:40],
                                         high=_fmt(limits.MAX_TRACE_TIME))
        out.append(value)
        if len(out) > EMPIRICAL_MAX_VALUES:
            raise ParameterError("file", "trace_values_cap_reached", cap=EMPIRICAL_MAX_VALUES)
    return np.asarray(out, dtype=float)
