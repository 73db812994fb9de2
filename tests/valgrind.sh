#!/usr/bin/env bash
# make valgrind: the unit tests and a short recording under valgrind's memcheck, built
# without sanitizers (they do not mix with valgrind). Fails on any error or leak.
set -u
cd "$(dirname "$0")/.."
: "${BUILD:=$(pwd)/build}"
V="valgrind --quiet --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect --trace-children=no"
out=$BUILD/valgrind; mkdir -p "$out"
fail=0
for src in tests/unit/test_*.c; do
    name=$(basename "$src" .c)
    cc -std=c11 -D_GNU_SOURCE -I. -O1 -g -o "$out/$name" "$src" "$BUILD/librunmon.a" -lcmocka \
        -lcsv -ljansson -lpcre2-8 -lpthread -lm || { fail=1; continue; }
    if $V "$out/$name" >"$out/$name.log" 2>&1; then echo "ok   valgrind $name"
    else echo "FAIL valgrind $name (see $out/$name.log)"; fail=1; fi
done
T=$(mktemp -d)
# The per-process collector sees this script's shell (not in the workload) on GPU 0.
echo "0 $$ C 100 5 5 bash" >"$T.apps"
if PATH=$BUILD/fakebin:$PATH FAKE_SMI_GPUS=2 FAKE_SMI_CAPTURES=$(pwd)/fixtures/captures \
    FAKE_SMI_APPS="$T.apps" FAKE_SMI_PMON_MS=200 \
    $V "$BUILD/runmon" record -q -o "$T" -i 0.2 -- sleep 2 >"$out/record.log" 2>&1; then
    echo "ok   valgrind runmon record"
else echo "FAIL valgrind runmon record (see $out/record.log)"; fail=1; fi
$V "$BUILD/runmon" summary --format json "$T" >/dev/null 2>"$out/summary.log" && echo "ok   valgrind runmon summary" || { echo "FAIL valgrind runmon summary"; fail=1; }
$V "$BUILD/runmon" report "$T" >/dev/null 2>"$out/report.log" && echo "ok   valgrind runmon report" || { echo "FAIL valgrind runmon report"; fail=1; }
$V "$BUILD/runmon" top --once "$T" >/dev/null 2>"$out/top.log" && echo "ok   valgrind runmon top --once" || { echo "FAIL valgrind runmon top --once"; fail=1; }
$V "$BUILD/runmon" summary --format text fixtures/sessions/h100-torch-phases >/dev/null 2>"$out/summary-apps.log" &&
    echo "ok   valgrind runmon summary (apps.csv, framework peaks)" || { echo "FAIL valgrind runmon summary (apps)"; fail=1; }
rm -rf "$T" "$T.apps"
exit $fail
