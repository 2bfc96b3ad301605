"""Problems the error curves are about (DESIGN §9): a vectorised gradient oracle over replicas
with the constants the theory needs, each with its kind.

``base``      the protocol, :class:`Constant` and :class:`Constants`, the parameters' domains
``logistic``  L2-regularised logistic regression (binary and multinomial, dense and sparse)
``data``      scikit-learn's bundled sets, the user's CSV/TSV/LIBSVM file, split and standardised
``functions`` a user's own problem from plain functions

The model problem of DESIGN §3 as a problem of the protocol is
:class:`distsgd.error.QuadraticProblem` (``Problem(...).gradient_problem()``).
"""

from ..params import ParameterError
from .base import (
    GAP_CERTIFIED,
    LAM,
    SPLIT_SEED,
    TARGET_ACCURACY,
    TEST_FRACTION,
    Constant,
    Constants,
    GradientProblem,
)
from .data import BUILTIN_SETS, bundled, logreg, prepare, read_data_file
from .functions import FunctionProblem, from_functions
from .logistic import LogisticRegression, logistic

__all__ = ["GradientProblem", "Constant", "Constants", "LogisticRegression", "logistic", "logreg", "prepare",
           "FunctionProblem", "from_functions", "bundled",
           "read_data_file", "builtin", "BUILTIN_SETS", "LAM", "TEST_FRACTION", "SPLIT_SEED", "TARGET_ACCURACY",
           "GAP_CERTIFIED"]


def builtin(name: str, **options: object) -> LogisticRegression:
    """``logreg:breast_cancer``, ``logreg:digits`` or ``logreg:FILE`` with the options of
    :func:`~distsgd.problems.data.logreg` (``lam``, ``test_fraction``, ``split_seed``, ``label``).
    The quadratic of DESIGN §3 is :class:`distsgd.error.Problem`, and as a problem of the
    protocol ``Problem(...).gradient_problem()`` (a layer above this package)."""
    if not isinstance(name, str) or not name.startswith("logreg:"):
        raise ParameterError("problem", "problem_unknown", value=str(name)[:80])
    return logreg(name[len("logreg:"):], **options)  # type: ignore[arg-type]
