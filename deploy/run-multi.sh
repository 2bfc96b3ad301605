#!/usr/bin/env bash
# Run P Streamlit processes of the dashboard on loopback ports behind nginx (sticky sessions).
#
#   deploy/run-multi.sh [P=2] [PORT=8500] [FIRST_BACKEND_PORT=8601]
#
# Backends listen on 127.0.0.1:FIRST_BACKEND_PORT … +P-1, nginx on 127.0.0.1:PORT (the config
# is deploy/nginx.conf with these ports); open http://127.0.0.1:PORT.  Runs in the foreground;
# Ctrl-C (or SIGTERM) stops nginx and every backend.  Needs nginx: on Debian/Ubuntu
#   sudo apt-get install -y nginx
# (the package's own service is not used; set NGINX=/path/to/nginx for another binary).
# PYTHON defaults to the repository's .venv/bin/python.
set -euo pipefail

P=${1:-2}
PORT=${2:-8500}
BASE=${3:-8601}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(dirname "$HERE")
PY=${PYTHON:-$REPO/.venv/bin/python}
NGINX=${NGINX:-$(command -v nginx || echo /usr/sbin/nginx)}

for v in "$P" "$PORT" "$BASE"; do
    [[ $v =~ ^[0-9]+$ ]] || { echo "usage: $0 [P] [PORT] [FIRST_BACKEND_PORT] (integers)" >&2; exit 2; }
done
(( P >= 1 && P <= 32 )) || { echo "P must be 1..32" >&2; exit 2; }
if [[ ! -x $NGINX ]]; then
    echo "nginx not found. Install it (Debian/Ubuntu: sudo apt-get install -y nginx) or set NGINX=/path/to/nginx" >&2
    exit 2
fi
[[ -x $PY ]] || { echo "no Python at $PY: run 'make venv' first or set PYTHON" >&2; exit 2; }

SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/distsgd-nginx.XXXXXX")
chmod 711 "$SCRATCH"  # nginx workers (user nobody when started as root) reach their temp dirs
mkdir -p "$SCRATCH/tmp"
pids=()
cleanup() {
    trap - EXIT INT TERM
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$SCRATCH"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# one cookie secret for all processes, so a cookie one of them signed (XSRF) is valid on the others
export STREAMLIT_SERVER_COOKIE_SECRET=${STREAMLIT_SERVER_COOKIE_SECRET:-$("$PY" -c 'import secrets; print(secrets.token_hex(32))')}
export STREAMLIT_BROWSER_GATHER_USAGE_STATS=false

cd "$REPO"  # .streamlit/config.toml is read from the working directory
servers=""
for ((i = 0; i < P; i++)); do
    port=$((BASE + i))
    "$PY" -m streamlit run app.py --server.port "$port" --server.address 127.0.0.1 \
        --server.headless true --server.fileWatcherType none &
    pids+=("$!")
    servers+="        server 127.0.0.1:$port;  # run-multi"$'\n'
done

# the config: deploy/nginx.conf with this run's backends and listening port
awk -v servers="$servers" -v port="$PORT" '
    /server 127\.0\.0\.1:[0-9]+;  # run-multi/ { if (!done) { printf "%s", servers; done = 1 }; next }
    /listen .*# run-multi/ { print "        listen 127.0.0.1:" port ";"; next }
    { print }' "$HERE/nginx.conf" > "$SCRATCH/nginx.conf"

# wait (at most 180 s) until every backend answers its health check
"$PY" - "$BASE" "$P" <<'PYEOF'
import sys, time, urllib.request
base, n = int(sys.argv[1]), int(sys.argv[2])
deadline = time.monotonic() + 180
for port in range(base, base + n):
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=5) as r:
                if r.read().strip() == b"ok":
                    break
        except OSError:
            pass
        if time.monotonic() > deadline:
            sys.exit(f"backend 127.0.0.1:{port} did not start within 180 s")
        time.sleep(0.5)
PYEOF

"$NGINX" -t -q -p "$SCRATCH/" -e stderr -c "$SCRATCH/nginx.conf"
"$NGINX" -p "$SCRATCH/" -e stderr -c "$SCRATCH/nginx.conf" -g 'daemon off;' &
pids+=("$!")
echo "distsgd: $P Streamlit processes (127.0.0.1:$BASE-$((BASE + P - 1))) behind nginx on http://127.0.0.1:$PORT — Ctrl-C stops"

wait -n "${pids[@]}" || true
echo "run-multi: a process exited; stopping the others" >&2
exit 1
