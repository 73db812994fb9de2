#!/usr/bin/env bash
# A signal that stops `runmon record -- CMD` (issue 27 item 7, issue 25's Ctrl-C): the command
# runs in a process group of its own; SIGINT, SIGTERM or SIGHUP to runmon reaches that group
# and every process the command started, setsid'd ones included (runmon is their subreaper);
# what is left after --kill-grace gets SIGKILL; the session is "interrupted" with the signal
# recorded and the exit status passed through. Real processes, real signals. The terminal
# side (the command's group in the foreground, Ctrl-C, Ctrl-Z and fg, the terminal taken back)
# is driven in tmux.
. "$(dirname "$0")/lib.sh"

export FAKE_SMI_CAPTURES="$FIXTURES/captures"
export PATH="$FAKEBIN:/usr/local/bin:/usr/bin:/bin"
export FAKE_SMI_DMON_MS=200
unset FAKE_SMI_OVERRIDE FAKE_SMI_NVML_ERROR FAKE_SMI_FAULT_ONLY RUNMON_RUNLOG RUNMON_PHASE_PATH

# A pid is gone when it has no /proc entry or is a zombie (dead, only waiting for a reaper:
# pid 1 never reaps on some machines).
gone() { local st; st=$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null) || return 0; [ "$st" = Z ]; }
# None of the pids in the files given is alive; prints the ones that are.
none_alive() {
    local f p alive=""
    for f in "$@"; do
        for p in $(cat "$f" 2>/dev/null); do gone "$p" || alive="$alive $p"; done
    done
    [ -z "$alive" ] || { echo "# still alive:$alive"; return 1; }
}
# The files the command writes its pids to exist and are not empty.
have_pids() { local f; for f in "$@"; do [ -s "$f" ] || return 1; done; }
kill_pids() { local f; for f in "$@"; do kill -9 $(cat "$f" 2>/dev/null) 2>/dev/null; done; true; }
session() { session_dir "$T/$1"; }
field() { jq -r "$2" "$(session "$1")/session.json"; }

# --- (1) kill -TERM runmon: the background child and the setsid'd grandchild end too -------
# Each says when SIGTERM reaches it (not the SIGKILL after the grace).
cat >"$T/term.sh" <<EOF
sh -c 'trap "echo TERM >$T/t.bg.got; exit 143" TERM; echo \$\$ >$T/t.bg; sleep 300 & echo \$! >$T/t.bg.sleep; wait' &
setsid sh -c 'trap "echo TERM >$T/t.sid.got; exit 143" TERM; echo \$\$ >$T/t.sid; sleep 300 & echo \$! >$T/t.sid.sleep; wait' &
echo \$\$ >$T/t.sh
wait
EOF
mkdir -p "$T/smi"
FAKE_SMI_STATE_DIR=$T/smi "$RUNMON" record -q -o "$T/term" -i 0.2 -- sh "$T/term.sh" &
rp=$!
track "$rp"
PIDS=("$T/t.sh" "$T/t.bg" "$T/t.bg.sleep" "$T/t.sid" "$T/t.sid.sleep")
check "TERM: the command started its children" wait_for "have_pids ${PIDS[*]}" 20
sh_pgid=$(awk '{print $5}' "/proc/$(cat "$T/t.sh")/stat" 2>/dev/null)
rm_pgid=$(awk '{print $5}' "/proc/$rp/stat" 2>/dev/null)
check "the command has a process group of its own (not runmon's)" test -n "$sh_pgid" -a "$sh_pgid" != "$rm_pgid"
expect_eq "... led by the command" "$(cat "$T/t.sh")" "$sh_pgid"
sid_sid=$(awk '{print $6}' "/proc/$(cat "$T/t.sid")/stat" 2>/dev/null)
expect_eq "the setsid'd grandchild has left the command's session" "$(cat "$T/t.sid")" "$sid_sid"
kill -TERM "$rp"
check "TERM: runmon ends" wait_for "! kill -0 $rp 2>/dev/null" 60
wait "$rp"; rc=$?
expect_eq "TERM: exit 143 passed through" 143 "$rc"
check "TERM: SIGTERM reached the background child" test -s "$T/t.bg.got"
check "TERM: SIGTERM reached the setsid'd grandchild" test -s "$T/t.sid.got"
check "TERM: no descendant survives (the shell, its children, theirs)" none_alive "${PIDS[@]}"
kill_pids "${PIDS[@]}"
expect_eq "TERM: session.json says interrupted" interrupted "$(field term .status)"
expect_eq "TERM: ... by SIGTERM (signal 15)" 15 "$(field term .signal)"
expect_eq "TERM: ... exit code 143" 143 "$(field term .exit_code)"
expect_eq "TERM: the index's last line says interrupted by 15" "interrupted 15 143" \
    "$(tail -n 1 "$T/term/index.jsonl" | jq -r '"\(.status) \(.signal) \(.exit_code)"')"
