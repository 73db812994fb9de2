#!/usr/bin/env bash
# The README's recipes, run as written (paths aside): tail -F of a live run log through jq,
# a jq one-liner over summary.json, and a sweep recorded as one session with a table per
# configuration; and its first-steps statements, each quoted and checked: what make test
# runs npm ci for, the default sink, JSON when standard output is not a terminal.
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
export FAKE_SMI_CAPTURES="$FIXTURES/captures" FAKE_SMI_GPUS=2 FAKE_SMI_VARY=1
mkdir -p "$T/bin" && ln -s "$RUNMON" "$T/bin/runmon"
export PATH="$T/bin:$FAKEBIN:/usr/local/bin:/usr/bin:/bin"
cd "$T"

# A sweep recorded as one session; tail -F follows the live run log through `latest`.
runmon record -q -o sweep -i 0.2 -- sh -c 'sleep 0.5; for bs in 32 64; do runmon phase "bs$bs" -- sleep 0.6; done' &
rpid=$!; track "$rpid"
wait_for "test -e sweep/latest/runlog.jsonl" 10
tail -F sweep/latest/runlog.jsonl 2>/dev/null | jq -c --unbuffered 'select(.type == "phase_exit") | {path, seconds, status}' >"$T/live.txt" &
tpid=$!; track "$tpid"
wait "$rpid"; rc=$?
expect_eq "sweep: record exits 0" 0 "$rc"
check "tail -F | jq shows both phases as they end" wait_for "test \$(wc -l <$T/live.txt) -ge 2" 20
kill "$tpid" 2>/dev/null; pkill -P "$tpid" 2>/dev/null
expect_match "tail -F | jq: first phase line" '^\{"path":"bs32","seconds":0\.[0-9]+,"status":"ok"\}$' "$(head -1 "$T/live.txt")"

out=$(jq -r '.gpus[] | "\(.index) \(.name): peak \(.vram_mb.peak) MiB, \(.energy_wh) Wh"' sweep/latest/summary.json)
expect_match "jq over summary.json: one line per GPU" '^0 NVIDIA H200: peak [0-9]+ MiB, [0-9.]+ Wh
1 NVIDIA H200: peak [0-9]+ MiB, [0-9.]+ Wh$' "$out"

table=$(jq -r '.phases[] | select(.depth == 0) | [.path, ([.gpus[].vram_mb.peak] | max), ([.gpus[].energy_wh] | add)] | @tsv' sweep/latest/summary.json)
expect_eq "per-configuration table: one row per configuration" "bs32 bs64" "$(cut -f1 <<<"$table" | tr '\n' ' ' | sed 's/ $//')"
check "per-configuration table: peak VRAM and energy are numbers" test -z "$(awk -F'\t' '$2 !~ /^[0-9]+$/ || $3 !~ /^[0-9.]+$/' <<<"$table")"

# "Your workload's memory": the two jq recipes over a session recorded on a real H100 with torch.
cp -r "$FIXTURES/sessions/h100-torch-phases" "$T/h100"
"$RUNMON" summary "$T/h100" --format json -o "$T/h100/summary.json"
mem=$(jq -r '.phases[] | [.path, ([.gpus[].workload_vram_mb.peak] | max), .framework_peak_mb.max] | @tsv' "$T/h100/summary.json")
expect_eq "workload recipe: per phase, nvidia-smi's workload peak and torch's own peak" \
    "$(printf 'load\t1030\t512\ntrain\t4420\t2720\ntrain/step\t4420\t2720')" "$mem"
procs=$(jq -r '.gpus[].processes[] | select(.in_workload) | "\(.gpu) \(.pid) \(.name) \(.peak_mb) MiB"' "$T/h100/summary.json")
expect_eq "workload recipe: the workload's processes" "0 496 python3 4420 MiB" "$procs"

