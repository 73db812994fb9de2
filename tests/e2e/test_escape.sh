#!/usr/bin/env bash
# Untrusted text on a terminal: a recorded command line, a host, a GPU name, a phase path and
# a collector's last error holding escape sequences and newlines are printed escaped by the
# human-readable outputs (`runmon sessions`, `runmon summary --format text`), never raw;
# the JSON outputs keep the exact strings. And nvidia-smi's own error is quoted where it
# explains an empty file (item 9a of issue 12).
. "$(dirname "$0")/lib.sh"

export FAKE_SMI_CAPTURES="$FIXTURES/captures"
export PATH="$FAKEBIN:/usr/local/bin:/usr/bin:/bin"
export FAKE_SMI_DMON_MS=200
unset FAKE_SMI_OVERRIDE FAKE_SMI_NVML_ERROR FAKE_SMI_FAULT_ONLY RUNMON_RUNLOG RUNMON_PHASE_PATH

ESC=$'\e'
OSC=$'\e]0;pwned\a'
GPUNAME=$'Evil\e[2JGPU'
HOST=$'node\e[7m\nB'
PHASE=$'ph\e[1mase'
LASTERR=$'nvidia-smi exited: \e]0;x\a\nsecond line'

# No ESC (0x1b) or BEL (0x07) byte anywhere in FILE.
no_raw_controls() { ! LC_ALL=C grep -q $'[\x1b\x07]' "$1"; }

FAKE_SMI_OVERRIDE="name=$GPUNAME" "$RUNMON" record -q -o "$T/sink" -i 0.2 -- \
    sh -c 'sleep 1' "$OSC" $'two\nlines'
s=$(session_dir "$T/sink")
check "a session was recorded" test -n "$s"
# What a hostile machine or a hostile run log could put there: the host in session.json and
# the sink's index, a phase path, a collector's last error.
jq --arg h "$HOST" --arg e "$LASTERR" '.host = $h | .collectors.gpu.last_error = $e' \
    "$s/session.json" >"$T/j" && mv "$T/j" "$s/session.json"
jq -c --arg h "$HOST" 'if .session_id then .host = $h else . end' "$T/sink/index.jsonl" >"$T/j" &&
    mv "$T/j" "$T/sink/index.jsonl"
jq --arg h "$HOST" '.session.host = $h' "$s/state.json" >"$T/j" && mv "$T/j" "$s/state.json"
t0=$(jq -r 'select(.event=="session_start") | .t' "$s/runlog.jsonl")
jq -cn --arg p "$PHASE" --argjson t "$t0" \
    '{ts:"x",type:"phase",pid:1,t:($t + 0.9),name:$p,path:$p,seconds:0.8}' >>"$s/runlog.jsonl"

# --- runmon sessions -----------------------------------------------------------------------
COLUMNS=200 "$RUNMON" sessions "$T/sink" --format text >"$T/sessions.txt"; rc=$?
expect_eq "sessions text: exit 0" 0 "$rc"
check "sessions text: no raw ESC or BEL" no_raw_controls "$T/sessions.txt"
expect_eq "sessions text: a header and one row, the newlines escaped" 2 "$(wc -l <"$T/sessions.txt")"
row=$(tail -n 1 "$T/sessions.txt")
expect_match "sessions text: the OSC argument shown escaped" 'sleep 1 \\x1b\]0;pwned\\x07 two\\nlines$' "$row"
expect_match "sessions text: the host shown escaped, the columns after it still aligned" \
    '^[^ ]+ +completed +node\\x1b\[7m\\nB +[0-9T:.+-]+ ' "$row"
j=$("$RUNMON" sessions "$T/sink" --format json)
expect_eq "sessions json: command exact" "$OSC" "$(jq -r '.sessions[0].command[3]' <<<"$j")"
expect_eq "sessions json: newline argument exact" "$(printf 'two\nlines')" "$(jq -r '.sessions[0].command[4]' <<<"$j")"
expect_eq "sessions json: host exact" "$HOST" "$(jq -r '.sessions[0].host' <<<"$j")"

# --- runmon summary --format text ------------------------------------------------------------
"$RUNMON" summary "$s" --format text >"$T/summary.txt" 2>"$T/summary.err"; rc=$?
expect_eq "summary text: exit 0" 0 "$rc"
check "summary text: no raw ESC or BEL" no_raw_controls "$T/summary.txt"
txt=$(cat "$T/summary.txt")
expect_match "summary text: host escaped on the session line" \
    'host node\\x1b\[7m\\nB  duration' "$txt"
