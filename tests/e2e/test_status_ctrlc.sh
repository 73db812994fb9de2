#!/usr/bin/env bash
# Issue 36 §10: on a terminal, Ctrl-C's SIGINT goes to the command's process group, and the
# command may print at once (Python's traceback): the live status line is erased before it
# can, never left in front of the command's output ("... io ok^CTraceback"). Driven in tmux.
. "$(dirname "$0")/lib.sh"
if ! command -v tmux >/dev/null 2>&1; then
    not_ok "tmux is installed (.ci/deps.sh test)"
    done_testing
    exit
fi
export PATH="$FAKEBIN:$PATH" FAKE_SMI_CAPTURES="$FIXTURES/captures" FAKE_SMI_GPUS=1
TM=(tmux -S "$T/tmux.sock")
_st_cleanup() { "${TM[@]}" kill-server 2>/dev/null; _t_cleanup; }
trap _st_cleanup EXIT
pane() { "${TM[@]}" capture-pane -p -t sh; }
"${TM[@]}" new-session -d -s sh -x 160 -y 40 "env -i PATH='$PATH' HOME='$T' HISTFILE=/dev/null TERM=screen FAKE_SMI_CAPTURES='$FAKE_SMI_CAPTURES' FAKE_SMI_GPUS=1 bash --norc --noprofile -i"
"${TM[@]}" send-keys -t sh "PS1='ready> '; cd '$T'" Enter
check "the shell is up" wait_for "pane | grep -q '^ready>'" 10
cat >"$T/work.py" <<'PY'
import sys, time
print("working", flush=True)
time.sleep(120)
PY
for round in 1 2; do
    "${TM[@]}" send-keys -t sh "clear; '$RUNMON' record -o s$round -i 0.2 -- python3 work.py; echo rc=\$?" Enter
    check "round $round: the status line is drawn" wait_for "pane | grep -q 'elapsed 0:0[1-9].* ok'" 20
    "${TM[@]}" send-keys -t sh C-c
    check "round $round: the command ends" wait_for "pane | grep -q '^rc='" 30
    out=$(pane)
    tb=$(grep 'Traceback' <<<"$out")
    expect_eq "round $round: the traceback starts its line (no status line in front)" \
        "Traceback (most recent call last):" "$tb"
    expect_eq "round $round: no line holds the status and the command's output" "" \
        "$(grep -E 'elapsed.*(Traceback|KeyboardInterrupt|\^C)' <<<"$out")"
    expect_eq "round $round: the status line is gone at the end" "" "$(grep 'elapsed' <<<"$out")"
done
check "the watcher left nothing behind" test -z "$(pgrep -f "$RUNMON record -o s" || true)"
done_testing
