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
# A C program against the installed header and library, built as runmon.pc says, both without
# and with --static: runlog.h includes jansson.h and the program calls jansson itself, so the
# plain form must bring jansson (a public requirement, not only a private one).
cat >"$T/prog.c" <<'EOF'
#include <runmon/runlog.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    rm_runlog *log = rm_runlog_open(argc > 1 ? argv[1] : "runlog.jsonl");
    if (!log) {
        fprintf(stderr, "%s\n", rm_runlog_errmsg());
        return 1;
    }
    rm_runlog_enter(log, "train", NULL);
    json_t *d = json_pack("{s:i, s:f}", "epoch", 1, "loss", 0.25);
    rm_runlog_event(log, "checkpoint", d);
    json_decref(d);
    const char *kv[] = {"split=val", "accuracy=0.93"};
    rm_runlog_phase_kv(log, "eval", 12.5, 2, kv);
    rm_runlog_exit(log, "train", RM_RUNLOG_OK, NULL);
    return rm_runlog_close(log) ? 1 : 0;
}
EOF
# Installed as a user would (PREFIX alone: runmon.pc's paths are then the real ones).
P=$T/prefix
mkp() { make -s -C "$ROOT" BUILD="$BUILD" PREFIX="$P" "$@" >>"$T/make.log" 2>&1; }
check "make install PREFIX=\$T/prefix" mkp install
pc() { PKG_CONFIG_PATH="$P/lib/pkgconfig" pkg-config "$@"; }
for how in plain --static; do
    opt=${how#plain}
    flags=$(pc --cflags --libs $opt runmon 2>"$T/pc.err"); rc=$?
    expect_eq "pkg-config --cflags --libs ${opt:+$opt }runmon answers ($flags)" 0 "$rc"
    # shellcheck disable=SC2086
    cc -o "$T/prog-$how" "$T/prog.c" $flags 2>"$T/cc.err"; rc=$?
    expect_eq "a C program compiles and links with \$(pkg-config --cflags --libs ${opt:+$opt }runmon)" 0 "$rc"
    [ "$rc" -eq 0 ] || sed 's/^/#   /' "$T/cc.err" | tail -4
    "$T/prog-$how" "$T/run-$how.jsonl" 2>"$T/prog.err"; rc=$?
    expect_eq "... and runs ($how)" 0 "$rc"
    expect_eq "... writing its run log ($how): enter, event, phase, exit" \
        "phase_enter event phase phase_exit" \
        "$(jq -r .type "$T/run-$how.jsonl" 2>/dev/null | tr '\n' ' ' | sed 's/ $//')"
done
check "make uninstall PREFIX=\$T/prefix" mkp uninstall
expect_eq "... leaves no file there" "" "$(find "$P" -type f)"
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
