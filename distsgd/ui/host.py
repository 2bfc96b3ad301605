"""The host's settings of the dashboard's server, read once from its environment.

Set by whoever runs the server (README, "Deploying as a shared app"); a value outside its choices
stops the server at start-up, naming the variable.  This module imports nothing of the library:
:mod:`distsgd.ui.serve` reads :data:`UI_PROCESSES` before it loads anything heavy.
"""

from __future__ import annotations

import os


def setting(name: str, default: str, allowed: tuple[str, ...]) -> str:
    """An environment variable of the server's, refused at start-up (naming it) unless allowed."""
    value = os.environ.get(name, default).strip() or default
    if value not in allowed:
        raise SystemExit(f"{name}={value!r}: expected one of {', '.join(allowed)}")
    return value


#: worker processes for the heavy cached calls (``DISTSGD_PROCESSES``, 0–16; :mod:`distsgd.ui.workers`):
#: 0 computes in the server's own process (one core's worth of reruns for everyone); a shared host
#: sets about its number of cores, each worker holding ≈ 250 MB
UI_PROCESSES = int(setting("DISTSGD_PROCESSES", "0", tuple(str(n) for n in range(17))))
