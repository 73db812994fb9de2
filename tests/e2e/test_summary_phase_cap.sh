#!/usr/bin/env bash
# A run log naming a phase per step (issue 27, item 6): RUNMON_SUMMARY_MAX_PHASES (default
# 10000) is a budget of phase rows x GPUs, so with G GPUs the first 10000 / G distinct paths
# get a row each and the rest are one row "(other phases)" with a note, and the summary's
# memory stays bounded (0.2.0: 40,000 phases took about 650 MB and 5 s with one GPU; before the
# budget, 12,000 phases with 8 GPUs took about 600 MB; with the budget but the rows' JSON all
# held, 147 MB and 84 MB; streamed rows, merged phase by phase: about 35 MB and 18 MB; the
# bounds below are generous, memory and not time is asserted). Every reader of the phase list
# copes with the folded row: text, CSV, the report, top, and a sink's segment aggregates.
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$FIXTURES/.." && pwd)
: "${RUNMON_REL:=$BUILD/runmon}"
unset RUNMON_SUMMARY_MAX_PHASES

# --- 40,000 steps inside one outer phase, beside a gpu.csv and a cpu.csv -------------------
D=$T/many
python3 "$ROOT/bench/gen_phases.py" "$D" --phases 40000
if [ -x /usr/bin/time ]; then
    /usr/bin/time -f '%M' -o "$T/rss" "$RUNMON_REL" summary "$D" --format json >"$T/many.json" 2>"$T/many.err"
    rc=$?
    rss=$(tail -n 1 "$T/rss")
    check "40,000 phases: exit 0, peak RSS under 80 MB (${rss} KB)" test "$rc" -eq 0 -a "$rss" -lt 81920
else
    "$RUNMON_REL" summary "$D" --format json >"$T/many.json" 2>"$T/many.err"
    expect_eq "40,000 phases: exit 0" 0 $?
fi
q() { jq -c "$1" "$T/many.json"; }
# One session folder as JSON is written as it is built, a phase row at a time; two folders
# make a set built whole: the same summary either way.
cp -r "$D" "$T/many2"
expect_eq "the streamed summary is the one built whole" \
    "$(jq -S 'del(.generated_at)' "$T/many.json" | md5sum)" \
    "$("$RUNMON_REL" summary "$D" "$T/many2" --format json 2>/dev/null | jq -S '.sessions[0] | del(.generated_at)' | md5sum)"
expect_eq "10,000 paths of their own, then one row for the rest" \
    '[10001,"train","train/step_9998","(other phases)",30001]' \
    "$(q '[(.phases | length), .phases[0].path, .phases[9999].path, .phases[-1].path, .phases[-1].folded_paths]')"
expect_eq "the folded row counts every folded phase and holds their samples" '[30001,30001,true]' \
    "$(q '[.phases[-1].count, .phases[-1].status.ok, (.phases[-1].gpus[0].samples >= 30000)]')"
expect_eq "only the folded row has folded_paths" 1 "$(q '[.phases[] | select(has("folded_paths"))] | length')"
expect_match "a note says what was folded and what sets the cap" \
    '30001 distinct phase paths past the first 10000 .*"\(other phases\)".*RUNMON_SUMMARY_MAX_PHASES' \
    "$(jq -r '.data_quality.notes[]' "$T/many.json")"
expect_match "the text output says it too" 'note: phases: 30001 distinct phase paths past the first 10000' \
    "$("$RUNMON_REL" summary "$D" --format text)"

# --- 8 GPUs: the budget is shared, 1,250 rows; the memory stays that of 10,000 GPU figures ---
E=$T/eight
python3 "$ROOT/bench/gen_phases.py" "$E" --phases 12000 --gpus 8
if [ -x /usr/bin/time ]; then
    /usr/bin/time -f '%M' -o "$T/rss8" "$RUNMON_REL" summary "$E" --format json >"$T/eight.json" 2>"$T/eight.err"
    rc=$?
    rss=$(tail -n 1 "$T/rss8")
    check "12,000 phases, 8 GPUs: exit 0, peak RSS under 60 MB (${rss} KB)" test "$rc" -eq 0 -a "$rss" -lt 61440
