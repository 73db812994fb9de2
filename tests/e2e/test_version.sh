#!/usr/bin/env bash
# The version has one home, VERSION. The program, debian/changelog, the Python package
# (from a checkout, and as make install writes it) and runmon.pc all say the same.
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
v=$(cat "$ROOT/VERSION")
expect_match "VERSION holds one version" '^[0-9]+\.[0-9]+\.[0-9]+$' "$v"
expect_eq "runmon --version" "runmon $v" "$("$RUNMON" --version | head -n 1)"
if command -v dpkg-parsechangelog >/dev/null; then
    cl=$(cd "$ROOT" && dpkg-parsechangelog -S Version)
else
    cl=$(sed -n '1s/^runmon (\([^)]*\)).*/\1/p' "$ROOT/debian/changelog")
fi
expect_eq "debian/changelog's newest entry (native: no Debian revision)" "$v" "$cl"
py=$(cd "$T" && PYTHONPATH="$ROOT/python" python3 -c 'import runmon; print(runmon.__version__)')
expect_eq "the Python package from the checkout" "$v" "$py"
expect_eq "python/VERSION (pyproject's version file) is the same file" "$v" "$(cat "$ROOT/python/VERSION")"
grep -q '^dynamic = \["version"\]' "$ROOT/python/pyproject.toml" &&
    ok "pyproject.toml takes its version from python/VERSION" ||
    not_ok "pyproject.toml takes its version from python/VERSION"
# No other file spells out a version.
stale=$(cd "$ROOT" && git grep -nE '(__version__|version) *= *"[0-9]+\.[0-9]+' -- python cli '*.in' || true)
expect_eq "no version literal in python/, cli/ or *.in" "" "$stale"

# What make install writes from VERSION.
make -s -C "$ROOT" BUILD="$BUILD" PREFIX=/usr DESTDIR="$T/root" install >"$T/install.log" 2>&1 ||
    not_ok "make install" "$(tail -n 5 "$T/install.log")"
expect_eq "runmon.pc's Version" "$v" "$(sed -n 's/^Version: //p' "$T/root/usr/lib/pkgconfig/runmon.pc")"
py=$(cd "$T" && PYTHONPATH="$T/root/usr/lib/python3/dist-packages" python3 -c \
    'import runmon, runmon._version; print(runmon.__version__, runmon._version.__version__)')
expect_eq "the installed Python package" "$v $v" "$py"
expect_match "the installed man pages' footer" "runmon $v" \
    "$(sed -n '/^\.TH/p' "$T/root/usr/share/man/man1/runmon-record.1")"
left=$(grep -rl '@VERSION@' "$T/root" || true)
expect_eq "no @VERSION@ left in installed files" "" "$left"
done_testing
