#!/usr/bin/env bash
# Issue 36: nvidia-smi's own per-process outputs (pmon text, --query-compute-apps CSV,
# --query-accounted-apps CSV) are told by their header and summarised as processes, given as
# a plain file or with any flag: never GPUs (two processes were GPUs 0 and 1, every value
# "-"), never "holds no data rows ... maybe nvidia-smi's own error: # gpu pid type". Real
# captures (fixtures/captures/apps/README.md): an H100 with two PyTorch processes, pid 653
# (1860 MiB, SM ~99 %) and pid 654 (3656 MiB, no kernels: pmon prints "-").
. "$(dirname "$0")/lib.sh"

A=$FIXTURES/captures/apps
procs() { # $1 = summary JSON: "gpu:pid:peak:sm:samples:in_workload" per process, sorted
    jq -r '[.processes[] | "\(.gpu):\(.pid):\(.peak_mb):\(.sm_pct_mean):\(.samples):\(.in_workload)"] | sort | join(" ")' "$1"
}

# pmon text in each layout: fb ccpm first or last, no memory columns, -o DT.
declare -A want=(
    [pmon-s-mu-load.txt]="0:653:1860:99:5:null 0:654:3656:null:5:null"
    [pmon-s-um-load.txt]="0:653:1860:99:3:null 0:654:3656:null:3:null"
    [pmon-default-load.txt]="0:653:null:98.333:3:null 0:654:null:null:3:null"
    [pmon-s-mu-DT-load.txt]="0:653:1860:98:3:null 0:654:3656:null:3:null"
    [compute-apps-load.csv]="0:653:1860:null:1:null 0:654:3656:null:1:null"
    [compute-apps-load-lms500.csv]="0:653:1860:null:6:null 0:654:3656:null:6:null"
    [compute-apps-more-fields.csv]="0:653:1860:null:1:null 0:654:3656:null:1:null"
    [pmon-c1-a10g-7digit-pids.txt]="0:2354247:null:null:1:null 0:3588267:null:null:1:null"
    [pmon-windows-cg.txt]="0:11368:null:0:1:null 0:40688:null:0:1:null 0:484:null:null:1:null 0:485:null:37:1:null"
    [accounted-apps-a100.csv]="0:1906656:4989:55:1:null"
)
for f in "${!want[@]}"; do
    for how in plain --apps-csv --gpu-csv --dmon; do
        if [ "$how" = plain ]; then args=("$A/$f"); else args=("$how" "$A/$f"); fi
        "$RUNMON" summary "${args[@]}" --format json >"$T/s.json" 2>"$T/s.err"
        expect_eq "$f ($how): exit 0" 0 "$?"
        expect_eq "$f ($how): its processes" "${want[$f]}" "$(procs "$T/s.json")"
        expect_eq "$f ($how): no GPU made of them" "0 0" \
            "$(jq -r '"\(.gpus | length) \(.totals.gpu_count)"' "$T/s.json")"
        expect_eq "$f ($how): no workload figure claimed" null "$(jq '.workload_peak_vram_mb' "$T/s.json")"
    done
done
expect_eq "pmon: read as pmon_text" pmon_text \
    "$("$RUNMON" summary "$A/pmon-s-mu-load.txt" --format json 2>/dev/null | jq -r '.data_quality.files[0].kind')"
expect_eq "compute-apps: read as compute_apps_csv" compute_apps_csv \
    "$("$RUNMON" summary "$A/compute-apps-load.csv" --format json 2>/dev/null | jq -r '.data_quality.files[0].kind')"
expect_eq "accounted-apps: read as accounted_apps_csv" accounted_apps_csv \
    "$("$RUNMON" summary "$A/accounted-apps-rtx3060.csv" --format json 2>/dev/null | jq -r '.data_quality.files[0].kind')"
expect_eq "accounted-apps without a GPU column: all on GPU 0, largest first" \
    "2716399:2196:4 764032:328:67 898345:184:0 2839947:178:0 2781981:150:0" \
    "$("$RUNMON" summary "$A/accounted-apps-rtx3060.csv" --format json 2>/dev/null |
        jq -r '[.processes[] | "\(.pid):\(.peak_mb):\(.sm_pct_mean)"] | join(" ")')"
check "accounted-apps: the note says rows are lives, not samples" \
    grep -q "a row per process over its life" <("$RUNMON" summary "$A/accounted-apps-rtx3060.csv" --format json 2>&1)

# With --apps-csv, compute-apps' own header is a header, never "maybe nvidia-smi's own error".
"$RUNMON" summary --apps-csv "$A/compute-apps-load.csv" --format json >/dev/null 2>"$T/e"
check "--apps-csv compute-apps: no 'own error'" test "$(grep -c "own error" "$T/e")" -eq 0

# Idle pmon (a row of "-" per GPU per sample): no process, and the text says so.
"$RUNMON" summary "$A/pmon-s-mu-idle.txt" --format text >"$T/idle.txt" 2>/dev/null
expect_eq "idle pmon: exit 0" 0 "$?"
check "idle pmon: the GPUs ran no process" grep -q "none: the GPUs ran no process" "$T/idle.txt"

# Text: a Processes table, no GPU table made of processes.
"$RUNMON" summary "$A/compute-apps-load.csv" --format text >"$T/ca.txt" 2>/dev/null
check "text: a Processes table" grep -q "^Processes (nvidia-smi's per-process output" "$T/ca.txt"
check "text: pid 654, 3656 MiB" grep -Eq "^  0 +654 .* unknown +3656 " "$T/ca.txt"
check "text: no GPU rows" grep -q "^GPUs: none recorded" "$T/ca.txt"

# Without Date and Time, a sample ends where a process comes again: pmon's 5 samples of two
# processes are 5, not 1 of 10 rows or 10 of 1.
j=$("$RUNMON" summary "$A/pmon-s-mu-load.txt" --gpu-csv "$FIXTURES/captures/query-gpu-allfields-h100-80gb-hbm3-590.48.01-linux-load.csv" --format json 2>/dev/null)
expect_eq "pmon beside a GPU file: its processes on GPU 0's row" "653 654" \
    "$(jq -r '[.gpus[0].processes[].pid] | sort | map(tostring) | join(" ")' <<<"$j")"
expect_eq "pmon beside a GPU file: VRAM of unknown processes per sample, 1860 + 3656" 5516 \
    "$(jq -r '.gpus[0].unknown_vram_mb.peak' <<<"$j")"
expect_eq "pmon beside a GPU file: no top-level processes (all placed)" null "$(jq -r '.processes' <<<"$j")"

# runmon's own apps.csv is read as before.
expect_eq "runmon's apps.csv: still apps_csv, workload figures kept" "apps_csv 4420" \
    "$("$RUNMON" summary --apps-csv "$FIXTURES/sessions/h100-torch-phases/apps.csv" --format json 2>/dev/null |
        jq -r '"\(.data_quality.files[0].kind) \(.workload_peak_vram_mb)"')"
done_testing
