#!/usr/bin/env bash
# Runs every unit test binary and end-to-end script, tallies their TAP lines and ends with
# the one closing line "N passed, N failed". A binary or script that dies without reporting
# a failure counts as one failed test, so a crash can never pass silently.
set -u
cd "$(dirname "$0")/.."
: "${BUILD:=$(pwd)/build}"
export BUILD
export RUNMON="$BUILD/asan/runmon"
export RUNMON_REL="$BUILD/runmon"
export FAKEBIN="$BUILD/fakebin"
export FIXTURES="$(pwd)/fixtures"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:halt_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
export CMOCKA_MESSAGE_OUTPUT=TAP
export LC_ALL=C

filter=${TEST_FILTER:-}
passed=0
failed=0
failed_names=()
logdir=$(mktemp -d "${TMPDIR:-/tmp}/runmon-tests.XXXXXX")

tally() { # $1 = name, $2 = log, $3 = exit code
    local name=$1 log=$2 rc=$3 p f
    p=$(grep -c '^ok ' "$log")
    f=$(grep -c '^not ok ' "$log")
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        f=1
        echo "not ok - $name exited with status $rc without reporting a failure" >>"$log"
    fi
    passed=$((passed + p))
    failed=$((failed + f))
    if [ "$f" -gt 0 ]; then
        failed_names+=("$name")
        echo "FAIL $name ($p passed, $f failed); log:"
        sed 's/^/    /' "$log"
    else
        echo "ok   $name ($p passed)"
    fi
}

for bin in "$BUILD"/tests/test_*; do
    [ -x "$bin" ] || continue
    name=unit/$(basename "$bin")
    [ -n "$filter" ] && [[ $name != *$filter* ]] && continue
    log=$logdir/$(basename "$bin").log
    timeout -k 5 300 "$bin" >"$log" 2>&1
    tally "$name" "$log" $?
done

for script in tests/e2e/test_*.sh; do
    [ -f "$script" ] || continue
    name=e2e/$(basename "$script" .sh)
    [ -n "$filter" ] && [[ $name != *$filter* ]] && continue
    log=$logdir/$(basename "$script").log
    timeout -k 5 600 bash "$script" >"$log" 2>&1
    tally "$name" "$log" $?
done

rm -rf "$logdir"
[ ${#failed_names[@]} -gt 0 ] && echo "failed: ${failed_names[*]}"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
