#!/usr/bin/env bash
# `runmon summary` on a session folder and on bare files; expected figures worked out by hand
# from the fixtures (see the comments beside each).
. "$(dirname "$0")/lib.sh"
S=$FIXTURES/summary
q() { jq -c "$1" <<<"$J"; }

J=$("$RUNMON" summary "$S/session1" --format json 2>"$T/err"); rc=$?
expect_eq "session folder: exit 0" 0 "$rc"
expect_eq "format and schema" '["runmon-summary",1]' "$(q '[.format,.schema_version]')"
# GPU0 power 100,200,100,200,100 | gap 4 s | 300,300: trapezoids 4*150 + 300 = 900 J.
expect_eq "GPU0 energy (gap not bridged)" 0.25 "$(q '.gpus[0].energy_wh')"
# GPU1 50 W over 5 bridged seconds = 250 J.
expect_eq "GPU1 energy" 0.069444 "$(q '.gpus[1].energy_wh')"
expect_eq "GPU0 util mean/max/p50/p95 ([N/A] left out)" '[53.333,100,50,100]' \
    "$(q '.gpus[0].util_pct|[.mean,.max,.p50,.p95]')"
expect_eq "GPU0 idle share 2/6" 0.3333 "$(q '.gpus[0].idle_share')"
expect_eq "GPU0 gaps" '{"count":1,"seconds":4}' "$(q '.gpus[0].gaps')"
expect_eq "every missing spelling is missing, rows still count" '[7,1000,1000,40]' \
    "$(q '.gpus[1]|[.samples,.vram_mb.peak,.vram_mb.mean,.temp_c_max]')"
expect_eq "[Not Supported] memory util is null" null "$(q '.gpus[1].mem_util_pct.mean')"
# util over all 13 valid samples (320+70)/13; power over all 14 rows (1300+350)/14.
expect_eq "legacy keys" '[46000,30,100,117.857,300,40,50,2048]' \
    "$(q '[.peak_vram_mb,.gpu_util_mean_pct,.gpu_util_max_pct,.power_watts_mean,.power_watts_max,.cpu_usr_mean_pct,.cpu_idle_mean_pct,.jax_peak_bytes_mb]')"
expect_eq "totals power per sample group" '{"mean":235.714,"max":350}' "$(q '.totals.power_w')"
expect_eq "totals energy" 0.319444 "$(q '.totals.energy_wh')"
expect_eq "host memory peak, process tree" '[2000,300,100,150]' \
    "$(q '[.totals.host_mem_peak_mb,.totals.proc.rss_peak_mb,.totals.proc.cpu_pct.mean,.totals.proc.cpu_pct.max]')"
expect_eq "phase paths in run-log order" '["train","train/step","eval"]' "$(q '[.phases[].path]')"
# train = [0.5, 9.5): samples at 1,2,3,4,8,9; util 50,100,-,0,80,90. Energy inside the
# window, power a line between neighbouring samples clipped at its edges: [0.5,1] 87.5 J
# (150..200 W), 1..4 3 x 150 J, 4..8 a gap, 8..9 300 J; nothing after 9 (the t=10 row is torn).
expect_eq "enter/exit phase: util, energy" '[64,0.232639,6]' \
    "$(q '.phases[0].gpus[0]|[.util_pct.mean,.energy_wh,.samples]')"
# train/step = [0.5,2.5) + [7.5,9.0), across the gap: samples 1,2,8. Inside the windows only:
# [0.5,1] 87.5 J, [1,2] 150 J, [2,2.5] 62.5 J (100..150 W), [7.5,8] in the gap, [8,9] 300 J.
expect_eq "repeated phase across a gap" '[2,3.5,76.667,0.166667,36.667]' \
    "$(q '.phases[1]|[.count,.total_seconds,.gpus[0].util_pct.mean,.gpus[0].energy_wh,.cpu.usr_pct.mean]')"
expect_eq "unterminated phase closed at session end" '[1,0.8,{"ok":0,"error":0,"unterminated":1}]' \
    "$(q '.phases[2]|[.count,.total_seconds,.status]')"
expect_eq "session" '["s-test-1","completed","node-a",0,10]' \
    "$(q '.session|[.id,.status,.host,.exit_code,.duration_s]')"
expect_eq "collectors from session.json + run log" '["degraded",2,1]' \
    "$(q '.collectors.dmon|[.health,.failure_event_count,.degraded_events]')"
expect_eq "alerts" '[1,0,"GPU-aaaa"]' "$(q '.alerts|[.warning,.critical,.events[0].uuid]')"
expect_eq "rows skipped by reason" '{"not_data":1,"torn_line":1,"bad_field_count":0,"bad_time":0,"garbage":1,"long_line":0,"per_cpu":2}' \
    "$(q '.data_quality.rows_skipped')"