j=$("$RUNMON" sessions "$T/term" --format json)
expect_eq "TERM: sessions json: interrupted, signal 15" "interrupted 15" \
    "$(jq -r '.sessions[0] | "\(.status) \(.signal)"' <<<"$j")"
s=$(session term)
expect_eq "TERM: summary.json says interrupted by 15" "interrupted 15" \
    "$(jq -r '.session | "\(.status) \(.signal)"' "$s/summary.json")"
expect_eq "TERM: the run log's session_end says so" '{"status":"interrupted","exit_code":143,"signal":15}' \
    "$(event_data "$s" session_end | jq -c '{status, exit_code, signal}')"
txt=$("$RUNMON" summary "$s" --format text 2>/dev/null)
expect_match "TERM: the text summary says interrupted (SIGTERM)" \
    'status interrupted \(SIGTERM\)  host .* exit 143' "$txt"
"$RUNMON" sessions "$T/term" --format text >"$T/term.txt"
expect_match "TERM: the text listing says interrupted" \
    '^[^ ]+ +interrupted +[^ ]+ ' "$(tail -n 1 "$T/term.txt")"
check "TERM: the nvidia-smi collectors are stopped too" no_fake_left "$T/smi"

# --- (2) Ctrl-C as a terminal sends it: SIGINT to runmon's process group -------------------
# runmon led its own group (setsid), as a shell's job is; the command is not in it.
setsid "$RUNMON" record -q -o "$T/int" -i 0.2 -- sh -c "echo \$\$ >'$T/i.sh'; sleep 300; :" &
rp=$!
track "$rp"
check "INT: the command runs" wait_for "have_pids '$T/i.sh' && test -f '$T/int/latest/session.json'" 20
kill -INT -- "-$rp"
check "INT: runmon ends" wait_for "! kill -0 $rp 2>/dev/null" 60
wait "$rp"; rc=$?
expect_eq "INT: exit 130 passed through" 130 "$rc"
expect_eq "INT: interrupted by SIGINT (2), exit code 130" "interrupted 2 130" \
    "$(field int '"\(.status) \(.signal) \(.exit_code)"')"
check "INT: the command is gone" none_alive "$T/i.sh"
kill_pids "$T/i.sh"
"$RUNMON" sessions "$T/int" --format csv >"$T/int.csv"
expect_eq "INT: sessions csv: status and the signal column" "interrupted,2" \
    "$(tail -n 1 "$T/int.csv" | awk -F, '{print $2 "," $NF}')"

# --- (3) SIGHUP (a closed terminal, a scheduler) ---------------------------------------------
"$RUNMON" record -q -o "$T/hup" -i 0.2 -- sleep 300 &
rp=$!
track "$rp"
wait_for "test -f '$T/hup/latest/session.json'" 20
sleep 0.3
kill -HUP "$rp"
wait "$rp"; rc=$?
expect_eq "HUP: exit 129, interrupted by 1" "129 interrupted 1" "$rc $(field hup '"\(.status) \(.signal)"')"

# --- (4) a command that ignores SIGTERM gets SIGKILL after --kill-grace ---------------------
"$RUNMON" record -o "$T/deaf" -i 0.2 --kill-grace 1 -- sh -c \
    "trap '' TERM; sleep 300 & echo \$! >'$T/d.bg'; setsid sh -c 'trap \"\" TERM; echo \$\$ >\"$T/d.sid\"; sleep 300' & wait" \
    2>"$T/deaf.err" &
rp=$!
track "$rp"
check "deaf: the command started its children" wait_for "have_pids '$T/d.bg' '$T/d.sid'" 20
kill -TERM "$rp"
check "deaf: runmon ends after the grace" wait_for "! kill -0 $rp 2>/dev/null" 60
wait "$rp"; rc=$?
expect_eq "deaf: exit 137 (SIGKILL)" 137 "$rc"
expect_eq "deaf: interrupted by SIGTERM all the same" "interrupted 15 137" \
    "$(field deaf '"\(.status) \(.signal) \(.exit_code)"')"
check "deaf: nothing survives the SIGKILL" none_alive "$T/d.bg" "$T/d.sid"
kill_pids "$T/d.bg" "$T/d.sid"

