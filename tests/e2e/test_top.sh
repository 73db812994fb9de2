#!/usr/bin/env bash
# runmon top: --once on a finished recording (the figures of the last gpu.csv rows, the
# status), the curses view in tmux against a live recording on the fake nvidia-smi (GPU rows,
# the open phase, `q` quits, redrawn at a new width when the window is resized), following
# the session's files across rollovers, degraded collectors shown as such (never as zeros),
# NO_COLOR, and a bad path.
. "$(dirname "$0")/lib.sh"

SYSPATH=/usr/local/bin:/usr/bin:/bin
export PATH="$FAKEBIN:$SYSPATH"
export FAKE_SMI_CAPTURES="$FIXTURES/captures" FAKE_SMI_GPUS=2
unset FAKE_SMI_OVERRIDE FAKE_SMI_NVML_ERROR FAKE_SMI_FAULT_ONLY FAKE_SMI_APPS RUNMON_RUNLOG \
    RUNMON_PHASE_PATH NO_COLOR

# (1) --once on a finished recording.
"$RUNMON" record -q -o "$T/done" -i 0.2 -- sh -c "'$RUNMON' phase load -- sleep 0.6" >/dev/null
expect_eq "a finished recording exits 0" 0 "$?"
s=$(session_dir "$T/done")
frame=$("$RUNMON" top --once "$T/done" 2>"$T/once.err")
expect_eq "--once exits 0" 0 "$?"
status=$(jq -r .status "$s/session.json")
expect_match "--once: the title holds the session's status" "^runmon top .* $status " \
    "$(head -1 <<<"$frame")"
check "--once: says the session ended" grep -q "^session ended: $status" <<<"$frame"
col() { head -1 "$s/gpu.csv" | tr ',' '\n' | grep -nx "$1" | cut -d: -f1; }
ci=$(col index) cu=$(col utilization.gpu) cm=$(col memory.used) ct=$(col memory.total)
for g in 0 1; do
    last=$(awk -F, -v c="$ci" -v g="$g" 'NR > 1 && $c == g { row = $0 } END { print row }' "$s/gpu.csv")
    u=$(cut -d, -f"$cu" <<<"$last") m=$(cut -d, -f"$cm" <<<"$last") mt=$(cut -d, -f"$ct" <<<"$last")
    line=$(grep -E "^ +$g NVIDIA" <<<"$frame")
    expect_match "--once: GPU $g row has the last utilization ($u%)" " $u% " "$line"
    expect_match "--once: GPU $g row has the last memory ($m/$mt MiB)" " $m/$mt " "$line"
done
check "--once: the completed phase" grep -qE "^done +load +0\.[0-9]+s ok" <<<"$frame"
check "--once: collectors' health" grep -q "^collectors  gpu healthy" <<<"$frame"
check "--once: fits 80 columns" test "$("$RUNMON" top --once --width 80 "$T/done" 2>/dev/null |
    awk '{ print length($0) }' | sort -n | tail -1)" -le 80
expect_eq "--once on the session folder itself: the same frame" \
    "$(sed 1d <<<"$frame" | grep -v '^runmon top')" \
    "$("$RUNMON" top --once "$s" 2>/dev/null | sed 1d | grep -v '^runmon top')"

# (4) a path that is not a session or a sink.
"$RUNMON" top --once "$T/nowhere" >/dev/null 2>"$T/bad.err"
expect_eq "a missing path exits 2" 2 "$?"
check "a missing path: a message naming it" grep -q "nowhere" "$T/bad.err"
mkdir -p "$T/empty"
"$RUNMON" top --once "$T/empty" >/dev/null 2>"$T/empty.err"
expect_eq "an empty folder exits 2" 2 "$?"
"$RUNMON" top --help | grep -q "^usage: runmon top"
expect_eq "--help exits 0" 0 "$?"

# (2) live, in tmux.
if ! command -v tmux >/dev/null 2>&1; then
    not_ok "tmux is installed (.ci/deps.sh test)"
    done_testing
    exit
fi
TM=(tmux -S "$T/tmux.sock")
_top_cleanup() { "${TM[@]}" kill-server 2>/dev/null; _t_cleanup; }
trap _top_cleanup EXIT
pane_gone() { ! "${TM[@]}" has-session -t "$1" 2>/dev/null; }

"$RUNMON" record -q -o "$T/live" -i 0.2 -- sh -c "'$RUNMON' phase train -- sleep 6" &
rec=$!
track "$rec"
check "live: the recording writes GPU rows and opens train" wait_for \
    "[ \"\$(rows '$T/live/latest/gpu.csv')\" -ge 2 ] && grep -q phase_enter '$T/live/latest/runlog.jsonl'" 10
"${TM[@]}" new-session -d -s live -x 100 -y 30 \
    "cd '$T' && TERM=screen exec '$RUNMON' top live 2>'$T/live.err'"