else
    "$RUNMON_REL" summary "$E" --format json >"$T/eight.json" 2>"$T/eight.err"
    expect_eq "12,000 phases, 8 GPUs: exit 0" 0 $?
fi
expect_eq "8 GPUs: the streamed summary is the one built whole" \
    "$(jq -S 'del(.generated_at)' "$T/eight.json" | md5sum)" \
    "$(cp -r "$E" "$T/eight2" && "$RUNMON_REL" summary "$E" "$T/eight2" --format json 2>/dev/null | jq -S '.sessions[0] | del(.generated_at)' | md5sum)"
expect_eq "8 GPUs: 1,250 paths of their own (10,000 / 8), then one row for the rest" \
    '[1251,"train/step_1248","(other phases)",10751,10751,8]' \
    "$(jq -c '[(.phases | length), .phases[1249].path, .phases[-1].path, .phases[-1].folded_paths, .phases[-1].count, (.phases[-1].gpus | length)]' "$T/eight.json")"
expect_match "the note says the budget is shared by 8 GPUs" \
    '10751 distinct phase paths past the first 1250 .*RUNMON_SUMMARY_MAX_PHASES sets the cap: 10000 phase rows x GPUs, 8 GPUs here' \
    "$(jq -r '.data_quality.notes[]' "$T/eight.json")"

