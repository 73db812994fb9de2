#!/usr/bin/env bash
# The Python package installed as the README says, offline: pip with --no-index, no pip
# configuration, proxies that lead nowhere. Into fresh venvs of Debian's python3 (no system
# site packages, so neither setuptools' wheel package nor anything else from the machine):
# `pip install ./python` with and without build isolation, editable, and from the sdist; each
# imports from outside the checkout, carries the checkout's VERSION and writes a run-log line.
# The backend's fallback reader (Python < 3.11 has no tomllib) reads pyproject.toml as tomllib
# does, and the checkout is left as it was.
. "$(dirname "$0")/lib.sh"
REPO=$(cd "$(dirname "$0")/../.." && pwd)
V=$(cat "$REPO/VERSION")
PY=/usr/bin/python3 # Debian's, not a pyenv shim first on PATH
# Offline: nothing from the machine's pip settings (find-links, index), no way out.
unset PIP_FIND_LINKS PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_REQUIRE_VIRTUALENV
export PIP_CONFIG_FILE=/dev/null PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1
export http_proxy=http://127.0.0.1:9 https_proxy=http://127.0.0.1:9 HTTP_PROXY=http://127.0.0.1:9
export HTTPS_PROXY=http://127.0.0.1:9 no_proxy= NO_PROXY= PYTHONDONTWRITEBYTECODE=1
unset PYTHONPATH RUNMON_RUNLOG RUNMON_PHASE_PATH
mkdir -p "$T/cwd"

if ! "$PY" -c 'import ensurepip, venv' 2>/dev/null; then
    not_ok "Debian's python3 has venv and ensurepip" "install python3-venv (.ci/deps.sh test): ensurepip brings pip into a venv"
    done_testing
    exit
fi
before=$(cd "$REPO/python" && find . -path '*/__pycache__' -prune -o -print | sort)

# venv NAME: a fresh venv with its own pip (ensurepip: from Debian's python3-pip-whl).
venv() { "$PY" -m venv "$T/$1" >"$T/$1.log" 2>&1; }
# imports VENV WHAT: runmon from VENV, run outside the checkout: its version and a run-log
# line; its file goes to $T/VENV.file.
imports() {
    local v=$1 what=$2 out
    out=$(cd "$T/cwd" && "$T/$v/bin/python" -c 'import runmon, sys
print(runmon.__file__)
print(runmon.__version__)
runmon.open(sys.argv[1])
runmon.log_phase("installed", 1.5)' "$T/$v.jsonl" 2>"$T/$v.err")
    expect_eq "$what: imports runmon $V" "$V" "$(sed -n 2p <<<"$out")"
    expect_eq "$what: ... and writes its run log" "phase installed 1.5" \
        "$(jq -r '"\(.type) \(.name) \(.seconds)"' "$T/$v.jsonl" 2>/dev/null)"
    head -1 <<<"$out" >"$T/$v.file"
}

# 1. pip install ./python, from the checkout, build isolation on (pip's default).
check "a fresh venv (Debian's python3)" venv v1
(cd "$REPO" && "$T/v1/bin/python" -m pip install --no-index ./python) >"$T/v1.pip" 2>&1; rc=$?
expect_eq "pip install --no-index ./python: offline, build isolation on" 0 "$rc"
[ "$rc" -eq 0 ] || tail -5 "$T/v1.pip" | sed 's/^/#   /'
imports v1 "pip install ./python"
file=$(cat "$T/v1.file")
expect_match "... from the venv, not the checkout" "^$T/v1/lib/python3[^/]*/site-packages/runmon/__init__\.py$" "$file"
want=$(cd "$REPO/python/runmon" && { ls ./*.py | sed 's|^\./||'; echo _version.py; } | sort -u | tr '\n' ' ')
got=$(cd "$(dirname "$file")" 2>/dev/null && ls ./*.py | sed 's|^\./||' | sort | tr '\n' ' ')
expect_eq "... every module of runmon/, and _version.py" "$want" "$got"
meta=$("$T/v1/bin/python" -m pip show runmon 2>/dev/null)
expect_eq "... pip knows it: name, version, licence" "runmon $V MIT" \
    "$(awk -F': ' '$1=="Name"{n=$2} $1=="Version"{v=$2} $1=="License"{l=$2} END{print n, v, l}' <<<"$meta")"
check "pip uninstall takes it back" "$T/v1/bin/python" -m pip uninstall -y -q runmon
check "... nothing of runmon left in the venv" test -z "$(find "$T/v1/lib" -name 'runmon*')"

# 2. Without build isolation (the build runs in the venv itself, which has no wheel package).
venv v2
(cd "$REPO" && "$T/v2/bin/python" -m pip install --no-index --no-build-isolation ./python) >"$T/v2.pip" 2>&1; rc=$?
expect_eq "pip install --no-index --no-build-isolation ./python in a plain venv" 0 "$rc"
[ "$rc" -eq 0 ] || tail -5 "$T/v2.pip" | sed 's/^/#   /'
imports v2 "--no-build-isolation"

# 3. Editable: the checkout's runmon/ is what imports.
venv v3
(cd "$REPO" && "$T/v3/bin/python" -m pip install --no-index -e ./python) >"$T/v3.pip" 2>&1; rc=$?
expect_eq "pip install --no-index -e ./python" 0 "$rc"
[ "$rc" -eq 0 ] || tail -5 "$T/v3.pip" | sed 's/^/#   /'
imports v3 "editable"
expect_eq "... the checkout's module" "$REPO/python/runmon/__init__.py" "$(cat "$T/v3.file")"

# 4. The sdist the backend writes installs the same way.
mkdir -p "$T/dist"
sd=$(cd "$REPO/python" && "$PY" -c 'import sys; sys.path.insert(0, "_build"); import runmon_build
print(runmon_build.build_sdist(sys.argv[1]))' "$T/dist" 2>"$T/sdist.err")
expect_eq "the backend writes an sdist" "runmon-$V.tar.gz" "$sd"
venv v4
"$T/v4/bin/python" -m pip install --no-index "$T/dist/$sd" >"$T/v4.pip" 2>&1; rc=$?
expect_eq "pip install --no-index of the sdist" 0 "$rc"
[ "$rc" -eq 0 ] || tail -5 "$T/v4.pip" | sed 's/^/#   /'
imports v4 "sdist"

# 5. Python 3.9 and 3.10 have no tomllib: the backend's own reader must read [project] alike.
cmp=$(cd "$REPO/python" && "$PY" -c 'import json, sys
sys.path.insert(0, "_build")
import runmon_build
a = runmon_build._project()
sys.modules["tomllib"] = None  # import tomllib now fails, as before 3.11
b = runmon_build._project()
print("same" if a == b else json.dumps([a, b]))' 2>&1)
expect_eq "without tomllib the backend reads pyproject.toml's [project] as tomllib does" same "$cmp"

after=$(cd "$REPO/python" && find . -path '*/__pycache__' -prune -o -print | sort)
expect_eq "the checkout's python/ is left as it was" "" "$(diff <(echo "$before") <(echo "$after"))"
done_testing
