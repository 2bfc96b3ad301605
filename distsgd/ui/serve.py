"""Start the dashboard's server with what a first page needs already loaded.

    python -m distsgd.ui.serve [streamlit options, e.g. --server.port 8501]

``streamlit run app.py`` imports the libraries under the pages and loads the compiled kernels
only when the first visitor opens a page: about 5 s on a 2-core machine, paid by the first
student of every server start, every restart of a backend and every page's first chart.  This
does that first (the dashboard's modules and the message catalogues), then hands over to
``streamlit run app.py`` with the options given, in the same process: the server answers its
health check once it is ready.  ``make run`` and ``deploy/run-multi.sh`` start the dashboard
this way.

The kernels: with worker processes (``DISTSGD_PROCESSES``, a shared host) each worker and this
process load them (:func:`distsgd.ui.workers.warm`) before the health check.  Without (``make
run``), a child process compiles them into numba's cache from the first instant, beside this
process's imports (:mod:`distsgd.ui.warmup`): after a fresh install that is ≈ 9 s of one core that
no longer delays the server, whose first page draws its analytic curves at once and its Monte
Carlo as soon as the runtime page's kernels are in the cache.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from . import warmup
from .host import UI_PROCESSES

if __name__ == "__main__" and UI_PROCESSES == 0:
    warmup.start()  # before the imports below: the child compiles while this process imports
    print("distsgd: loading the libraries before the server starts…", file=sys.stderr, flush=True)

from streamlit.web import cli  # noqa: E402

# Streamlit checks each st.cache_data's parameters as it decorates a function and, with no server
# running yet, warns that it would use an in-memory store — for that check only: the caches are
# made at their first call, inside the server.  Ten such lines at every start say nothing.
_CACHE_LOG = logging.getLogger("streamlit.runtime.caching.cache_data_api")
_CACHE_LOG.setLevel(logging.ERROR)

# the dashboard's own modules and what they load (imported here, before the first visitor)
from . import cached, claims, cluster, i18n, page, sidebar, sweep_results, workers  # noqa: E402, F401

_CACHE_LOG.setLevel(logging.NOTSET)

APP = Path(__file__).resolve().parents[2] / "app.py"


def main(argv: list[str] | None = None) -> int:
    if UI_PROCESSES > 0:
        print("distsgd: loading the compiled kernels before the server starts…", file=sys.stderr, flush=True)
        ready = workers.start()  # the workers warm themselves meanwhile, on the other cores
        workers.warm()
        for f in ready:
            f.result()
    for lang in i18n.LANGUAGES:
        i18n.catalogue(lang)
    sys.argv = ["streamlit", "run", str(APP), *(sys.argv[1:] if argv is None else argv)]
    return int(cli.main() or 0)


if __name__ == "__main__":
    sys.exit(main())
