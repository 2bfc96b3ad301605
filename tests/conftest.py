import functools
import os
import sys
from pathlib import Path

import pytest
from _pytest.nodeid import NodeId  # pytest 9's node ids (see pytest_collection_modifyitems)

# every figure of the suite is built with plotly's checks on (distsgd.plots.VALIDATE): a misspelt
# property fails here; tests/test_ui_plots.py checks that the unchecked figures are the same
os.environ.setdefault("DISTSGD_VALIDATE_FIGURES", "1")

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def _start_rank(item) -> int:  # type: ignore[no-untyped-def]
    """0: the browser tests (both their groups); 1: other xdist groups; 2: tests marked slow; 3: the rest."""
    group = item.get_closest_marker("xdist_group")
    if group is not None:
        name = group.args[0] if group.args else group.kwargs.get("name")
        return 0 if str(name).startswith("browser") else 1
    return 2 if item.get_closest_marker("slow") is not None else 3


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items) -> None:  # type: ignore[no-untyped-def]
    """The longest work first, so that it is not what the suite waits for at the end: ``make
    test`` runs ``pytest -n 3 --dist loadgroup --no-loadscope-reorder``, and xdist then hands the
    tests out in this order — the two browser groups (about 5 minutes each on one worker, the
    longest units) to the first two workers, other groups next, then the slow tests (the URL fuzz, the m = 1000
    rows), then the rest in file order.  A stable sort: within a rank, the collection's order.

    And the groups themselves: pytest-xdist (3.8) marks a grouped test by appending ``@group`` to
    ``item._nodeid``, which pytest 9 no longer reads (a node id is ``item._id``): without this,
    ``xdist_group`` is silently ignored and the browser tests run on both workers, each with its
    own server and Chromium.  Done here, in the way xdist means it, when xdist did not."""
    items.sort(key=_start_rank)
    if not (hasattr(config, "workerinput") and config.getvalue("loadgroup")):
        return
    for item in items:
        names = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                        for m in item.iter_markers("xdist_group")})
        suffix = "@" + "_".join(names)
        if names and not item.nodeid.endswith(suffix):
            item._id = NodeId.parse(item.nodeid + suffix)


def pytest_collection_finish(session) -> None:  # type: ignore[no-untyped-def]
    """Streamlit's v2-component scan once per process, not once per AppTest.

    Every AppTest's first run makes a new component manager, which reads the metadata of every
    installed distribution looking for v2 components: ~0.5 s, more than most pages' own run (a
    profile of the URL fuzz: 70 % of its time).  The installed packages do not change while the
    suite runs, so the first scan's result is kept for the later ones.  Only where the collected
    tests imported streamlit (no import here for the others)."""
    if "streamlit" not in sys.modules:
        return
    from streamlit.components.v2 import manifest_scanner

    scan = manifest_scanner.scan_component_manifests
    if getattr(scan, "_scanned_once", False):
        return
    found: list = []

    @functools.wraps(scan)
    def once(*args, **kwargs):  # type: ignore[no-untyped-def]
        if not found:
            found.append(scan(*args, **kwargs))
        return list(found[0])

    once._scanned_once = True  # type: ignore[attr-defined]
    manifest_scanner.scan_component_manifests = once