expect_match "summary text: GPU name escaped" 'Evil\\x1b\[2JGPU' "$txt"
expect_match "summary text: phase path escaped" 'ph\\x1b\[1mase' "$txt"
expect_match "summary text: last error escaped on one line" \
    'last error: nvidia-smi exited: \\x1b\]0;x\\x07\\nsecond line' "$txt"
# The GPU table keeps its columns: the sample count ends where the header's SAMPLES ends.
hdr=$(grep -m1 'GPU  *NAME' "$T/summary.txt")
gpu=$(grep -m1 'Evil' "$T/summary.txt")
[[ $hdr =~ ^(.*SAMPLES) ]] && want=${#BASH_REMATCH[1]}
[[ $gpu =~ ^(\ +[0-9]+\ +[^ ]+\ +[0-9]+) ]] && got=${#BASH_REMATCH[1]}
expect_eq "summary text: the GPU row stays aligned" "$want" "${got:-}"
pl=$(grep -m1 'ph\\x1b' "$T/summary.txt")
expect_match "summary text: the phase row stays aligned" '^  ph\\x1b\[1mase {23}1 ' "$pl"
j=$("$RUNMON" summary "$s" --format json)
expect_eq "summary json: host exact" "$HOST" "$(jq -r '.session.host' <<<"$j")"
expect_eq "summary json: GPU name exact" "$GPUNAME" "$(jq -r '.gpus[0].name' <<<"$j")"
expect_eq "summary json: phase path exact" "$PHASE" "$(jq -r '.phases[0].path' <<<"$j")"
expect_eq "summary json: last error exact" "$LASTERR" "$(jq -r '.collectors.gpu.last_error' <<<"$j")"
csv=$("$RUNMON" summary "$s" --format csv)
check "summary csv: GPU name exact" test "$(cut -d, -f5 <<<"$csv" | sed -n 2p)" = "$GPUNAME"

# --- runmon report: the path it prints names the session folder --------------------------
mkdir -p "$T/r"
evil=$T/r/$'s\e]0;t\a'
cp -r "$s" "$evil"
"$RUNMON" report "$evil" >"$T/report.out" 2>&1; rc=$?
expect_eq "report: exit 0" 0 "$rc"
check "report: no raw ESC or BEL in what it prints" no_raw_controls "$T/report.out"
expect_match "report: the path shown escaped" 's\\x1b\]0;t\\x07/report.html$' "$(cat "$T/report.out")"
check "report: written where it says" test -s "$evil/report.html"

# --- 9a: a file holding only nvidia-smi's error -----------------------------------------------
printf 'Failed to initialize NVML: Driver/library version mismatch\n' >"$T/gpu-nvml.csv"
err=$("$RUNMON" summary "$T/gpu-nvml.csv" --format json 2>&1 >/dev/null); rc=$?
expect_eq "nvml file: exit 2" 2 "$rc"
expect_match "nvml file: still says it holds no data rows" "holds no data rows" "$err"
expect_match "nvml file: quotes nvidia-smi's line" \
    "line 1.*: Failed to initialize NVML: Driver/library version mismatch" "$err"
# Blank lines and a header before the error: the error is still the line quoted.
printf '\n%s\n%s\n' "timestamp, index, utilization.gpu [%]" "$(printf 'No devices were found\e[0m')" >"$T/gpu-nodev.csv"
"$RUNMON" summary "$T/gpu-nodev.csv" --format json >/dev/null 2>"$T/nodev.err"; rc=$?
expect_eq "header then error: exit 2" 2 "$rc"
expect_match "header then error: the error line quoted, not the header" \
    "line 3.*: No devices were found\\\\x1b\[0m" "$(cat "$T/nodev.err")"
check "header then error: no raw ESC on stderr" no_raw_controls "$T/nodev.err"
# A header alone is not an error text: the message stays as it was.
err=$("$RUNMON" summary "$FIXTURES/summary/gpu-header-only.csv" --format json 2>&1 >/dev/null)
expect_match "header only: no line quoted" "holds no data rows \(gpu_csv\)$" "$err"

done_testing