check "live: the pane shows both GPU rows" wait_for \
    "\"\${TM[@]}\" capture-pane -p -t live | grep -qE '^ +1 NVIDIA'" 10
check "live: the pane shows the open phase train" wait_for \
    "\"\${TM[@]}\" capture-pane -p -t live | grep -qE '^phase +train +open [0-9.]+s'" 10
"${TM[@]}" capture-pane -p -t live >"$T/pane.txt"
check "live: the status is running" grep -q "^runmon top .* running " "$T/pane.txt"
check "live: the key help" grep -q "q quit" "$T/pane.txt"
"${TM[@]}" send-keys -t live q
check "live: q quits (the pane's process is gone)" wait_for "pane_gone live" 5
check "live: nothing on stderr but the session's name" \
    test -z "$(grep -v '^runmon top: session ' "$T/live.err")"
wait "$rec"
expect_eq "live: the recording completed" 0 "$?"

# (3) NO_COLOR: the same view, no colour in the pane; without it, colour.
"${TM[@]}" new-session -d -s color -x 100 -y 30 \
    "cd '$T' && TERM=screen exec '$RUNMON' top done 2>/dev/null"
check "colour: the view is drawn" wait_for \
    "\"\${TM[@]}\" capture-pane -p -t color | grep -qE '^ +0 NVIDIA'" 10
sleep 0.5
"${TM[@]}" capture-pane -e -p -t color >"$T/color.txt"
check "colour: the pane has colour escapes" grep -qP '\e\[[0-9;]*(3[0-7])[;m]' "$T/color.txt"
"${TM[@]}" send-keys -t color q
wait_for "pane_gone color" 5
"${TM[@]}" new-session -d -s mono -x 80 -y 24 \
    "cd '$T' && NO_COLOR=1 TERM=screen exec '$RUNMON' top done 2>/dev/null"
check "NO_COLOR: the view is drawn (80x24)" wait_for \
    "\"\${TM[@]}\" capture-pane -p -t mono | grep -qE '^ +1 NVIDIA'" 10
check "NO_COLOR: the session ended, said so" wait_for \
    "\"\${TM[@]}\" capture-pane -p -t mono | grep -q '^session ended: completed'" 5
sleep 0.5
"${TM[@]}" capture-pane -e -p -t mono >"$T/mono.txt"
check "NO_COLOR: no colour escapes in the pane" bash -c "! grep -qP '\e\[[0-9;]*(3[0-7]|4[0-7]|9[0-7])[;m]' '$T/mono.txt'"
"${TM[@]}" send-keys -t mono ' '
check "space pauses" wait_for "\"\${TM[@]}\" capture-pane -p -t mono | grep -q 'paused'" 5
"${TM[@]}" send-keys -t mono q
check "NO_COLOR: q quits" wait_for "pane_gone mono" 5

# (5) rollover: the recorder seals gpu.csv every ~3 KB (about 1.2 s) while top runs; top
# must show samples written to the new gpu.csv after a rotation. memory.used counts up one
# MiB a sample (1000, 1001, ...), so a figure at least the new file's first is one of them.
pane0_mem() { "${TM[@]}" capture-pane -p -t "$1" | grep -E '^ +0 NVIDIA' | grep -oE ' [0-9]+/[0-9]+ ' | head -1 | cut -d/ -f1 | tr -d ' '; }
segs() { find "$T/roll/latest/" -maxdepth 1 -name 'gpu-*.csv' | wc -l; }
first_mem() { # memory.used of the first data row of the active gpu.csv, or nothing
    local f=$T/roll/latest/gpu.csv c
    c=$(head -1 "$f" 2>/dev/null | tr ',' '\n' | grep -nx memory.used | cut -d: -f1)
    [ -n "$c" ] && sed -n 2p "$f" | cut -d, -f"$c"
}
FAKE_SMI_OVERRIDE="memory.used=$(seq -s, 1000 1200)" \
    "$RUNMON" record -q -o "$T/roll" -i 0.2 --rollover-mb 0.003 --flush-seconds 0.5 -- sleep 10 &
rec=$!
track "$rec"
check "rollover: the recording writes GPU rows" wait_for "[ \"\$(rows '$T/roll/latest/gpu.csv')\" -ge 2 ]" 10
"${TM[@]}" new-session -d -s roll -x 100 -y 30 \
    "cd '$T' && TERM=screen exec '$RUNMON' top roll 2>/dev/null"
