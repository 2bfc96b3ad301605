#!/usr/bin/env bash
# Run P Streamlit processes of the dashboard on loopback ports behind nginx (sticky sessions).
#
#   deploy/run-multi.sh [P=2] [PORT=8500] [FIRST_BACKEND_PORT=8601]
#
# Backends listen on 127.0.0.1:FIRST_BACKEND_PORT … +P-1, nginx on 127.0.0.1:PORT (the config
# is deploy/nginx.conf with these ports); open http://127.0.0.1:PORT.  Runs in the foreground;
# Ctrl-C (or SIGTERM) stops nginx and every backend.
#
# The backends are supervised: each runs under a small loop of this script that starts it again
# when it exits for any reason (a crash, the OOM killer, kill -9), after a back-off of 1 s that
# doubles on each quick exit up to 30 s and returns to 1 s once the process has stayed up 60 s;
# every exit and restart is logged to stderr.  Meanwhile nginx sends that backend's requests to
# another one (deploy/nginx.conf: proxy_next_upstream, max_fails/fail_timeout).  If nginx itself
# exits, everything is stopped (exit status 1).  Needs nginx: on Debian/Ubuntu
#   sudo apt-get install -y nginx
# (the package's own service is not used; set NGINX=/path/to/nginx for another binary).
# PYTHON defaults to the repository's .venv/bin/python.  Each backend is `python -m
# distsgd.ui.serve` (streamlit run app.py, with the libraries loaded before its health check
# answers, and the kernels too when it has worker processes; without, a child of the backend loads
# them beside it — compiles them, after an install — and its first chart waits for the runtime
# page's: distsgd/ui/warmup.py); the host settings DISTSGD_PROCESSES and DISTSGD_BUDGET (README)
# reach every backend through the environment, e.g.  DISTSGD_PROCESSES=1 DISTSGD_BUDGET=fast deploy/run-multi.sh 2
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
    # the marker first: a backend that Ctrl-C (sent to the whole foreground group) ended before
    # its supervisor got our SIGTERM is then not started again
    : > "$SCRATCH/stopping"
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$SCRATCH"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# one cookie secret for all processes, so a cookie one of them signed (XSRF) is valid on the others
export STREAMLIT_SERVER_COOKIE_SECRET=${STREAMLIT_SERVER_COOKIE_SECRET:-$("$PY" -c 'import secrets; print(secrets.token_hex(32))')}
export STREAMLIT_BROWSER_GATHER_USAGE_STATS=false

BACKOFF_FIRST=1 BACKOFF_MAX=30 STABLE_S=60  # seconds (see the top of this file)

log() { echo "run-multi $(date +%H:%M:%S): $*" >&2; }

# supervise PORT: run one backend on 127.0.0.1:PORT, start it again whenever it exits; stops
# (and stops the backend, or the back-off sleep) on SIGTERM, and on SIGINT: Ctrl-C reaches the
# whole foreground group, and a backend started in the background ignores SIGINT unless it
# installs its own handler (Streamlit does), so the supervisor must not just die and orphan it
supervise() {
    local port=$1 child="" delay=$BACKOFF_FIRST started up status how restarts=0
    trap '[[ -n $child ]] && kill -TERM "$child" 2>/dev/null; wait; exit 0' TERM INT
    while :; do
        started=$SECONDS
        "$PY" -m distsgd.ui.serve --server.port "$port" --server.address 127.0.0.1 \
            --server.headless true --server.fileWatcherType none &
        child=$!
        (( restarts == 0 )) || log "backend 127.0.0.1:$port started again (pid $child, restart $restarts)"
        status=0
        wait "$child" 2>/dev/null || status=$?  # (bash's own "Killed" notice: the log line below says it)
        child=""
        [[ -e $SCRATCH/stopping ]] && exit 0
        up=$((SECONDS - started))
        (( up < STABLE_S )) || delay=$BACKOFF_FIRST
        if (( status > 128 )); then how="killed by SIG$(kill -l $((status - 128)) 2>/dev/null || echo $((status - 128)))"
        else how="exit status $status"; fi
        log "backend 127.0.0.1:$port exited ($how) after ${up} s; restarting it in ${delay} s"
        sleep "$delay" &  # in the background: `wait` returns at once on SIGTERM, a foreground sleep would not
        child=$!
        wait "$child" || true
        child=""
        [[ -e $SCRATCH/stopping ]] && exit 0
        delay=$((delay * 2 > BACKOFF_MAX ? BACKOFF_MAX : delay * 2))
        restarts=$((restarts + 1))
    done
}

cd "$REPO"  # .streamlit/config.toml is read from the working directory
ports=""
for ((i = 0; i < P; i++)); do
    port=$((BASE + i))
    supervise "$port" &
    pids+=("$!")
    ports+="$port "
done

# the config: deploy/nginx.conf with this run's backends (one `server` line each, with the
# parameters of the file's first one: max_fails, fail_timeout) and listening port
awk -v ports="$ports" -v port="$PORT" '
    /^ *server 127\.0\.0\.1:[0-9]+[^;]*;  # run-multi/ {
        if (!done) {
            params = $0; sub(/^ *server 127\.0\.0\.1:[0-9]+/, "", params); sub(/;.*/, "", params)
            n = split(ports, p, " ")
            for (i = 1; i <= n; i++) printf "        server 127.0.0.1:%s%s;  # run-multi\n", p[i], params
            done = 1
        }
        next
    }
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

# the supervisors only return when stopped; nginx is not restarted: its exit ends the run
wait -n "${pids[@]}" || true
log "nginx (or a supervisor) exited; stopping the others"
exit 1
