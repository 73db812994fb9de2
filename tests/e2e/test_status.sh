#!/usr/bin/env bash
# runmon record's live status line: on a terminal (util-linux `script` gives it a pty) one
# line on stderr rewritten in place, events on lines of their own; nothing of it when stderr
# is not a terminal or with -q.
. "$(dirname "$0")/lib.sh"

export FAKE_SMI_CAPTURES="$FIXTURES/captures"
export PATH="$FAKEBIN:/usr/local/bin:/usr/bin:/bin"
export FAKE_SMI_DMON_MS=200
unset FAKE_SMI_GPUS FAKE_SMI_OVERRIDE FAKE_SMI_NVML_ERROR FAKE_SMI_FAULT_ONLY FAKE_SMI_EXIT_AFTER \
    RUNMON_RUNLOG RUNMON_PHASE_PATH

if ! script -qfec true /dev/null >/dev/null 2>&1; then
    not_ok "util-linux script is installed" "install it with: .ci/deps.sh test (Debian package bsdutils)"
    done_testing
    exit 1
fi
ok "util-linux script is installed"

# on a pty: stdout and stderr both reach the captured terminal
q() { printf '%q ' "$@"; }
script -qfec "$(q "$RUNMON" record -o "$T/a" -i 0.2 -- "$RUNMON" phase 'train' -- sleep 3)" \
    /dev/null >"$T/tty.out" 2>&1
expect_eq "on a pty: record exits 0" 0 "$?"
out=$(cat "$T/tty.out")
check "the status line is rewritten in place (\\r + erase to end of line)" \
    grep -q $'\r''elapsed 0:0[0-9].*'$'\033''\[K' "$T/tty.out"
check "it is drawn about once a second (at least 3 times in 3 s)" \
    test "$(grep -o 'elapsed 0:0' "$T/tty.out" | wc -l)" -ge 3
check "it shows the open phase" grep -q 'elapsed 0:0[0-9] | phase train' "$T/tty.out"
check "it shows the mean GPU utilization" grep -q '| util 100% vram [0-9.]*G peak [0-9.]*G' "$T/tty.out"
check "it shows the collectors' states" grep -q 'gpu ok dmon ok cpu ok proc ok' "$T/tty.out"
check "it is cleared before the summary" grep -q $'\r\033''\[Krunmon summary:' "$T/tty.out"
expect_match "the summary still prints" "Collectors" "$out"

# a collector that goes down: degraded and recovered lines of their own
script -qfec "$(q env FAKE_SMI_FAULT_ONLY=gpu FAKE_SMI_EXIT_AFTER=3 "$RUNMON" record -o "$T/b" -i 0.2 -- sleep 3)" \
    /dev/null >"$T/deg.out" 2>&1
expect_eq "degraded: record exits 0" 0 "$?"
check "degraded: an event line of its own" \
    grep -q $'\r\033''\[Krunmon record: gpu collector degraded: .*(retry in 1 s)' "$T/deg.out"
check "degraded: the recovery too" grep -q 'runmon record: gpu collector recovered after' "$T/deg.out"
check "degraded: the status line says so" grep -q '| gpu degraded' "$T/deg.out"

# a phase path with control characters (runmon phase refuses them; another writer of the run
# log may not) reaches the terminal escaped
cat >"$T/esc.sh" <<'SH'
printf '{"ts":"x","type":"phase_enter","name":"x","path":"x\u001b[2Jy","depth":0,"pid":%d,"t":1}\n' $$ >>"$RUNMON_RUNLOG"
sleep 2
SH
script -qfec "$(q "$RUNMON" record -o "$T/e" -i 0.2 -- sh "$T/esc.sh")" /dev/null >"$T/esc.out" 2>&1
check "escape: the phase path is escaped" grep -qF 'phase x\x1b[2Jy' "$T/esc.out"
check "escape: no raw ESC [2J" test -z "$(grep -a $'\033\\[2J' "$T/esc.out")"

# not a terminal: stderr to a file
script -qfec "$(q "$RUNMON" record -o "$T/c" -i 0.2 -- sleep 2) 2>$(q "$T/file.err")" \
    /dev/null >"$T/c.out" 2>&1
expect_eq "stderr to a file: record exits 0" 0 "$?"
check "stderr to a file: no status line" test -z "$(grep -a -e 'elapsed' -e $'\r' "$T/file.err")"
check "stderr to a file: the summary still prints" grep -q 'Collectors' "$T/file.err"
FAKE_SMI_FAULT_ONLY=gpu FAKE_SMI_EXIT_AFTER=3 "$RUNMON" record -o "$T/d" -i 0.2 -- sleep 2 \
    2>"$T/nodeg.err"
check "stderr to a file: no degraded line" test -z "$(grep -a 'collector degraded' "$T/nodeg.err")"

# -q on a terminal: nothing
script -qfec "$(q "$RUNMON" record -q -o "$T/q" -i 0.2 -- sleep 1.5)" /dev/null >"$T/q.out" 2>&1
expect_eq "-q on a pty: nothing on the terminal" "" "$(cat "$T/q.out")"
done_testing
