# make run   — set up .venv and start the dashboard on http://localhost:8501
# make test  — set up .venv (with the test tools and Chromium) and run the whole test suite
#              (kernels compiled; then the kernel-related files again with DISTSGD_JIT=0)
# make bench — run the benchmarks and write benchmarks/results/*.md
# make lint  — ruff and mypy, as configured in pyproject.toml (make test runs it first)
PYTHON ?= python3
# Python writes each module's bytecode when it first imports it: an environment that says
# PYTHONDONTWRITEBYTECODE (this workplace's does) would have every process of the suite compile
# every module it imports again, as the venv is installed --no-compile (below) — ~6 s more for each
# of the suite's hundreds of processes (CLI calls, servers, workers): measured in
# benchmarks/results/test_time.md
unexport PYTHONDONTWRITEBYTECODE
VENV   := .venv
PY     := $(VENV)/bin/python
PORT   ?= 8501

.PHONY: run test lint bench bench-load venv dev-venv browser clean

# uv (from PyPI, into the venv) installs the pinned requirements in a few seconds where pip took
# ~18 s from its own cache.  The venv is made without pip (ensurepip alone took 3.7 s of a fresh
# clone's first start: benchmarks/results/coldstart.md) and uv is put into it by the system's pip
# (pip >= 22.3: --python); failing that, by the venv's own pip (ensurepip); and if uv cannot be
# had at all, the venv's pip installs the requirements.  Neither compiles bytecode at install
# (--no-compile, uv's default): a module's is written when it is first imported (a fresh venv with
# pip in ~40 s instead of ~90 s).
UV     := uv==0.13.9
VENV_PIP = { $(PY) -m pip --version >/dev/null 2>&1 || $(PY) -m ensurepip --default-pip >/dev/null; }
GET_UV   = [ -x $(VENV)/bin/uv ] \
           || $(PYTHON) -m pip --python $(PY) install --quiet --no-compile --disable-pip-version-check $(UV) 2>/dev/null \
           || { $(VENV_PIP) && $(PY) -m pip install --quiet --no-compile $(UV); }
INSTALL  = { { $(GET_UV); } && $(VENV)/bin/uv pip install --quiet --python $(PY) -r $(1); } \
           || { $(VENV_PIP) && $(PY) -m pip install --quiet --no-compile -r $(1); } \
           || { echo "could not install $(1) into $(VENV) (no pip for it? on Debian/Ubuntu: apt install python3-venv)" >&2; false; }

$(VENV)/.installed: requirements.txt
	$(PYTHON) -m venv --without-pip $(VENV)
	$(call INSTALL,requirements.txt)
	touch $@

$(VENV)/.dev-installed: $(VENV)/.installed requirements-dev.txt
	$(call INSTALL,requirements-dev.txt)
	touch $@

venv: $(VENV)/.installed
dev-venv: $(VENV)/.dev-installed

# Debian's Chromium and CJK fonts for the browser test (skipped elsewhere when they cannot be
# installed): the Chinese pages must show characters, not boxes; and nginx for tests/test_deploy.py
browser:
	@if [ -x /usr/bin/chromium ] && [ -x /usr/sbin/nginx ] && fc-list :lang=zh 2>/dev/null | grep -q .; then :; \
	elif command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-noto-cjk nginx >/dev/null) \
	  || echo "warning: could not install chromium, fonts-noto-cjk and nginx; the browser and deploy tests will be skipped"; \
	else echo "note: no /usr/bin/chromium, CJK fonts or nginx and no root apt-get; the browser and deploy tests will be skipped"; fi

run: venv
	$(PY) -m distsgd.ui.serve --server.port $(PORT)

lint: dev-venv
	$(PY) -m ruff check distsgd tests benchmarks app.py pages
	$(PY) -m mypy

# ruff; one process that compiles every kernel into numba's cache (16–29 s from a fresh clone; else
# each of the suite's processes that starts before the cache is filled compiles them itself); the
# suite with the numba kernels compiled, with mypy beside it (~60 s of one core from a fresh clone,
# which before left the other core idle for half a minute; its report is printed after the suite's and
# either failing fails `make test`); then the files that exercise the kernels and the
# engines and SGD around them again on the plain-Python reference path (DISTSGD_JIT=0).
# --no-loadscope-reorder: xdist hands out the tests in the order tests/conftest.py gives them,
# the longest first (the browser group on one worker, then the slow tests), not by group size.
# Three workers on two cores: the browser tests are two groups (tests/test_browser.py: SECOND), each
# on a worker with its own server and Chromium, mostly waiting for them; the third worker and the
# CPU they leave idle take the rest.  The browser test's waits (bs.RENDER_S, QUICK_FROZEN_S) leave room
# for the busier machine (a page load once timed out at 45 s; benchmarks/results/test_time.md).
# --durations: the slowest tests, for the record of where the time goes.
test: dev-venv browser
	$(PY) -m ruff check distsgd tests benchmarks app.py pages
	@mkdir -p test-artifacts
	$(PY) -m mypy > test-artifacts/mypy.txt 2>&1 & mypy=$$!; \
	$(PY) -c "from distsgd.ui.workers import warm; warm()" || { kill $$mypy; exit 1; }; \
	$(PY) -m pytest -n 3 --dist loadgroup --no-loadscope-reorder -q --durations=25; tests=$$?; \
	wait $$mypy; typed=$$?; echo "mypy (beside the suite):"; cat test-artifacts/mypy.txt; \
	[ $$tests = 0 ] && [ $$typed = 0 ]
	DISTSGD_JIT=0 $(PY) -m pytest -n 2 -q -p no:cacheprovider -m "not slow" -k "$(JIT_ROWS)" $(JIT_TESTS)

# what reads distsgd.jit.ENABLED (the engines' and SGD's choice between a kernel and its numpy
# path): the kernels' files, the engines and SGD, and of the scenario table the Monte Carlo rows of the schemes whose engine has a kernel
# (async, k-async, k-batch-async, k-batch-sync) at m = 4, K = 1, m/2, m and 2m + 1: the numpy
# paths' branches (K = 1, K = m, K > m) are all there, m = 64 takes the same ones, and the
# m > 64 branches are compared to the kernels in tests/test_engines_kernels.py; sync, k-sync,
# local SGD and the analytic values do not depend on it
JIT_TESTS := tests/test_engines_kernels.py tests/test_error_kernels.py tests/test_error.py tests/test_engines.py \
	tests/test_scenarios_iid.py::test_monte_carlo_agrees_with_analytic
JIT_ROWS := not test_monte_carlo_agrees_with_analytic or (m4- and (async or k-batch-sync))

bench: dev-venv
	$(PY) -m benchmarks.run_all

# N = 1, 10, 30, 60 sessions on one server process, then 30 through nginx with 2 processes
# (skipped with a message when nginx is missing); writes benchmarks/results/load.md (~10 min)
bench-load: dev-venv
	$(PY) -m benchmarks.bench_load
	$(PY) -m benchmarks.bench_load --nginx 2 --sessions 60

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache test-artifacts
