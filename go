#!/usr/bin/env bash
# One entry point for people and CI.
#   ./go serve [ARGS...]   set up .venv (and Debian's libturbojpeg0 where no password is asked), then
#                          `tablesight serve` (no ARGS: the bundled sample session)
#   ./go test  [PYTEST ARGS...]   set up .venv and Debian's chromium and libturbojpeg0, then the tests (ruff and
#                                 mypy run inside them)
#   ./go setup             only set up .venv
#   ./go lock              renew requirements.lock and requirements-test.lock (the exact versions setup installs)
set -euo pipefail
cd "$(dirname "$0")"
PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null 2>&1 || PY=python3

setup() {
    local extra="$1"
    if [ ! -x .venv/bin/python ]; then
        "$PY" -m venv .venv
    fi
    local stamp=".venv/.installed-$extra"
    local target="." lock="requirements.lock"
    [ "$extra" = test ] && target=".[test]" && lock="requirements-test.lock"
    if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ "$lock" -nt "$stamp" ]; then
        echo "Setting up .venv (first run only: a minute or two)..." >&2
        # the exact versions in the lock (tested here), the package itself editable; pip's chatter goes to a
        # log, shown only if the install fails
        if ! { .venv/bin/python -m pip install --upgrade pip \
                && .venv/bin/python -m pip install -c "$lock" -e "$target"; } > .venv/install.log 2>&1; then
            cat .venv/install.log >&2
            echo "Setting up .venv failed; the log above says why." >&2
            exit 1
        fi
        touch "$stamp"
    fi
}

apt_install() {
    # Debian's packages, as root or through sudo ($SUDO: "sudo -n" where no password may be asked)
    local sudo="${SUDO:-sudo}"
    if [ "$(id -u)" = 0 ]; then
        sudo=""
    fi
    $sudo apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

has_turbojpeg() {
    "$PY" -c "import ctypes.util, sys; sys.exit(0 if ctypes.util.find_library('turbojpeg') else 1)"
}

debian_for_tests() {
    # End-to-end tests drive Debian's Chromium; nothing is downloaded by the test tools themselves. The tests
    # check the one JPEG decode of a camera frame, through Debian's libturbojpeg0.
    local missing=()
    command -v chromium >/dev/null 2>&1 || missing+=(chromium)
    has_turbojpeg || missing+=(libturbojpeg0)
    if [ ${#missing[@]} -gt 0 ]; then
        apt_install "${missing[@]}"
    fi
}

debian_for_serve() {
    # A camera's JPEG is decoded once with Debian's libturbojpeg0, twice by OpenCV without it: installed when
    # that asks no password, tried once (rm the stamp to try again), else serve goes on without it
    local stamp=.venv/.no-libturbojpeg0
    if has_turbojpeg || [ -f "$stamp" ]; then
        return 0
    fi
    if [ "$(id -u)" = 0 ] || sudo -n true 2>/dev/null; then
        echo "Installing Debian's libturbojpeg0 (a camera's frames decoded once)..." >&2
        if ! SUDO="sudo -n" apt_install libturbojpeg0; then
            touch "$stamp"
            echo "libturbojpeg0 could not be installed; going on without it (rm $stamp to try again)." >&2
        fi
    fi
}

lock() {
    # resolve the newest versions pyproject.toml allows, in throw-away environments, and pin them
    local tmp
    tmp=$(mktemp -d)
    for extra in run test; do
        local target="." out="requirements.lock" all=""
        # the test extras build a wheel (setuptools): that lock pins pip and setuptools too
        [ "$extra" = test ] && target=".[test]" && out="requirements-test.lock" && all="--all"
        "$PY" -m venv "$tmp/$extra"
        "$tmp/$extra/bin/python" -m pip install -q --upgrade pip
        "$tmp/$extra/bin/python" -m pip install -q "$target"
        { echo "# Exact versions ./go setup installs ($extra); renew with ./go lock."
          "$tmp/$extra/bin/python" -m pip freeze $all --exclude-editable | grep -v "^tablesight"; } > "$out"
        echo "wrote $out" >&2
    done
    rm -rf "$tmp"
}

cmd=${1:-serve}
shift || true
case "$cmd" in
    setup) setup run ;;
    lock) lock ;;
    serve) setup run; debian_for_serve; exec .venv/bin/tablesight serve "$@" ;;
    test)
        setup test
        debian_for_tests
        # a file's tests stay on one worker, so a module's costly fixture (a bench run, a rendered session, a
        # server) is made once, not once a worker: 676 s against 783 s for the whole run on 2 cores
        exec .venv/bin/python -m pytest -n 2 --dist loadfile "$@"
        ;;
    *) echo "usage: ./go serve|test|setup|lock" >&2; exit 2 ;;
esac
