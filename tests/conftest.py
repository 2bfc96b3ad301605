import os
import sys
from pathlib import Path

# every figure of the suite is built with plotly's checks on (distsgd.plots.VALIDATE): a misspelt
# property fails here; tests/test_ui_plots.py checks that the unchecked figures are the same
os.environ.setdefault("DISTSGD_VALIDATE_FIGURES", "1")

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