# --- memory per phase: under 1 KiB a distinct path (issue 27, item 6) -------------------------
# 10,000 paths with 1 GPU (each path a row) and with 8 GPUs (1,250 rows): every format of
# `summary`, and `report` (computing the summary, and from summary.json), by peak RSS over that
# of the same files without the run log, per path. Before (4120d99), 1 GPU: 2.2 KB (json),
# 14.6 KB (text, csv: the rows' JSON all held), 15 KB (report). The report holds what it draws:
# the page it writes (about 540 bytes of HTML a phase row), its own read of the run log for
# the phase bands, and about 150 bytes a row of figures; computing the summary, the summary's
# own memory before that (1 GPU: about 1.4 and 1.8 KB a path); it is held to 3 KiB a path here.
if [ -x /usr/bin/time ]; then
    peak() { /usr/bin/time -f '%M' -o "$T/peak" "$@" >/dev/null 2>"$T/peak.err" && tail -n 1 "$T/peak"; }
    per_path() { echo $(((($1 - $2) * 1024) / 10000)); }
    for g in 1 8; do
        P=$T/mem$g
        python3 "$ROOT/bench/gen_phases.py" "$P" --phases 10000 --gpus "$g"
        mkdir -p "$P-base" && cp "$P"/{gpu.csv,cpu.csv,session.json} "$P-base"/
        base=$(peak "$RUNMON_REL" summary "$P-base" --format json)
        for f in json text csv; do
            rss=$(peak "$RUNMON_REL" summary "$P" --format "$f")
            check "10,000 paths, $g GPU(s), summary --format $f: $(per_path "$rss" "$base") bytes a path, under 1024" \
                test -n "$rss" -a "$(per_path "${rss:-999999}" "$base")" -lt 1024
        done
        rbase=$(peak "$RUNMON_REL" report "$P-base" -o "$T/rbase.html")
        rss=$(peak "$RUNMON_REL" report "$P" -o "$T/r.html")
        check "10,000 paths, $g GPU(s), report computing the summary: $(per_path "$rss" "$rbase") bytes a path, under 3072" \
            test -n "$rss" -a "$(per_path "${rss:-999999}" "$rbase")" -lt 3072
        "$RUNMON_REL" summary "$P" --format json -o "$P/summary.json"
        rss=$(peak "$RUNMON_REL" report "$P" -o "$T/r2.html")
        check "10,000 paths, $g GPU(s), report from summary.json: $(per_path "$rss" "$rbase") bytes a path, under 3072" \
            test -n "$rss" -a "$(per_path "${rss:-999999}" "$rbase")" -lt 3072
        expect_eq "  the report's page is the same either way" "$(md5sum <"$T/r.html")" "$(md5sum <"$T/r2.html")"
        rm -rf "$P" "$P-base"
    done
    # Record's end summary (summary.json and the text on stderr) takes the rows one at a time
    # too: 10,000 phases of a Python loop, about 15 MB in all (the loop's own Python included);
    # before, 112 MB.
    R=$T/recmem
    rss=$(FAKE_SMI_CAPTURES="$FIXTURES/captures" FAKE_SMI_GPUS=1 PATH="$FAKEBIN:$PATH" \
        PYTHONPATH="$ROOT/python" peak "$RUNMON_REL" record -o "$R" -i 0.1 -- python3 -c '
import time, runmon
for i in range(10000):
    with runmon.phase("s%d" % i):
        time.sleep(0.0002)')
    check "record, 10,000 phases: peak RSS ${rss} KB, under 40 MB" test -n "$rss" -a "${rss:-999999}" -lt 40960
    s=$(readlink "$R/latest")
    expect_eq "  its summary.json: 10,000 rows, and the summary of the session says the same" \
        "10000 $(jq -S 'del(.generated_at, .sink)' "$R/$s/summary.json" | md5sum)" \
        "$(jq '.phases | length' "$R/$s/summary.json") $("$RUNMON_REL" summary "$R" --session "$s" --format json 2>/dev/null | jq -S 'del(.generated_at, .sink)' | md5sum)"
    expect_eq "  its text on stderr is the summary's text" \
        "$("$RUNMON_REL" summary "$R" --session "$s" --format text 2>/dev/null | md5sum)" \
        "$(sed -n '/^runmon summary/,$p' "$T/peak.err" | md5sum)"
fi

# --- the cap from the environment; --phase selects before the cap counts ---------------------
S=$T/small
python3 "$ROOT/bench/gen_phases.py" "$S" --phases 300 --gpus 2
J=$(RUNMON_SUMMARY_MAX_PHASES=50 "$RUNMON" summary "$S" --format json)
expect_eq "RUNMON_SUMMARY_MAX_PHASES=50, 2 GPUs: 25 rows and the folded one" '[26,276]' \
    "$(jq -c '[(.phases | length), .phases[-1].folded_paths]' <<<"$J")"
expect_eq "the GPUs' samples are all in the phases' rows (the outer phase aside)" true \
    "$(jq '([.phases[1:][] | .gpus[] | .samples] | add) == ([.phases[0].gpus[] | .samples] | add)' <<<"$J")"
J=$(RUNMON_SUMMARY_MAX_PHASES=50 "$RUNMON" summary "$S" --phase 'step_2[0-9][0-9]$' --format json)
expect_eq "--phase: left-out paths take no row (100 kept, 25 + the rest)" '[26,75,"train/step_200"]' \
    "$(jq -c '[(.phases | length), .phases[-1].folded_paths, .phases[0].path]' <<<"$J")"
# GPUs that session.json does not list are known only once the files are read: the rows past
# the budget are folded then, into the same figures.
N=$T/nolist
mkdir -p "$N" && cp "$S"/{gpu.csv,cpu.csv,runlog.jsonl} "$N"/ && jq 'del(.gpus)' "$S/session.json" >"$N/session.json"
expect_eq "GPUs not in session.json: the same rows and figures" \
    "$(jq -S .phases <<<"$(RUNMON_SUMMARY_MAX_PHASES=50 "$RUNMON" summary "$S" --format json)")" \
    "$(RUNMON_SUMMARY_MAX_PHASES=50 "$RUNMON" summary "$N" --format json | jq -S .phases)"
J=$(RUNMON_SUMMARY_MAX_PHASES=abc "$RUNMON" summary "$S" --format json)
expect_match "a bad RUNMON_SUMMARY_MAX_PHASES: the default, and a note" \
    'RUNMON_SUMMARY_MAX_PHASES is not a positive integer: the default cap of 10000' \
    "$(jq -r '.data_quality.notes[]' <<<"$J")"
expect_eq "  and no row folded" 301 "$(jq '.phases | length' <<<"$J")"
export RUNMON_SUMMARY_MAX_PHASES=50
expect_match "CSV: the folded row" '^phase,\(other phases\),0,' \
    "$("$RUNMON" summary "$S" --format csv | grep -m1 'other phases')"
"$RUNMON" report "$S" -o "$T/small.html" 2>"$T/report.err"
expect_eq "report: exit 0" 0 $?
check "report: the phase table has the folded row" grep -q '(other phases)' "$T/small.html"
"$RUNMON" top --once "$S" >"$T/top.txt" 2>&1
expect_eq "top --once: exit 0" 0 $?

# --- a sink: sealed segments fold as the summary does, and survive retention ------------------
export FAKE_SMI_CAPTURES="$FIXTURES/captures" FAKE_SMI_GPUS=2 FAKE_SMI_VARY=1
export RUNMON_SUMMARY_MAX_PHASES=5
K=$T/sink
PATH="$FAKEBIN:$PATH" PYTHONPATH="$ROOT/python" "$RUNMON" record -q -o "$K" -i 0.1 --rollover-mb 0.002 \
    --retention-files 0 --retention-total-mb 0 -- python3 -c '
import time, runmon
for i in range(30):
    with runmon.phase("s%d" % i):
        time.sleep(0.06)'
expect_eq "record with 30 phases: exit 0" 0 $?
s=$(readlink "$K/latest")
st=$K/$s/state.json
check "sealed gpu aggregates hold a folded partial" \
    test "$(jq '[.segments[] | .aggregate.phases // [] | .[] | select(.folded == true)] | length' "$st")" -ge 1
expect_eq "a sealed aggregate holds at most 2 paths of its own (the budget of 5 over 2 GPUs)" 2 \
    "$(jq '[.segments[] | [.aggregate.phases // [] | .[] | select(.folded != true)] | length] | max' "$st")"
"$RUNMON" summary "$K" --session "$s" --format json >"$T/before.json" 2>/dev/null
expect_eq "the session's summary, 2 GPUs: 2 rows and the folded one" '[3,"(other phases)",28]' \
    "$(jq -c '[(.phases | length), .phases[-1].path, .phases[-1].folded_paths]' "$T/before.json")"
expect_eq "summary.json written at the end says the same" '[3,28]' \
    "$(jq -c '[(.phases | length), .phases[-1].folded_paths]' "$K/$s/summary.json")"
PATH="$FAKEBIN:$PATH" "$RUNMON" record -q -o "$K" -i 0.1 --retention-files 1 -- true
"$RUNMON" summary "$K" --session "$s" --format json >"$T/after.json" 2>/dev/null
check "the summary used pruned segments' aggregates" test "$(jq .sink.pruned_segments "$T/after.json")" -ge 1
expect_eq "phase figures after pruning = before (the folded row too)" \
    "$(jq -S '.phases' "$T/before.json")" "$(jq -S '.phases' "$T/after.json")"
RUNMON_SUMMARY_MAX_PHASES=100 "$RUNMON" summary "$K" --session "$s" --format json >"$T/raised.json" 2>/dev/null
expect_eq "a larger cap later: pruned folded partials still counted, in the folded row" true \
    "$(jq '(.phases[-1].path == "(other phases)") and ([.phases[] | .count] | add) == 30' "$T/raised.json")"

# --- sessions --summary reads four figures of each summary.json, not its phase rows -----------
cp "$T/eight.json" "$K/$s/summary.json"
if [ -x /usr/bin/time ]; then
    /usr/bin/time -f '%M' -o "$T/rss_s" "$RUNMON_REL" sessions "$K" --summary --format json >"$T/sessions.json" 2>"$T/sessions.err"
    rc=$?
    rss=$(tail -n 1 "$T/rss_s")
    check "sessions --summary, a summary.json of 1,251 rows x 8 GPUs: peak RSS under 30 MB (${rss} KB)" \
        test "$rc" -eq 0 -a "$rss" -lt 30720
fi
expect_eq "  and its figures are that summary.json's" \
    "$(jq -c '[.gpu_util_mean_pct, .peak_vram_mb, .totals.energy_wh]' "$T/eight.json")" \
    "$("$RUNMON" sessions "$K" --summary --format json | jq -c --arg s "$s" '.sessions[] | select(.session_id == $s) | [.gpu_util_mean_pct, .peak_vram_mb, .energy_wh]')"
done_testing
