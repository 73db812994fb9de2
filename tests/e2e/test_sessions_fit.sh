#!/usr/bin/env bash
# Issue 36 §7: `runmon sessions` (the listing and --summary) fits $COLUMNS, whatever the
# parameters, phases and arguments; the session id is cut last, and the end it shows is a
# --session argument (any unique suffix of an id; an ambiguous one: exit 2, candidates named).
. "$(dirname "$0")/lib.sh"
export PATH="$FAKEBIN:$(dirname "$RUNMON"):$PATH" FAKE_SMI_CAPTURES="$FIXTURES/captures" FAKE_SMI_GPUS=2 FAKE_SMI_VARY=1
K=$T/sweep
cat >"$T/train.sh" <<'SH'
#!/bin/sh
runmon phase load_data -- true
runmon phase train -- sleep 0.2
runmon phase eval -- true
runmon phase report_metrics -- true
SH
chmod +x "$T/train.sh"
long=$(printf 'x%.0s' $(seq 300))
for lr in 0.1 0.01; do
    for bs in 32 64; do
        "$RUNMON" record -q -o "$K" -i 0.2 --sweep s --param lr=$lr --param bs=$bs --param model=resnet50 \
            -- "$T/train.sh" --lr $lr --bs $bs "$long"
    done
done
# The widest line in characters (UTF-8: the ellipsis and ± are one column each).
widest() { python3 -c 'import sys; print(max(len(l.rstrip("\n")) for l in sys.stdin.buffer.read().decode().splitlines()))'; }
for w in 100 80 60; do
    got=$(COLUMNS=$w "$RUNMON" sessions "$K" --summary --format text | widest)
    check "--summary at COLUMNS=$w: no line over $w ($got)" test "$got" -le "$w"
    got=$(COLUMNS=$w "$RUNMON" sessions "$K" --format text | widest)
    check "the listing at COLUMNS=$w: no line over $w ($got)" test "$got" -le "$w"
    got=$(COLUMNS=$w "$RUNMON" sessions "$K" --format text --sort energy | widest)
    check "the sorted listing at COLUMNS=$w: no line over $w ($got)" test "$got" -le "$w"
    got=$(COLUMNS=$w "$RUNMON" sessions "$K" --summary --group-by lr --format text | widest)
    check "--group-by at COLUMNS=$w: no line over $w ($got)" test "$got" -le "$w"
done
out=$(COLUMNS=100 "$RUNMON" sessions "$K" --summary --format text)
expect_match "--summary at 100: a note names the columns left out" "left out to fit 100 columns: .*COMMAND" "$out"
ids=$(jq -r '.sessions[].session_id' <(COLUMNS=100 "$RUNMON" sessions "$K" --summary --format json))
first=$(head -1 <<<"$ids")
# With one phase column, the id is whole at 104 columns (GPU and COMMAND left out first).
row=$(COLUMNS=104 "$RUNMON" sessions "$K" --summary --phase train --format text | sed -n 2p)
expect_eq "the id is not cut while other columns can go" "$first" "${row%% *}"
row=$(COLUMNS=100 "$RUNMON" sessions "$K" --format text | sed -n 2p)
expect_eq "the listing: the id whole at 100 columns" "$first" "${row%% *}"

# The cut id, as shown (with its ellipsis), picks its session.
shown=$(COLUMNS=60 "$RUNMON" sessions "$K" --summary --format text | sed -n 2p | cut -d' ' -f1)
expect_match "at 60 columns the id is cut at its start" "^…" "$shown"
err=$("$RUNMON" summary "$K" --session "$shown" --format json 2>&1 >"$T/s.json"); rc=$?
expect_eq "--session with the cut id as shown: exit 0" 0 "$rc"
expect_eq "--session with the cut id: its session" "$first" "$(jq -r .session.id "$T/s.json")"
"$RUNMON" report "$K" --session "${first: -9}" -o "$T/r.html" >/dev/null 2>&1; rc=$?
expect_eq "report --session SUFFIX: exit 0" 0 "$rc"
# A suffix that is surely ambiguous: a sink with two sessions whose pids end alike is made
# by copying a session folder under a second id ending the same way.
cp -r "$K/$first" "$K/${first%-*}-9${first##*-}"
"$RUNMON" sessions "$K" --rebuild --format json >/dev/null
err=$("$RUNMON" summary "$K" --session "${first##*-}" 2>&1 >/dev/null); rc=$?
expect_eq "an ambiguous suffix: exit 2" 2 "$rc"
expect_match "an ambiguous suffix: both candidates named" "2 sessions end so: .*${first}.*-9${first##*-}|2 sessions end so: .*-9${first##*-}.*${first}" "$err"
err=$("$RUNMON" summary "$K" --session "nosuchsuffix" 2>&1 >/dev/null); rc=$?
expect_eq "no id ends so: exit 2" 2 "$rc"
expect_match "no id ends so: the message" "no session 'nosuchsuffix'" "$err"
done_testing