expect_eq "run log torn last line and garbage" '[12,1,1]' "$(q '.data_quality.runlog|[.lines,.torn_line,.garbage]')"
expect_eq "coverage 5 of 10 s" '[5,10,0.5]' "$(q '.data_quality|[.sampled_seconds,.session_seconds,.coverage]')"

J=$("$RUNMON" summary "$S/session1" --format json --phase '^train/')
expect_eq "--phase keeps matching paths" '["train/step"]' "$(q '[.phases[].path]')"
err=$("$RUNMON" summary "$S/session1" --phase '(' 2>&1 >/dev/null); rc=$?
expect_eq "--phase bad regex exits 2" 2 "$rc"
expect_match "--phase bad regex explained" "regular expression" "$err"

# Text and CSV.
out=$("$RUNMON" summary "$S/session1" --format text)
expect_match "text has the GPU table" "GPU +NAME +SAMPLES" "$out"
expect_match "text has phases" "train/step" "$out"
out=$("$RUNMON" summary "$S/session1" --format csv)
expect_match "csv header" "^kind,phase,gpu,uuid,name,samples," "$out"
expect_eq "csv rows: 2 gpu, 1 total, 5 phase (2+2+1 empty)" "2 1 5" \
    "$(grep -c '^gpu,' <<<"$out") $(grep -c '^total,' <<<"$out") $(grep -c '^phase,' <<<"$out")"
"$RUNMON" summary "$S/session1" >"$T/piped"
expect_eq "json when stdout is not a terminal" runmon-summary "$(jq -r .format "$T/piped")"

# -o writes atomically (no temp file left behind).
"$RUNMON" summary "$S/session1" -o "$T/out.json"; rc=$?
expect_eq "-o exits 0" 0 "$rc"
expect_eq "-o file is the JSON summary" runmon-summary "$(jq -r .format "$T/out.json")"
expect_eq "-o leaves no temp file" "out.json" "$(ls "$T" | grep out)"

# Sealed segments are read before the active file.
mkdir "$T/seg"
cp "$S/session1/session.json" "$T/seg/"
head -9 "$S/session1/gpu.csv" >"$T/seg/gpu-000001.csv"
(head -1 "$S/session1/gpu.csv"; tail -n +10 "$S/session1/gpu.csv") >"$T/seg/gpu.csv"
J=$("$RUNMON" summary "$T/seg" --format json)
expect_eq "segments + active: same energy as one file" '[0.25,0.069444]' "$(q '[.gpus[].energy_wh]')"

# Headerless legacy CSV, GPUs by position; by uuid; dmon layouts.
J=$("$RUNMON" summary --gpu-csv "$S/gpu-noheader-legacy.csv" --format json 2>"$T/err")
expect_eq "no header: GPUs by position" '[[0,20],[1,30]]' "$(q '[.gpus[]|[.index,.util_pct.mean]]')"
expect_match "no header: assumed columns noted" "legacy list" "$(q '.data_quality.notes[0]')"
expect_match "no header: said on stderr" "assumed columns" "$(cat "$T/err")"
J=$("$RUNMON" summary --gpu-csv "$S/gpu-by-uuid.csv" --format json)
expect_eq "GPUs by uuid (rows reordered)" '[["GPU-x",20],["GPU-y",80]]' "$(q '[.gpus[]|[.uuid,.util_pct.mean]]')"
J=$(TZ=UTC "$RUNMON" summary --dmon "$S/dmon-dt-temp-pucm.txt" --format json)
# -o DT, `temp` column, repeated narrow header, fb/bar1/ccpm; '-' missing per field.
expect_eq "dmon -o DT per GPU" '[[3,30,33.333,2000,166.667,0.111111,44],[3,63.333,60,4000,266.667,0.166667,45]]' \
    "$(q '[.gpus[]|[.samples,.util_pct.mean,.mem_util_pct.mean,.vram_mb.peak,.power_w.mean,.energy_wh,.temp_c_max]]')"
J=$(TZ=JST-9 "$RUNMON" summary --dmon "$S/dmon-dt-temp-pucm.txt" --format json)
expect_eq "dmon -o DT is local time" '"2026-11-21T01:00:00.000+00:00"' "$(q '.gpus[0].first')"
J=$("$RUNMON" summary --dmon "$S/dmon-session.csv" --cpu-csv "$S/cpu_metrics.csv" --format json)
# power 100,200,-: 150 J trapezoid + 200 J rectangle where one end lacks power.
expect_eq "dmon.csv + python cpu_metrics.csv" '[42,150,0.097222,30,65]' \
    "$(q '[.gpus[0].temp_c_max,.gpus[0].power_w.mean,.gpus[0].energy_wh,.cpu_usr_mean_pct,.cpu_idle_mean_pct]')"