# --- (5) a second signal ends the grace at once ----------------------------------------------
"$RUNMON" record -q -o "$T/twice" -i 0.2 --kill-grace 300 -- sh -c \
    "trap '' TERM INT; echo \$\$ >'$T/w.sh'; while :; do sleep 1; done" &
rp=$!
track "$rp"
check "twice: the command runs" wait_for "have_pids '$T/w.sh'" 20
kill -TERM "$rp"
sleep 0.5
check "twice: one TERM leaves it in its grace" kill -0 "$rp"
kill -INT "$rp"
check "twice: a second signal kills at once (not after 300 s)" wait_for "! kill -0 $rp 2>/dev/null" 60
wait "$rp"; rc=$?
expect_eq "twice: exit 137, interrupted by the first signal" "137 interrupted 15" \
    "$rc $(field twice '"\(.status) \(.signal)"')"
kill_pids "$T/w.sh"

# --- (6) the command killed by SIGTERM from elsewhere, and what it left behind ---------------
# (kill PID of the command, as a job's own tooling might). The background child that ignores
# TERM is ended too, after the grace; runmon says so on stderr.
"$RUNMON" record -o "$T/cmdkill" -i 0.2 --kill-grace 1 -- sh -c \
    "sh -c 'trap \"\" TERM; echo \$\$ >\"$T/c.bg\"; sleep 300' & echo \$\$ >'$T/c.sh'; wait" \
    2>"$T/cmdkill.err" &
rp=$!
track "$rp"
check "cmdkill: the command runs" wait_for "have_pids '$T/c.sh' '$T/c.bg'" 20
kill -TERM "$(cat "$T/c.sh")"
check "cmdkill: runmon ends" wait_for "! kill -0 $rp 2>/dev/null" 60
wait "$rp"; rc=$?
expect_eq "cmdkill: exit 143, interrupted by 15" "143 interrupted 15" "$rc $(field cmdkill '"\(.status) \(.signal)"')"
check "cmdkill: the TERM-deaf child is gone too" none_alive "$T/c.bg"
check "cmdkill: runmon said it was waiting for it" grep -q 'still running after SIGTERM; SIGKILL in' "$T/cmdkill.err"
kill_pids "$T/c.bg"

# --- (7) unchanged: a normal end, a failure; what a normal end leaves runs on -----------------
"$RUNMON" record -q -o "$T/ok" -i 0.2 -- sh -c "sleep 300 & echo \$! >'$T/o.bg'"
rc=$?
expect_eq "normal end: exit 0, completed, no signal" "0 completed null 0" \
    "$rc $(field ok '"\(.status) \(.signal) \(.exit_code)"')"
if gone "$(cat "$T/o.bg")"; then
    not_ok "normal end: a background process it left is left alone"
else
    ok "normal end: a background process it left is left alone"
fi
kill_pids "$T/o.bg"
"$RUNMON" record -q -o "$T/fail" -i 0.2 -- sh -c 'exit 3'
rc=$?
expect_eq "failure: exit 3, failed, no signal" "3 failed null 3" \
    "$rc $(field fail '"\(.status) \(.signal) \(.exit_code)"')"
"$RUNMON" record -q -o "$T/killed" -i 0.2 -- sh -c 'kill -KILL $$'
rc=$?
expect_eq "killed by SIGKILL (not a stop signal): failed, 137" "137 failed null" \
    "$rc $(field killed '"\(.status) \(.signal)"')"
"$RUNMON" record -q -o "$T/bad" --kill-grace -1 -- true 2>"$T/bad.err"
expect_eq "--kill-grace -1 is refused (exit 2)" 2 "$?"
check "... with a message" grep -q -- '--kill-grace must be a number from 0 to 3600' "$T/bad.err"

# --- (8) on a terminal (tmux): the command in the foreground, Ctrl-C, Ctrl-Z and fg -----------
if ! command -v tmux >/dev/null 2>&1; then
    not_ok "tmux is installed (.ci/deps.sh test)"
    done_testing
    exit
