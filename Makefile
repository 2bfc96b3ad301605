# make run   — set up .venv and start the dashboard on http://localhost:8501
# make test  — set up .venv (with the test tools and Chromium) and run the whole test suite
#              (kernels compiled; then the kernel-related files again with DISTSGD_JIT=0)
# make bench — run the benchmarks and write benchmarks/results/*.md
# make lint  — ruff and mypy, as configured in pyproject.toml (make test runs it first)
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PORT   ?= 8501

.PHONY: run test lint bench bench-load venv dev-venv browser clean

$(VENV)/.installed: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $@

$(VENV)/.dev-installed: $(VENV)/.installed requirements-dev.txt
	$(PY) -m pip install --quiet -r requirements-dev.txt
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

# the suite with the numba kernels compiled, then the files that exercise the kernels and the
# engines and SGD around them again on the plain-Python reference path (DISTSGD_JIT=0)
test: dev-venv browser lint
	$(PY) -m pytest -n 2 --dist loadgroup -q
	DISTSGD_JIT=0 $(PY) -m pytest -n 2 -q -p no:cacheprovider $(JIT_TESTS)

JIT_TESTS := tests/test_engines_kernels.py tests/test_error_kernels.py tests/test_error.py tests/test_engines.py \
	tests/test_schemes.py tests/test_schemes_registry.py tests/test_scenarios_iid.py tests/test_library_robustness.py

bench: dev-venv
	$(PY) -m benchmarks.run_all

# N = 1, 10, 30, 60 sessions on one server process, then 30 through nginx with 2 processes
# (skipped with a message when nginx is missing); writes benchmarks/results/load.md (~10 min)
bench-load: dev-venv
	$(PY) -m benchmarks.bench_load
	$(PY) -m benchmarks.bench_load --nginx 2 --sessions 30

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache test-artifacts
