"""``python -m distsgd`` — see :mod:`distsgd.cli`."""
import sys

from .cli import main

sys.exit(main())
