#!/usr/bin/env bash
# CSV and hostile text (issue 27 item 5): `runmon sessions --format csv` and `runmon summary
# --format csv` written to a terminal escape what a session recorded (a host holding an OSC 52
# clipboard write and BEL, an injected status, a command, a GPU name, a phase path) as the
# text output does; written to a file or a pipe they keep the exact bytes, RFC 4180 quoted.
# The terminal is a real pty (script(1)).
. "$(dirname "$0")/lib.sh"

export FAKE_SMI_CAPTURES="$FIXTURES/captures"
export PATH="$FAKEBIN:/usr/local/bin:/usr/bin:/bin"
export FAKE_SMI_DMON_MS=200
unset FAKE_SMI_OVERRIDE FAKE_SMI_NVML_ERROR FAKE_SMI_FAULT_ONLY RUNMON_RUNLOG RUNMON_PHASE_PATH

OSC52=$'\e]52;c;cHduZWQ=\a'
HOST="evil${OSC52}host"
STATUS=$'failed\e[2J\e[H'
GPUNAME=$'Evil\e[2J\aGPU'   # (the fake nvidia-smi's overrides are cut at ';')
PHASE=$'ph\xc2\x9b31mase'   # U+009B, the C1 CSI, in UTF-8
ARG=$'x\e[5m,"y"'

# No ESC (0x1b), BEL (0x07) or C1 CSI (0x9b) byte anywhere in FILE.
no_raw_controls() { ! LC_ALL=C grep -q $'[\x1b\x07\x9b]' "$1"; }
# Runs "$@" with its stdout on a pty; what it printed goes to stdout (CRLF made LF).
on_tty() {
    local cmd="" a
    for a in "$@"; do cmd+=" $(printf '%q' "$a")"; done
    script -qec "$cmd" /dev/null | tr -d '\r'
}
# Field N (1-based) of CSV row R (0 = header) of FILE, as Python's csv module reads it.
csv_field() {
    python3 -c 'import csv,sys; r=list(csv.reader(open(sys.argv[1], newline="", encoding="utf-8", errors="surrogateescape"))); sys.stdout.write(r[int(sys.argv[2])][int(sys.argv[3]) - 1])' "$@"
}

FAKE_SMI_OVERRIDE="name=$GPUNAME" "$RUNMON" record -q -o "$T/sink" -i 0.2 -- \
    sh -c 'sleep 1' "$ARG"
s=$(session_dir "$T/sink")
check "a session was recorded" test -n "$s"
# What a hostile machine or a tampered sink could hold: the host and the status in the index
# and the session's files, a phase path in the run log.
jq -c --arg h "$HOST" --arg st "$STATUS" 'if .session_id then .host = $h | .status = $st else . end' \
    "$T/sink/index.jsonl" >"$T/j" && mv "$T/j" "$T/sink/index.jsonl"
jq --arg h "$HOST" --arg st "$STATUS" '.host = $h | .status = $st' "$s/session.json" >"$T/j" &&
    mv "$T/j" "$s/session.json"
t0=$(jq -r 'select(.event=="session_start") | .t' "$s/runlog.jsonl")
printf '{"ts":"x","type":"phase","pid":1,"t":%s,"name":"p","path":"%s","seconds":0.8}\n' \
    "$(jq -n "$t0 + 0.9")" "$PHASE" >>"$s/runlog.jsonl"

# --- runmon sessions --format csv ------------------------------------------------------------
on_tty "$RUNMON" sessions "$T/sink" --format csv >"$T/tty.csv"
expect_eq "sessions csv on a terminal: a header and one row" 2 "$(wc -l <"$T/tty.csv")"
check "sessions csv on a terminal: no raw ESC, BEL or C1 byte" no_raw_controls "$T/tty.csv"
row=$(tail -n 1 "$T/tty.csv")
expect_match "sessions csv on a terminal: the host escaped (OSC 52 shown, not sent)" \
    ',evil\\x1b\]52;c;cHduZWQ=\\x07host,' "$row"
expect_match "sessions csv on a terminal: the status escaped" \
    '^[^,]+,failed\\x1b\[2J\\x1b\[H,' "$row"
expect_eq "sessions csv on a terminal: the command, its JSON text (which has no raw control)" \
    "$(jq -c .command "$s/session.json")" "$(csv_field "$T/tty.csv" 1 10)"
on_tty "$RUNMON" sessions "$T/sink" --format csv --summary >"$T/tty-sum.csv"
check "sessions --summary csv on a terminal: no raw ESC, BEL or C1 byte" no_raw_controls "$T/tty-sum.csv"
expect_match "sessions --summary csv on a terminal: the host escaped" \
    ',evil\\x1b\]52;c;cHduZWQ=\\x07host,' "$(tail -n 1 "$T/tty-sum.csv")"

"$RUNMON" sessions "$T/sink" --format csv >"$T/pipe.csv"
expect_eq "sessions csv to a pipe: the host's exact bytes" "$HOST" "$(csv_field "$T/pipe.csv" 1 3)"
expect_eq "sessions csv to a pipe: the status's exact bytes" "$STATUS" "$(csv_field "$T/pipe.csv" 1 2)"
expect_eq "sessions csv to a pipe: the command, its JSON text" \
    "$(jq -c .command "$s/session.json")" "$(csv_field "$T/pipe.csv" 1 10)"
"$RUNMON" sessions "$T/sink" --format csv --summary >"$T/pipe-sum.csv"
expect_eq "sessions --summary csv to a pipe: the host's exact bytes" "$HOST" \
    "$(csv_field "$T/pipe-sum.csv" 1 3)"

# --- runmon summary --format csv -------------------------------------------------------------
on_tty "$RUNMON" summary "$s" --format csv >"$T/sum-tty.csv" 2>/dev/null
check "summary csv on a terminal: rows were printed" grep -q '^gpu,' "$T/sum-tty.csv"
check "summary csv on a terminal: no raw ESC, BEL or C1 byte" no_raw_controls "$T/sum-tty.csv"
expect_match "summary csv on a terminal: the GPU name escaped" \
    ',Evil\\x1b\[2J\\x07GPU,' "$(grep -m1 '^gpu,' "$T/sum-tty.csv")"
expect_match "summary csv on a terminal: the phase path escaped" \
    '^phase,ph\\xc2\\x9b31mase,' "$(grep -m1 '^phase,' "$T/sum-tty.csv")"
"$RUNMON" summary "$s" --format csv >"$T/sum.csv" 2>/dev/null
expect_eq "summary csv to a pipe: the GPU name's exact bytes" "$GPUNAME" "$(csv_field "$T/sum.csv" 1 5)"
phase_row=$(grep -n '^phase,' "$T/sum.csv" | head -1 | cut -d: -f1)
expect_eq "summary csv to a pipe: the phase path's exact bytes" "$PHASE" \
    "$(csv_field "$T/sum.csv" $((phase_row - 1)) 2)"
"$RUNMON" summary "$s" --format csv -o "$T/sum-file.csv" 2>/dev/null
check "summary csv -o FILE: the same exact bytes as to a pipe" cmp -s "$T/sum.csv" "$T/sum-file.csv"

done_testing