# Errors.
err=$("$RUNMON" summary --gpu-csv "$S/gpu-header-only.csv" 2>&1 >/dev/null); rc=$?
expect_eq "file with no data exits 2" 2 "$rc"
expect_match "file with no data is named" "gpu-header-only.csv: holds no data" "$err"
err=$("$RUNMON" summary "$T/does-not-exist" 2>&1 >/dev/null); rc=$?
expect_eq "nonexistent path exits 2" 2 "$rc"
expect_match "nonexistent path named" "does-not-exist" "$err"
mkdir "$T/empty"
"$RUNMON" summary "$T/empty" >/dev/null 2>&1; rc=$?
expect_eq "folder that is no session exits 2" 2 "$rc"
: >"$T/garbage.csv"; head -c 5000 /dev/urandom >>"$T/garbage.csv"
timeout 20 "$RUNMON" summary --gpu-csv "$T/garbage.csv" >/dev/null 2>&1; rc=$?
expect_eq "random bytes: no crash, no hang, exit 2" 2 "$rc"
out=$("$RUNMON" summary --help); rc=$?
expect_eq "--help exits 0" 0 "$rc"
expect_match "--help lists options" "--phase REGEX" "$out"
"$RUNMON" summary --bogus >/dev/null 2>&1; rc=$?
expect_eq "unknown option exits 2" 2 "$rc"

# Two session folders: two runs, one summary each and no totals across them (issue 25).
J=$("$RUNMON" summary "$S/session1" "$T/seg" --format json)
expect_eq "several sessions: one summary each, no totals" \
    '["runmon-summary-sessions",2,4,0.638888,null]' \
    "$(q '[.format,(.sessions|length),([.sessions[].totals.gpu_count]|add),
        ([.sessions[].totals.energy_wh]|add*1000000|round/1000000),.totals]')"

# --- rows over a reader limit: skipped, and a note says which limit, where ----------------
hdr="ts,timestamp,index,uuid,name,pci.bus_id,utilization.gpu,memory.used,memory.total,power.draw"
gpurow() { printf '2026-01-01T00:00:%02d.000+00:00,2026/01/01 00:00:%02d.000,0,GPU-0,H100,00:01.0,50,1000,81559,100.00\n' "$1" "$1"; }
{ echo "$hdr"; for i in 0 1 2; do gpurow $i; done
  awk 'BEGIN {for (i = 0; i < 5000; i++) printf "%s1", i ? "," : ""; print ""}'
  for i in 3 4 5; do gpurow $i; done; } >"$T/wide.csv"
J=$("$RUNMON" summary "$T/wide.csv" --format json 2>"$T/wide.err"); rc=$?
expect_eq "5000 fields: exit 0, the other rows read, skipped as a long line" '[0,6,1]' \
    "$(jq -c --argjson rc $rc '[$rc,.data_quality.rows_read,.data_quality.rows_skipped.long_line]' <<<"$J")"
expect_match "5000 fields: a note names the file, the line and the limit" \
    "wide.csv: line 5 has more than the limit of 4096 fields" "$(q '.data_quality.notes[0]')"
expect_match "5000 fields: said on stderr too" "wide.csv: line 5 has more than the limit of 4096 fields" "$(cat "$T/wide.err")"
# A line of 1.5 MB with no newline at the end of the file: bounded work (libcsv grew its field
# buffer 128 bytes at a time: under ASan ~400 MB and many seconds; the figure here is memory,
# not time, so a busy machine cannot fail it).
{ echo "$hdr"; for i in 0 1 2; do gpurow $i; done; head -c 1572864 /dev/zero | tr '\0' x; } >"$T/long.csv"
if [ -x /usr/bin/time ]; then
    /usr/bin/time -f '%M' -o "$T/long.rss" "$RUNMON" summary "$T/long.csv" --format json >"$T/long.json" 2>"$T/long.err"
    rc=$?
    rss=$(tail -1 "$T/long.rss")
    check "1.5 MB line without newline: peak RSS under 150 MB (${rss} KB)" test "$rc" -eq 0 -a "$rss" -lt 153600
else
    "$RUNMON" summary "$T/long.csv" --format json >"$T/long.json" 2>"$T/long.err"
    expect_eq "1.5 MB line without newline: exit 0" 0 $?
fi
expect_eq "1.5 MB line: the rows before it read, the line skipped" '[3,1]' \
    "$(jq -c '[.data_quality.rows_read,.data_quality.rows_skipped.long_line]' "$T/long.json")"
expect_match "1.5 MB line: a note names the file, the line and the limit" \
    "long.csv: line 5 is longer than the limit of 1048576 bytes" "$(jq -r '.data_quality.notes[0]' "$T/long.json")"
done_testing
