#!/usr/bin/env bash
# runmon benchmarks (make bench). Each module adds a section below: a `section` header, then
# `figure NAME VALUE UNIT` lines and `ratio` lines comparing against a baseline measured in
# the same run (never against numbers from another machine or day).
# BENCH_FILTER=word runs only the sections whose name contains it.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${BUILD:=$(pwd)/build}"
export LC_ALL=C
B=$(mktemp -d "${TMPDIR:-/tmp}/runmon-bench.XXXXXX")
trap 'rm -rf "$B"' EXIT
mkdir -p "$BUILD/bench"

want() { [ -z "${BENCH_FILTER:-}" ] || [[ $1 == *"$BENCH_FILTER"* ]]; }
section() { printf '\n== %s\n' "$1"; }
figure() { printf '  %-44s %12s %s\n' "$1" "$2" "$3"; }
ratio() { # NAME A B: prints A/B
    figure "$1" "$(awk -v a="$2" -v b="$3" 'BEGIN { printf "%.2f", a / b }')" "x"
}
# Builds bench/NAME.c against the -O2 library.
build_bench() {
    ${CC:-cc} -std=c11 -Wall -Wextra -Werror -D_GNU_SOURCE -I. -O2 -o "$BUILD/bench/$1" \
        "bench/$1.c" "$BUILD/librunmon.a" -lcsv -ljansson -lpcre2-8 -lpthread -lm
}
now_ns() { date +%s%N; }

# ---- RunLog -------------------------------------------------------------------------------
if want runlog; then
    section "RunLog: appending lines (one write() per line)"
    build_bench bench_runlog
    mkdir -p "$B/runlog"
    N=${RUNLOG_BENCH_LINES:-200000}
    eval "$("$BUILD/bench/bench_runlog" "$B/runlog" "$N" | awk '{ print $1 "=" $2 }')"
    figure "C API rm_runlog_event ($N lines)" "$api_lines_per_s" "lines/s"
    figure "baseline: stdio fprintf + fflush per line" "$stdio_fflush_lines_per_s" "lines/s"
    figure "floor: bare write() of a prebuilt line" "$bare_write_lines_per_s" "lines/s"
    ratio "C API / stdio baseline" "$api_lines_per_s" "$stdio_fflush_lines_per_s"
    ratio "C API / bare write()" "$api_lines_per_s" "$bare_write_lines_per_s"

    section "RunLog: CLI, one 'runmon log event' per invocation"
    RUNS=${RUNLOG_BENCH_RUNS:-500}
    F=$B/runlog/cli.jsonl
    t0=$(now_ns)
    for ((i = 0; i < RUNS; i++)); do "$BUILD/runmon" log --file "$F" event step "i=$i" loss=0.25; done
    t1=$(now_ns)
    for ((i = 0; i < RUNS; i++)); do /bin/true; done
    t2=$(now_ns)
    cli_ms=$(awk -v d=$((t1 - t0)) -v n="$RUNS" 'BEGIN { printf "%.3f", d / n / 1e6 }')
    true_ms=$(awk -v d=$((t2 - t1)) -v n="$RUNS" 'BEGIN { printf "%.3f", d / n / 1e6 }')
    figure "runmon log event ($RUNS runs)" "$cli_ms" "ms/invocation"
    figure "baseline: /bin/true, same loop" "$true_ms" "ms/invocation"
    ratio "runmon log / /bin/true" "$cli_ms" "$true_ms"
    [ "$(wc -l <"$F")" -eq "$RUNS" ] || { echo "bench: CLI lines missing" >&2; exit 1; }
fi