check "rollover: top shows GPU 0" wait_for "[ -n \"\$(pane0_mem roll)\" ]" 10
n1=$(segs)
check "rollover: gpu.csv is sealed again while top runs ($n1 segments before)" wait_for "[ \$(segs) -gt $n1 ]" 10
check "rollover: the new gpu.csv has a row" wait_for "[ -n \"\$(first_mem)\" ]" 5
f=$(first_mem)
check "rollover: top shows a sample of the new file (memory >= $f MiB; pane: $(pane0_mem roll))" \
    wait_for "[ \"\$(pane0_mem roll)\" -ge $f ]" 10
echo "# rollover: $(segs) sealed gpu segments; the pane's GPU 0 memory $(pane0_mem roll) MiB, the new file's first $f MiB"

# (6) resize: the frame uses the window's new width (GPU bars: 10 cells at 100 columns, 20
# from 120, 6 below 100).
bars() { "${TM[@]}" capture-pane -p -t roll | grep -E '^ +0 NVIDIA' | grep -oE '\[[#.]+\]' | head -1 | awk '{ print length($0) - 2 }'; }
maxw() { "${TM[@]}" capture-pane -p -t roll | awk '{ sub(/ +$/, ""); if (length($0) > m) m = length($0) } END { print m + 0 }'; }
expect_eq "resize: 10-cell bars at 100 columns" 10 "$(bars)"
"${TM[@]}" resize-window -t roll -x 150 -y 30
check "resize: redrawn with 20-cell bars at 150 columns" wait_for "[ \"\$(bars)\" = 20 ]" 5
check "resize: lines use the room (longest $(maxw) > 100)" wait_for "[ \$(maxw) -gt 100 ]" 5
"${TM[@]}" resize-window -t roll -x 80 -y 24
check "resize: redrawn with 6-cell bars at 80 columns" wait_for "[ \"\$(bars)\" = 6 ]" 5
check "resize: nothing wider than 80 columns" wait_for "[ \$(maxw) -le 80 ]" 5
"${TM[@]}" send-keys -t roll q
check "rollover: q quits" wait_for "pane_gone roll" 5
wait "$rec"
expect_eq "rollover: the recording completed" 0 "$?"

# (7) degraded collectors: nvidia-smi fails NVML for the gpu collector from the start (no
# rows: said so, no row of zeros), and for dmon only (gpu.csv's rows shown as recorded,
# dmon named degraded).
for which in gpu dmon; do
    st=$(mktemp -d "$T/st.XXXXXX")
    FAKE_SMI_STATE_DIR=$st FAKE_SMI_NVML_ERROR=1 FAKE_SMI_FAULT_ONLY=$which \
        "$RUNMON" record -q -o "$T/deg-$which" -i 0.2 --flush-seconds 0.5 -- sleep 12 &
    rec=$!
    track "$rec"
    check "degraded $which: the session starts" wait_for "[ -f '$T/deg-$which/latest/session.json' ]" 10
    "${TM[@]}" new-session -d -s "deg$which" -x 100 -y 30 \
        "cd '$T' && TERM=screen exec '$RUNMON' top deg-$which 2>/dev/null"
    check "degraded $which: the collectors line says $which degraded" wait_for \
        "\"\${TM[@]}\" capture-pane -p -t deg$which | grep -qE '^collectors .* $which degraded'" 15
    check "degraded $which: with nvidia-smi's reason" wait_for \
        "\"\${TM[@]}\" capture-pane -p -t deg$which | grep -qE '^  $which collector degraded: .*NVML'" 5
    # The state that names dmon degraded can reach the file before gpu.csv's first rows do
    # (written at once, while rows are gathered for up to 0.5 s): wait for those rows.
    [ "$which" = dmon ] && wait_for "\"\${TM[@]}\" capture-pane -p -t deg$which | grep -qE '^ +1 NVIDIA'" 5
    "${TM[@]}" capture-pane -p -t "deg$which" >"$T/deg-$which.txt"
    check "degraded $which: shown while the session runs" grep -q '^runmon top .* running ' "$T/deg-$which.txt"
    if [ "$which" = gpu ]; then
        check "degraded gpu: no GPU rows, a line saying the collector is not working" \
            grep -qE '^GPU +no rows: the gpu collector is not working' "$T/deg-$which.txt"
        expect_eq "degraded gpu: no GPU row of figures (no zeros)" 0 "$(grep -cE '^ +[0-9]+ .*%' "$T/deg-$which.txt")"
    else
        check "degraded dmon: the GPU rows from gpu.csv" grep -qE '^ +1 NVIDIA' "$T/deg-$which.txt"
        expect_eq "degraded dmon: no GPU row shows zero utilization and memory" 0 \
            "$(grep -E '^ +[0-9]+ NVIDIA' "$T/deg-$which.txt" | grep -cE ' 0% .* 0/')"
    fi
    sed 's/^/#   /' "$T/deg-$which.txt" | head -8
    "${TM[@]}" send-keys -t "deg$which" q
    wait_for "pane_gone deg$which" 5
    wait "$rec"
done

done_testing
