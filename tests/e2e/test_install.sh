#!/usr/bin/env bash
# make install and make uninstall with PREFIX and DESTDIR: the same set as the Debian
# packages, nothing outside $(DESTDIR)$(PREFIX), and uninstall takes all of it back.
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
mk() { make -s -C "$ROOT" BUILD="$BUILD" PREFIX=/opt/rm DESTDIR="$T/root" "$@" >>"$T/make.log" 2>&1; }

check "make install" mk install
files=$(cd "$T/root" && find . -type f | sed 's|^\./||' | sort)
outside=$(grep -v '^opt/rm/' <<<"$files" || true)
expect_eq "nothing outside DESTDIR/PREFIX" "" "$outside"
pages=$(cd "$ROOT/man" && ls *.[1-8] | sort)
want="opt/rm/bin/runmon
opt/rm/include/runmon/kvargs.h
opt/rm/include/runmon/runlog.h
opt/rm/lib/librunmon.a
opt/rm/lib/pkgconfig/runmon.pc
$(cd "$ROOT/python/runmon" && { ls *.py; echo _version.py; } | sort -u | sed 's|^|opt/rm/lib/python3/dist-packages/runmon/|')
$(for p in $pages; do echo "opt/rm/share/man/man${p##*.}/$p"; done)
opt/rm/share/bash-completion/completions/runmon
opt/rm/share/runmon/runmon-alerts.yml"
expect_eq "the installed set" "$(sort <<<"$want")" "$files"
expect_eq "runmon.pc's prefix" "prefix=/opt/rm" "$(grep '^prefix=' "$T/root/opt/rm/lib/pkgconfig/runmon.pc")"
expect_eq "runmon.pc's paths follow \${prefix}" "libdir=\${prefix}/lib includedir=\${prefix}/include" \
    "$(grep -E '^(libdir|includedir)=' "$T/root/opt/rm/lib/pkgconfig/runmon.pc" | tr '\n' ' ' | sed 's/ $//')"
mode=$(stat -c %a "$T/root/opt/rm/bin/runmon") && expect_eq "the program is 0755" 755 "$mode"
bad=$(cd "$T/root" && find . -type f ! -path ./opt/rm/bin/runmon -perm /111)
expect_eq "every other file is not executable" "" "$bad"
"$T/root/opt/rm/bin/runmon" --version >/dev/null && ok "the installed program runs" ||
    not_ok "the installed program runs"
# A Python run leaves __pycache__ behind: uninstall takes it too.
(cd "$T" && PYTHONPATH="$T/root/opt/rm/lib/python3/dist-packages" python3 -c 'import runmon') ||
    not_ok "the installed Python module imports"
check "make uninstall" mk uninstall
left=$(cd "$T/root" && find . -type f)
expect_eq "make uninstall removes every file" "" "$left"
for d in include/runmon share/runmon lib/python3/dist-packages/runmon; do
    [ ! -e "$T/root/opt/rm/$d" ] && ok "uninstall removes $d" || not_ok "uninstall removes $d"
done
done_testing