# --- First steps: what the README says about make test, output formats, the default sink ---
readme() { tr '\n' ' ' <"$ROOT/README.md" | tr -s ' '; } # sentences across line breaks
has() { [[ "$(readme)" == *"$1"* ]]; }
# "make test then runs npm ci ... installs puppeteer-core and its dependencies at the versions
# package-lock.json pins (none has an install script) ... drives Debian's /usr/bin/chromium".
check "README: make test runs npm ci, and what for" has 'make test` then runs `npm ci` in the checkout when `node_modules/puppeteer-core` is missing'
check "Makefile: make test runs .ci/deps.sh test" grep -q '^	@bash .ci/deps.sh test$' "$ROOT/Makefile"
# .ci/deps.sh test on a copy, with every package reported installed and a fake npm: npm ci
# runs in the checkout when puppeteer-core is missing, and not when it is there.
mkdir -p "$T/deps/.ci" "$T/deps/bin"
cp "$ROOT/.ci/deps.sh" "$T/deps/.ci/"
printf '#!/bin/sh\necho "install ok installed"\n' >"$T/deps/bin/dpkg-query"
printf '#!/bin/sh\necho "$PWD $*" >>"%s/npm.log"\n' "$T" >"$T/deps/bin/npm"
chmod +x "$T/deps/bin/dpkg-query" "$T/deps/bin/npm"
PATH="$T/deps/bin:$PATH" bash "$T/deps/.ci/deps.sh" test 2>/dev/null
expect_eq ".ci/deps.sh test: npm ci in the checkout when puppeteer-core is missing" \
    "$T/deps ci --no-audit --no-fund" "$(cat "$T/npm.log" 2>/dev/null)"
mkdir -p "$T/deps/node_modules/puppeteer-core" && : >"$T/npm.log"
PATH="$T/deps/bin:$PATH" bash "$T/deps/.ci/deps.sh" test 2>/dev/null
expect_eq "... and not when it is there" "" "$(cat "$T/npm.log")"
expect_eq "package.json: puppeteer-core only (not puppeteer, which downloads a browser)" \
    '["puppeteer-core"]' "$(jq -c '.dependencies | keys' "$ROOT/package.json")"
expect_eq "package-lock.json: no package with an install script" 0 \
    "$(jq '[.packages[] | select(.hasInstallScript)] | length' "$ROOT/package-lock.json")"
check "the 390 px test drives Debian's chromium" grep -q "executablePath: exe || '/usr/bin/chromium'" "$ROOT/tests/e2e/report_check.js"

# "The default sink is ./runmon: runmon record without -o writes there. ... without one they
# look in this order: the current folder when it is a sink ..., else ./runmon."
check "README: the default sink is ./runmon" has 'The default sink is `./runmon`: `runmon record` without `-o` writes there.'
check "README: the lookup order without a path" has 'without one they look in this order: the current folder when it is a sink (or a session folder; `cd runs && runmon top` works), else `./runmon`.'
mkdir -p "$T/first" && cd "$T/first" || exit 1
runmon record -q --no-gpu -i 0.2 -- true; rc=$?
id=$(basename "$(session_dir runmon)")
expect_eq "runmon record without -o: a session in ./runmon" "0 yes" "$rc $(test -f "runmon/$id/session.json" && echo yes)"
expect_match "runmon top --once without a path: that session" "$id" "$(runmon top --once 2>&1 | head -3)"
# "runmon summary and runmon sessions print text tables on a terminal and JSON when their
# standard output is not one (a pipe, a file), as summary also does with -o FILE ... runmon top
# --once a text frame, runmon report the path it wrote."
check "README: JSON when stdout is not a terminal, for summary and sessions" has '`runmon summary` and `runmon sessions` print text tables on a terminal and JSON when their standard output is not one (a pipe, a file), as `summary` also does with `-o FILE`'
for c in "summary runmon" "sessions runmon"; do
    # shellcheck disable=SC2086
    expect_eq "runmon $c into a pipe: JSON" "runmon-${c%% *}" "$(runmon $c 2>/dev/null | jq -r .format)"
    # shellcheck disable=SC2086
    runmon $c >"$T/to-file" 2>/dev/null
    expect_eq "runmon $c into a file: JSON" "runmon-${c%% *}" "$(jq -r .format "$T/to-file")"
    out=$(script -qec "runmon $c" /dev/null 2>/dev/null | tr -d '\r')
    check "runmon $c on a terminal: a text table, not JSON" test -n "$out" -a "${out:0:1}" != "{"
done
runmon summary runmon -o "$T/sum-o" 2>/dev/null
expect_eq "runmon summary -o FILE: JSON" runmon-summary "$(jq -r .format "$T/sum-o")"
expect_match "runmon top --once into a pipe: text" "^runmon top  $id" "$(runmon top --once | head -1)"
expect_eq "runmon report into a pipe: the path it wrote" "runmon/$id/report.html" "$(runmon report runmon 2>/dev/null)"
cd "$T" || exit 1

# "A sweep": three runs named by --sweep/--param (sleep standing in for train.py), then the
# table and the jq line as written.
for lr in 0.1 0.01 0.001; do
    runmon record -q -o sweeps -i 0.2 --sweep lr --param lr=$lr -- sh -c 'sleep 0.4' train.py --lr $lr