fi
TM=(tmux -S "$T/tmux.sock")
_sig_cleanup() { "${TM[@]}" kill-server 2>/dev/null; _t_cleanup; }
trap _sig_cleanup EXIT
pane() { "${TM[@]}" capture-pane -p -t "$1"; }
"${TM[@]}" new-session -d -s sh -x 150 -y 40 "env -i PATH='$PATH' HOME='$T' HISTFILE=/dev/null TERM=screen bash --norc --noprofile -i"
"${TM[@]}" send-keys -t sh "PS1='ready> '; cd '$T'" Enter
check "tty: the shell is up" wait_for "pane sh | grep -q '^ready>'" 10
# A command that reads the terminal: it must be in the foreground group (else SIGTTIN).
"${TM[@]}" send-keys -t sh "'$RUNMON' record -q -o tty -i 0.2 -- sh -c 'read x; echo \"got:\$x\" >read.out'; echo rc=\$?" Enter
wait_for "test -f '$T/tty/latest/session.json'" 20
sleep 0.5
"${TM[@]}" send-keys -t sh "hello" Enter
check "tty: the command read the terminal" wait_for "grep -qsx got:hello '$T/read.out'" 20
check "tty: runmon ended with it (exit 0)" wait_for "pane sh | grep -qx 'rc=0'" 20
# Ctrl-C reaches the command's group (the foreground), not runmon: interrupted, 130.
"${TM[@]}" send-keys -t sh "clear; '$RUNMON' record -q -o ctrlc -i 0.2 -- sleep 300; echo rc=\$?" Enter
wait_for "test -f '$T/ctrlc/latest/session.json'" 20
sleep 0.5
"${TM[@]}" send-keys -t sh C-c
check "tty: Ctrl-C stops it, exit 130" wait_for "pane sh | grep -q 'rc=130$'" 20
expect_eq "tty: Ctrl-C: interrupted by SIGINT" "interrupted 2 130" \
    "$(field ctrlc '"\(.status) \(.signal) \(.exit_code)"')"
# Ctrl-Z stops the command and runmon (the shell's job), fg continues both.
"${TM[@]}" send-keys -t sh "clear; '$RUNMON' record -q -o ctrlz -i 0.2 -- sh -c 'read x; echo \"got:\$x\" >z.out'; echo rc=\$?" Enter
wait_for "test -f '$T/ctrlz/latest/session.json'" 20
sleep 0.5
"${TM[@]}" send-keys -t sh C-z
check "tty: Ctrl-Z: the shell sees its job stopped" wait_for "pane sh | grep -q 'Stopped'" 20
"${TM[@]}" send-keys -t sh "clear; fg" Enter
sleep 1
"${TM[@]}" send-keys -t sh "world" Enter
check "tty: after fg the command reads the terminal again" wait_for "grep -qsx got:world '$T/z.out'" 20
check "tty: and ends normally (completed)" wait_for "test -f '$T/ctrlz/latest/summary.json'" 20
expect_eq "tty: Ctrl-Z and fg: completed, exit 0" "completed 0" "$(field ctrlz '"\(.status) \(.exit_code)"')"
# Started in the background, the command stops at its first read (SIGTTIN), runmon with it,
# and `fg` gives it the terminal.
"${TM[@]}" send-keys -t sh "clear; '$RUNMON' record -q -o bg -i 0.2 -- sh -c 'read x; echo \"got:\$x\" >bg.out' &" Enter
wait_for "test -s '$T/bg/latest/session.json'" 20
bgpid=$(field bg .pid)
check "tty: started with &, runmon stops at the command's read (SIGTTIN), as a job does" \
    wait_for "[ \"\$(awk '{print \$3}' /proc/$bgpid/stat 2>/dev/null)\" = T ]" 20
"${TM[@]}" send-keys -t sh "clear; fg" Enter
sleep 1
"${TM[@]}" send-keys -t sh "later" Enter
check "tty: after fg the command reads the terminal" wait_for "grep -qsx got:later '$T/bg.out'" 20
check "tty: and ends" wait_for "test -f '$T/bg/latest/summary.json'" 20
expect_eq "tty: started with &: completed, exit 0" "completed 0" "$(field bg '"\(.status) \(.exit_code)"')"
# The terminal is given back at the end: a parent without job control (sh -c) reads it after.
cat >"$T/back.sh" <<EOF
cd '$T'
'$RUNMON' record -q -o back -i 0.2 -- sh -c 'read x'
read y
echo "after:\$y" >back.out
EOF
"${TM[@]}" new-session -d -s back -x 120 -y 20 "env PATH='$PATH' sh '$T/back.sh'"
wait_for "test -f '$T/back/latest/session.json'" 20
sleep 0.5
"${TM[@]}" send-keys -t back "one" Enter
wait_for "test -f '$T/back/latest/summary.json'" 20
sleep 0.5
"${TM[@]}" send-keys -t back "two" Enter
check "tty: the parent reads the terminal after runmon" wait_for "grep -qsx after:two '$T/back.out'" 20

done_testing
