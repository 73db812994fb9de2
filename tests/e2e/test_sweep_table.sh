#!/usr/bin/env bash
# Issue 11 §3: `runmon sessions --summary`, the sweep table: one row per session with the
# figures of its summary.json, in text (human units), csv and json (full values); --sort.
# (Issue 20's parameters, best marks, groups and hosts: test_sweep.sh.)
. "$(dirname "$0")/lib.sh"
export PATH="$FAKEBIN:$PATH" FAKE_SMI_CAPTURES="$FIXTURES/captures" FAKE_SMI_GPUS=2 FAKE_SMI_VARY=1
K=$T/sweep
"$RUNMON" record -q -o "$K" -i 0.2 -- sleep 1
"$RUNMON" record -q -o "$K" -i 0.2 -- sh -c 'sleep 1.6; exit 3'
"$RUNMON" record -q -o "$K" -i 0.2 -- sleep 2.2
"$RUNMON" sessions "$K" --summary --wide --format text >"$T/t.txt"; rc=$?
expect_eq "text: exit 0" 0 "$rc"
expect_eq "text: a header and 3 rows" "SESSION 3" "$(head -1 "$T/t.txt" | cut -d' ' -f1) $(grep -c '^20' "$T/t.txt")"
for d in "$K"/*/; do
    [ "$(basename "$d")" = latest ] && continue
    [ -f "$d/summary.json" ] || continue
    id=$(jq -r .session.id "$d/summary.json")
    row=$(grep "^$id " "$T/t.txt")
    u=$(jq .gpu_util_mean_pct "$d/summary.json" | awk '{ printf "%.1f", $1 }')
    e=$(jq .totals.energy_wh "$d/summary.json" | awk '{ printf "%.3f", $1 }')  # C's rounding (double)
    # The fake's GPUs hold 45 GiB while its pmon lists no process: unattributed, "-" (issue 38)
    v=$(jq -r 'if .workload_peak_vram_mb != null then .workload_peak_vram_mb
        elif .workload_vram_basis == "unattributed" then "-" else .peak_vram_mb end' "$d/summary.json")
    if [ "$v" = - ]; then vs=-
    elif [ "$(awk -v v="$v" 'BEGIN { print (v < 1024) }')" = 1 ]; then vs=$(printf '%.0f MiB' "$v")
    else vs=$(awk -v v="$v" 'BEGIN { printf "%.1f GiB", v / 1024 }'); fi
    x=$(jq .session.exit_code "$d/summary.json")
    expect_match "text: $id exit, util, vram, energy" " $x +[0-9.]+s\*? +2x .+ +$u\*? +$vs\*? +$e(±[0-9.]+)? Wh[*=]?  " "$row"
done
expect_match "text: the failing run's row (--wide: the whole command)" "failed +3 +[0-9.]+s .* sh -c sleep 1.6; exit 3$" \
    "$("$RUNMON" sessions "$K" --summary --wide --format text | grep ' failed ')"

"$RUNMON" sessions "$K" --summary --format json >"$T/t.json"
expect_eq "json: 3 sessions" 3 "$(jq '.sessions | length' "$T/t.json")"
expect_eq "json: full values equal summary.json's" \
    "$(for d in "$K"/*/; do [ "$(basename "$d")" != latest ] && [ -f "$d/summary.json" ] && jq -c '[.gpu_util_mean_pct, .totals.energy_wh]' "$d/summary.json"; done | sort)" \
    "$(jq -c '.sessions[] | [.gpu_util_mean_pct, .energy_wh]' "$T/t.json" | sort)"
expect_eq "json: peak vram source named" true "$(jq '[.sessions[] | .peak_vram_source | . == "workload" or . == "gpu"] | all' "$T/t.json")"

"$RUNMON" sessions "$K" --summary --format csv >"$T/t.csv"
expect_eq "csv: header (the parameters inferred from the commands)" "session_id,status,host,sweep,param:arg0,param:arg1,param:c,params_inferred,rerun,exit_code,signal,started_at,ended_at,gpu_name,gpu_count,files,bytes,command,session_dir,duration_s,gpu_util_mean_pct,workload_peak_vram_mb,energy_wh,energy_wh_low,energy_wh_high" "$(head -1 "$T/t.csv")"
expect_eq "csv: 3 rows" 3 "$(rows "$T/t.csv")"
expect_eq "csv: exit codes" "0 3 0" "$(python3 -c 'import csv, sys; print(*[r["exit_code"] for r in csv.DictReader(open(sys.argv[1]))])' "$T/t.csv")"

