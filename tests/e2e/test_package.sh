#!/usr/bin/env bash
# The Debian packages, as a user gets them: built from a copy of this tree (make deb's
# script, tests skipped there), checked by lintian, unpacked with dpkg-deb -x into a
# temporary root and used from there: runmon --version and a short recording on the fake
# nvidia-smi, a C program compiled and linked through pkg-config, the Python module running
# a phase, every man page rendered, the completion cases. Nothing is installed on the
# machine, and the tree is left as it was.
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
V=$(cat "$ROOT/VERSION")

if ! command -v dpkg-buildpackage >/dev/null || ! command -v dpkg-deb >/dev/null; then
    echo "ok 1 # skip dpkg-buildpackage not available (not a Debian system)"
    echo "1..1"
    exit 0
fi
if [ -n "${RUNMON_IN_PACKAGE_BUILD:-}" ]; then
    echo "ok 1 # skip inside a package build: it would build the packages again"
    echo "1..1"
    exit 0
fi

tree_before=$(cd "$ROOT" && git status --porcelain 2>/dev/null)
dpkg_before=$(dpkg-query -W -f='${Package} ${Status}\n' 'runmon' 'librunmon-dev' 'python3-runmon' 2>&1)

# --- build -------------------------------------------------------------------------------
if bash "$ROOT/debian/build-debs.sh" "$T/debs" >"$T/build.out" 2>&1; then
    ok "the packages build (dpkg-buildpackage -b, nocheck)"
else
    not_ok "the packages build (dpkg-buildpackage -b, nocheck)" "$(tail -n 30 "$T/build.out")"
    done_testing
    exit 1
fi
for p in runmon librunmon-dev python3-runmon; do
    f=$(ls "$T/debs/${p}_${V}_"*.deb 2>/dev/null)
    [ -f "$f" ] && ok "package $p $V built" || not_ok "package $p $V built" "$(ls "$T/debs")"
done

# --- lintian: no error, no warning -------------------------------------------------------
if command -v lintian >/dev/null; then
    lintian --pedantic -I "$T/debs/"*.changes >"$T/lintian.out" 2>&1
    grep -v 'running with root privileges' "$T/lintian.out" | sed 's/^/# lintian: /'
    bad=$(grep -E '^[EW]: ' "$T/lintian.out" || true)
    expect_eq "lintian: no error and no warning" "" "$bad"
else
    not_ok "lintian is installed (.ci/deps.sh test installs it)"
fi

# --- unpack into a temporary root --------------------------------------------------------
R=$T/root
for d in "$T/debs/"*.deb; do
    [[ $d == *-dbgsym_* ]] && continue
    dpkg-deb -x "$d" "$R" || not_ok "dpkg-deb -x $(basename "$d")"
done
arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
contents() { dpkg-deb -c "$T/debs/${1}_${V}_"*.deb | awk '$1 !~ /^d/ {print $6}' | sed 's|^\./||' |
    grep -v '^usr/share/doc/' | sort; }
expect_eq "runmon: the program, its man pages, completion and alert rules" \
    "usr/bin/runmon
usr/share/bash-completion/completions/runmon
$(cd "$ROOT/man" && ls *.1 | sort | sed 's|^|usr/share/man/man1/|; s|$|.gz|')
$(cd "$ROOT/man" && ls *.5 | sort | sed 's|^|usr/share/man/man5/|; s|$|.gz|')
usr/share/runmon/runmon-alerts.yml" "$(contents runmon)"
expect_eq "librunmon-dev: the static library, the public headers, runmon.pc" \
    "usr/include/runmon/kvargs.h
usr/include/runmon/runlog.h
usr/lib/$arch/librunmon.a
usr/lib/$arch/pkgconfig/runmon.pc" "$(contents librunmon-dev)"
expect_eq "python3-runmon: the module in /usr/lib/python3/dist-packages" \
    "$(cd "$ROOT/python/runmon" && { ls *.py; echo _version.py; } | sort -u |
        sed 's|^|usr/lib/python3/dist-packages/runmon/|')" "$(contents python3-runmon)"
# make install puts the same set on a machine (man pages uncompressed).
make -s -C "$ROOT" BUILD="$BUILD" PREFIX=/usr LIBDIR="/usr/lib/$arch" DESTDIR="$T/inst" install \
    >"$T/install.out" 2>&1 || not_ok "make install" "$(tail -n 5 "$T/install.out")"
expect_eq "make install PREFIX=/usr installs what the packages hold" \
    "$(for p in runmon librunmon-dev python3-runmon; do contents $p; done | sed 's/\.gz$//' | sort)" \
    "$(cd "$T/inst" && find . -type f | sed 's|^\./||' | sort)"

# --- the program, from the root ----------------------------------------------------------
out=$("$R/usr/bin/runmon" --version)
expect_eq "runmon --version from the package" "runmon $V" "$(head -n 1 <<<"$out")"
expect_match "runmon --version names the libraries" '^built with: jansson .*, pcre2 .*, libcsv .*, ncurses ' \
    "$(sed -n 2p <<<"$out")"
export FAKE_SMI_CAPTURES="$FIXTURES/captures"
PATH="$FAKEBIN:$R/usr/bin:/usr/bin:/bin" FAKE_SMI_GPUS=2 FAKE_SMI_STATE_DIR="$T" \
    "$R/usr/bin/runmon" record -q -o "$T/sink" -i 0.2 -- sleep 1.5
