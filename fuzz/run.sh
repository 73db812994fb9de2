#!/usr/bin/env bash
# Runs every built libFuzzer target ($BUILD/fuzz/fuzz_*) for $FUZZ_SECONDS each, with a
# corpus seeded from the fixtures. Exits non-zero if any target finds a crash.
set -u
cd "$(dirname "$0")/.."
: "${BUILD:=$(pwd)/build}"
: "${FUZZ_SECONDS:=60}"
# UBSan findings count as crashes (the fuzz build recovers from them by default).
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
status=0
for bin in "$BUILD"/fuzz/fuzz_*; do
    [ -x "$bin" ] || continue
    name=$(basename "$bin")
    corpus=$BUILD/fuzz/corpus/$name
    mkdir -p "$corpus"
    case $name in
    fuzz_gpucsv | fuzz_csvsplit) seeds=(fixtures/captures/*.csv fixtures/summary/*.csv fixtures/summary/*/gpu*.csv) ;;
    fuzz_dmon) seeds=(fixtures/captures/dmon*.txt fixtures/summary/dmon*) ;;
    fuzz_runlog) seeds=(fixtures/summary/*/runlog.jsonl fixtures/sessions/*/runlog.jsonl fuzz/seeds/runlog_*.jsonl) ;;
    fuzz_apps) seeds=(fixtures/sessions/*/apps.csv fixtures/captures/apps/pmon-*.txt fixtures/captures/apps/*apps*.csv) ;;
    fuzz_io) seeds=(fixtures/sessions/*/io.csv) ;;
    fuzz_stall) seeds=(fixtures/sessions/*/stall.csv) ;;
    fuzz_index) seeds=(fixtures/golden/sink/index.jsonl) ;;
    *) seeds=() ;;
    esac
    for s in "${seeds[@]}"; do [ -f "$s" ] && cp -n "$s" "$corpus/" 2>/dev/null; done
    echo "fuzz: $name for ${FUZZ_SECONDS}s"
    if ! "$bin" -max_total_time="$FUZZ_SECONDS" -max_len=65536 -rss_limit_mb=2048 -timeout=10 \
        -artifact_prefix="$BUILD/fuzz/$name-" "$corpus" >"$BUILD/fuzz/$name.log" 2>&1; then
        echo "fuzz: $name FAILED; see $BUILD/fuzz/$name.log"
        tail -30 "$BUILD/fuzz/$name.log"
        status=1
    else
        tail -2 "$BUILD/fuzz/$name.log" | sed "s/^/fuzz: $name: /"
    fi
done
exit $status