want=$(jq -r '.sessions | sort_by(-.energy_wh) | map(.session_id) | join(" ")' "$T/t.json")
got=$("$RUNMON" sessions "$K" --summary --sort energy --format json | jq -r '[.sessions[].session_id] | join(" ")')
expect_eq "--sort energy: largest first" "$want" "$got"
got=$("$RUNMON" sessions "$K" --summary --wide --sort energy --format text | sed -n '2,4p' | cut -d' ' -f1 | xargs)
expect_eq "--sort energy: text in the same order" "$want" "$got"
err=$("$RUNMON" sessions "$K" --summary --sort bogus 2>&1 >/dev/null); rc=$?
expect_eq "bad --sort: exit 2" 2 "$rc"
expect_match "bad --sort: the fields listed" "start, duration, util, vram, energy, status" "$err"

# A session without summary.json (as a running or interrupted one): '-' for its figures.
d=$(session_dir "$K")
mv "$d/summary.json" "$T/held.json"
out=$("$RUNMON" sessions "$K" --summary --wide --format text)
row=$(grep "^$(basename "$d") " <<<"$out")
expect_match "no summary.json: '-' figures" " - +- +-  " "$row"
expect_match "no summary.json: a note says why" "note: 1 run has no summary.json" "$out"
expect_eq "no summary.json: the note in JSON too" 1 \
    "$("$RUNMON" sessions "$K" --summary --format json | jq '[.notes[] | select(test("no summary.json"))] | length')"
mv "$T/held.json" "$d/summary.json"

# Issue 37: --sweep picks its runs before any summary.json is read: the other sweep's
# summary.json is never opened (strace sees every open).
W=$T/two-sweeps
"$RUNMON_REL" record -q -o "$W" -i 0.2 --sweep a -- sleep 0.3
"$RUNMON_REL" record -q -o "$W" -i 0.2 --sweep b -- sleep 0.3
b=$(for d in "$W"/2*/; do [ "$(jq -r .sweep "$d/summary.json")" = b ] && basename "$d"; done)
strace -f -e trace=open,openat -o "$T/opens.txt" "$RUNMON_REL" sessions "$W" --summary --sweep a --format json >"$T/a.json"
expect_eq "--sweep a: its one run" '["a"]' "$(jq -c '[.sessions[].sweep]' "$T/a.json")"
expect_eq "--sweep a: sweep b's summary.json is not opened" 0 "$(grep -c "$b/summary.json" "$T/opens.txt")"
expect_eq "  (sweep a's is)" 1 "$(grep -c 'summary.json' "$T/opens.txt")"
# ... and each command opens the sink once (its lock taken once: the open can write).
expect_eq "sessions --summary: the sink opened once" 1 "$(grep -c '\.manifest\.lock' "$T/opens.txt")"
strace -f -e trace=open,openat -o "$T/opens2.txt" "$RUNMON_REL" report --sweep a "$W" -o "$T/a.html" >/dev/null 2>&1
expect_eq "report --sweep: the sink opened once" 1 "$(grep -c '\.manifest\.lock' "$T/opens2.txt")"
# The plain listing (its own options since the sweep table has its own) opens it once too,
# and reads no summary.json unless its --sort needs their figures.
strace -f -e trace=open,openat -o "$T/opens3.txt" "$RUNMON_REL" sessions "$W" --sweep a --format json >"$T/l.json"
expect_eq "sessions --sweep a: its one session" 1 "$(jq '.sessions | length' "$T/l.json")"
expect_eq "sessions: the sink opened once" 1 "$(grep -c '\.manifest\.lock' "$T/opens3.txt")"
expect_eq "sessions: no summary.json read" 0 "$(grep -c 'summary.json' "$T/opens3.txt")"
strace -f -e trace=open,openat -o "$T/opens4.txt" "$RUNMON_REL" sessions "$W" --sort energy --format json >/dev/null
expect_eq "sessions --sort energy: the sink opened once" 1 "$(grep -c '\.manifest\.lock' "$T/opens4.txt")"

# Issue 11 §4: the text summary fits 100 columns (every golden text output).
check "golden text summaries: no line over 100 columns" \
    test -z "$(awk 'length($0) > 100 { print FILENAME ": " FNR }' "$FIXTURES"/golden/out/*.txt)"
done_testing