expect_eq "a recording with the packaged runmon exits 0" 0 "$?"
s=$(session_dir "$T/sink")
expect_eq "the recording completed" completed "$(jq -r .status "$s/session.json" 2>/dev/null)"
check "the recording has gpu rows from the fake nvidia-smi" test "$(rows "$s/gpu.csv")" -ge 2
check "the recording has a summary" test -s "$s/summary.json"

# --- C: compile and link through pkg-config, from the root only --------------------------
export PKG_CONFIG_PATH="$R/usr/lib/$arch/pkgconfig"
pc() { pkg-config --define-variable=prefix="$R/usr" "$@" runmon; }
expect_eq "pkg-config --modversion runmon" "$V" "$(pc --modversion)"
flags=$(pc --cflags --libs --static)
missing=""
for l in -lrunmon -ljansson -lpcre2-8 -lcsv; do [[ " $flags " == *" $l "* ]] || missing+=" $l"; done
expect_eq "pkg-config --static names -lrunmon and the private libraries (got: $flags)" "" "$missing"
for h in runlog kvargs; do
    echo "#include <runmon/$h.h>" >"$T/h_$h.c"
    check "<runmon/$h.h> compiles on its own from the root" \
        cc -std=c11 -Wall -Wextra -Werror -fsyntax-only $(pc --cflags) "$T/h_$h.c"
done
cat >"$T/prog.c" <<'C'
#include <runmon/kvargs.h>
#include <runmon/runlog.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    rm_runlog *log = argc > 1 ? rm_runlog_open(argv[1]) : NULL;
    if (!log) return 1;
    const char *kv[] = {"lr=0.1", "model=resnet"};
    json_t *extra = rm_kv_object(2, kv);
    int rc = rm_runlog_enter(log, "train", extra) || rm_runlog_event_kv(log, "checkpoint", 1, kv) ||
             rm_runlog_exit(log, "train", RM_RUNLOG_OK, NULL) ||
             rm_runlog_phase(log, "eval", 1.5, NULL);
    json_decref(extra);
    if (rm_runlog_close(log)) rc = 1;
    if (rc) fprintf(stderr, "prog: %s\n", rm_runlog_errmsg());
    return rc;
}
C
(cd "$T" && cc -std=c11 -Wall -Wextra -Werror -o prog prog.c $flags) 2>"$T/cc.err"
expect_eq "a C program links with \$(pkg-config --cflags --libs --static runmon)" "" "$(cat "$T/cc.err")"
# Without --static too: the header's jansson (and the writer's libm) come with runmon.
(cd "$T" && cc -std=c11 -Wall -Wextra -Werror -o prog-plain prog.c $(pc --cflags --libs)) 2>"$T/cc.err"
expect_eq "... and with \$(pkg-config --cflags --libs runmon) ($(pc --cflags --libs))" "" "$(cat "$T/cc.err")"
"$T/prog-plain" "$T/c-plain.jsonl"
expect_eq "... that program runs" "0 4" "$? $(wc -l <"$T/c-plain.jsonl" 2>/dev/null)"
"$T/prog" "$T/c.jsonl"
expect_eq "the C program writes its run log" "phase_enter/train event/checkpoint phase_exit/train phase/eval" \
    "$(jq -r '"\(.type)/\(.name // .event)"' "$T/c.jsonl" | tr '\n' ' ' | sed 's/ $//')"
expect_eq "the C program's extra fields are typed" '0.1 "resnet"' \
    "$(jq -c 'select(.type=="phase_enter") | .lr, .model' "$T/c.jsonl" | tr '\n' ' ' | sed 's/ $//')"

# --- Python, from the root ---------------------------------------------------------------
out=$(cd "$T" && PYTHONPATH="$R/usr/lib/python3/dist-packages" python3 - "$T/py.jsonl" <<'PY'
import sys
import runmon
print(runmon.__file__)
print(runmon.__version__)
runmon.open(sys.argv[1])
with runmon.phase("train", lr=0.1):
    with runmon.phase("step"):
        pass
runmon.close()
PY
)
expect_eq "python3 imports runmon from the root" "$R/usr/lib/python3/dist-packages/runmon/__init__.py" \
    "$(head -n 1 <<<"$out")"
expect_eq "runmon.__version__ from the package" "$V" "$(sed -n 2p <<<"$out")"
expect_eq "a phase from Python reaches the run log" "phase_enter/train phase_enter/train/step phase_exit/train/step phase_exit/train" \
    "$(jq -r '"\(.type)/\(.path)"' "$T/py.jsonl" 2>/dev/null | tr '\n' ' ' | sed 's/ $//')"

# --- man pages, as installed -------------------------------------------------------------
for page in "$R"/usr/share/man/man*/*; do
    name=${page#"$R"/usr/share/man/}
    warn=$(MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
    expect_eq "man -l $name renders without warnings" "" "$warn"
done
expect_match "installed pages carry the version" "runmon $V" \
    "$(MANWIDTH=80 man -l "$R/usr/share/man/man1/runmon.1.gz" 2>/dev/null | tail -n 1)"

# --- completion, as installed ------------------------------------------------------------
. "$ROOT/tests/e2e/completion_cases.sh"
PATH="$R/usr/bin:$PATH"
completion_cases "$R/usr/share/bash-completion/completions/runmon" "$T/sink" "$(basename "$s")"

# --- nothing changed on the machine or in the tree ---------------------------------------
expect_eq "nothing was installed on the machine" "$dpkg_before" \
    "$(dpkg-query -W -f='${Package} ${Status}\n' 'runmon' 'librunmon-dev' 'python3-runmon' 2>&1)"
expect_eq "the tree is left as it was" "$tree_before" "$(cd "$ROOT" && git status --porcelain 2>/dev/null)"
done_testing