done
check "README: the sweep recipe is there" has 'runmon record -o sweeps --sweep lr --param lr=$lr -- python3 train.py --lr $lr'
check "README: its jq line is there" has "jq -r '.sessions | min_by(.energy_wh) | \"cheapest: lr=\\(.params.lr) \\(.energy_wh) Wh\"'"
out=$(runmon sessions sweeps --summary --sweep lr --format json \
    | jq -r '.sessions | min_by(.energy_wh) | "cheapest: lr=\(.params.lr) \(.energy_wh) Wh"')
expect_match "sweep recipe: jq names the cheapest run's lr" '^cheapest: lr=0\.0*1 [0-9.]+ Wh$' "$out"
expect_match "sweep recipe: the table's LR column" '^SESSION +LR +STATUS' \
    "$(runmon sessions sweeps --summary --sweep lr --format text | head -1)"
# "Quick start", run as written (issue 36 item 14) but for `make`: the build is this test's;
# build/ and build/fakebin of a fresh folder are the binaries under test.
qs=$(sed -n '/^## Quick start$/,/^## /p' "$ROOT/README.md" | sed -n 's/^    //p')
check "README: the quick start is the first section" \
    test "$(grep -m1 '^## ' "$ROOT/README.md")" = "## Quick start"
check "README: the quick start puts the fake nvidia-smi on PATH" \
    grep -qxF 'export PATH=$PWD/build/fakebin:$PATH   # no GPU here? a fake nvidia-smi (real H200 captures)' <<<"$qs"
mkdir -p "$T/qs/build" && ln -s "$RUNMON" "$T/qs/build/runmon" && ln -s "$FAKEBIN" "$T/qs/build/fakebin"
(
    cd "$T/qs" && PATH=/usr/local/bin:/usr/bin:/bin && unset FAKE_SMI_GPUS FAKE_SMI_VARY
    set -e
    eval "$(grep -v '^make ' <<<"$qs")"
) >"$T/qs.out" 2>"$T/qs.err"
expect_eq "quick start: every line runs (exit 0)" 0 $?
qsd=$(session_dir "$T/qs/runs")
expect_eq "quick start: a session recorded on the fake GPU, completed" "completed 1" \
    "$(jq -r '"\(.status) \(.gpus | length)"' "$qsd/session.json")"
expect_match "quick start: record's summary on stderr" 'GPU' "$(cat "$T/qs.err")"
check "quick start: report printed the page it wrote" test -s "$T/qs/$(tail -n 1 "$T/qs.out")"
expect_eq "quick start: that page is runs/<id>/report.html" "$qsd/report.html" \
    "$(cd "$T/qs" && readlink -f "$(tail -n 1 "$T/qs.out")")"
check "README: a command not found, as the listing shows it" has 'lists it as `failed`, its command followed by `(command not found)`'
# "Following a run": the memory-alert line, taken from the README and run as written in the
# session's folder, prints each crossing with its sample's time, as it happens.
recipe=$(grep -F 'select(.event=="warning" or .event=="critical")' "$ROOT/README.md")
check "README: the memory-alert recipe is there" test -n "$recipe"
FAKE_SMI_OVERRIDE="memory.used=100,950,960,990,100;memory.total=1000" \
    runmon record -q -o alerts -i 0.2 --warning-threshold 90 --critical-threshold 98 -- sleep 3 &
rpid=$!; track "$rpid"
wait_for "test -e alerts/latest/runlog.jsonl" 10
(cd alerts/latest && eval "$recipe" >"$T/alerts.txt" 2>/dev/null) &
apid=$!; track "$apid"
wait "$rpid"
check "memory-alert recipe: lines as the alerts happen" wait_for "grep -q critical $T/alerts.txt" 10
pkill -P "$apid" 2>/dev/null; kill "$apid" 2>/dev/null
s=$(readlink -f alerts/latest)
expect_match "memory-alert recipe: the line's form" \
    '^20[0-9-]+T[0-9:.]+\+00:00 GPU [01] (warning 95|critical 99)%$' "$(head -1 "$T/alerts.txt")"
expect_eq "memory-alert recipe: one line per event in the run log" \
    "$(jq -c 'select(.event=="warning" or .event=="critical")' "$s/runlog.jsonl" | wc -l)" "$(wc -l <"$T/alerts.txt")"
check "memory-alert recipe: each time is a gpu.csv row's ts" \
    test -z "$(cut -d' ' -f1 "$T/alerts.txt" | grep -vxF -f <(cut -d, -f1 "$s/gpu.csv"))"
done_testing
