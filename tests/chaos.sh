#!/usr/bin/env bash
# Chaos for the sink's index (issue 27, items 1-4). Each round starts 8 recorders on one sink
# at once, with random commands (exit codes 0, 1, 3, 7), rollover and retention settings, some
# under a file-size limit (ulimit -f), and SIGKILLs some of them at a random moment: early (in
# their first 300 ms: the sink's reservation, the folder, session.json, the first index line)
# or later (300-1500 ms: flushes, seals, retention, the end). Between rounds it corrupts the
# sink: a torn last index line, a garbage index line, a cut or deleted sink.json, sealed
# entries naming live files or files outside the sink, a cut or deleted state.json of a
# finished session, a broken or deleted index. After each round, once `runmon sessions` has
# opened the sink, it checks:
#   - every session folder is listed exactly once, none "running";
#   - each status is the truth: a recorder that ended by itself is completed/failed with its
#     command's exit code (session.json agreeing); a killed one is interrupted, or
#     completed/failed with that exit code when its end was already written;
#   - sink.json's final_retained_files/bytes are the segment files on disk, and it lists no
#     session running;
#   - no live file of a finished session changed or went, no temp file of a dead writer is
#     left, and nothing outside the sink was touched (a canary folder beside it, checksummed).
# Prints TAP. CHAOS_ROUNDS (default 20), CHAOS_SEED (default: random, printed), CHAOS_KEEP
# (a path: the sink is copied there at the first failed round), RUNMON, BUILD. `make chaos` runs it; `make test` runs a short version (tests/e2e/test_chaos.sh).
. "$(dirname "$0")/e2e/lib.sh"

export FAKE_SMI_CAPTURES="$FIXTURES/captures"
export PATH="$FAKEBIN:/usr/local/bin:/usr/bin:/bin"
export FAKE_SMI_GPUS=2
rounds=${CHAOS_ROUNDS:-20}
seed=${CHAOS_SEED:-$(((RANDOM << 15) | RANDOM))}
RANDOM=$seed
echo "# chaos: seed $seed, $rounds rounds (CHAOS_SEED=$seed CHAOS_ROUNDS=$rounds to repeat)"

W=$T/w
K=$W/sink
C=$W/canary # beside the sink: names a hostile entry may point at
mkdir -p "$K" "$C/sub"
for f in gpu.csv gpu-000001.csv cpu.csv session.json state.json sink.json index.jsonl; do
    printf 'canary %s\n' "$f" >"$C/$f"
    printf 'canary sub %s\n' "$f" >"$C/sub/$f"
done
canary_sum() { (cd "$W" && find canary -print0 | sort -z | xargs -0 stat -c '%n %s %Y %a' && find canary -type f -print0 | sort -z | xargs -0 sha256sum); }
canary0=$(canary_sum)

n_rec=0 n_kill=0 n_early=0 n_late=0 n_limit=0 n_corrupt=0 n_fail=0

# The start time (clock ticks since boot) of a live pid: a kill goes to our recorder only.
start_of() { awk '{ sub(/^.*\) /, ""); print $20 }' "/proc/$1/stat" 2>/dev/null; }

# Checksums of the live files (<stem>.csv, never rewritten once their session ended) of the
# sessions the listing says finished.
live_sums() {
    local id
    for id in $("$RUNMON" sessions "$K" --format json 2>/dev/null |
        jq -r '.sessions[] | select(.status != "running") | .session_id'); do
        (cd "$K/$id" 2>/dev/null && sha256sum gpu.csv dmon.csv cpu.csv proc.csv apps.csv io.csv 2>/dev/null |
            sed "s|  |  $id/|")
    done | sort
}

corrupt() {
    local what=$((RANDOM % 10)) f id ids
    ids=($("$RUNMON" sessions "$K" --format json 2>/dev/null | jq -r '.sessions[] | select(.status != "running") | .session_id'))
    id=${ids[$((RANDOM % (${#ids[@]} > 0 ? ${#ids[@]} : 1)))]:-}
    case $what in
    0) # a torn last index line (a crash in the middle of its write)
        f=$K/index.jsonl
        local last size
        last=$(tail -1 "$f" | wc -c)
        size=$(stat -c %s "$f")
        [ "$last" -gt 10 ] && truncate -s $((size - last / 2)) "$f"
        echo "torn last index line" ;;
    1) # a line that is not runmon's, and one naming a session out of the sink
        printf 'garbage {{{\n{"event":"ended","session_id":"../canary","status":"completed"}\n' >>"$K/index.jsonl"
        echo "garbage index lines" ;;
    2) f=$K/sink.json; truncate -s $(($(stat -c %s "$f") / 2)) "$f"; echo "sink.json cut in half" ;;
    3) rm -f "$K/sink.json"; echo "sink.json deleted" ;;
    4) # retention's list naming live files and files outside the sink
        [ -n "$id" ] || { echo "no finished session for sealed entries"; return; }
        f=$K/sink.json
        jq --arg s "$id" '.sealed = [
            {session_id: $s, file: "gpu.csv", stream: "gpu", bytes: 1, last_row_at: "2000-01-01T00:00:00.000+00:00"},
            {session_id: $s, file: "cpu.csv", stream: "cpu", bytes: 1, last_row_at: "2000-01-01T00:00:00.000+00:00"},
            {session_id: "../canary", file: "gpu-000001.csv", stream: "gpu", bytes: 1, last_row_at: "2000-01-01T00:00:00.000+00:00"},
            {session_id: $s, file: "../../canary/gpu.csv", stream: "gpu", bytes: 1, last_row_at: "2000-01-01T00:00:00.000+00:00"}] + .sealed' \
            "$f" >"$f.new" 2>/dev/null && mv "$f.new" "$f"
        echo "sealed entries naming $id/gpu.csv, cpu.csv and the canary" ;;
    5) [ -n "$id" ] && truncate -s 100 "$K/$id/state.json"; echo "state.json of $id cut" ;;
    6) [ -n "$id" ] && rm -f "$K/$id/state.json"; echo "state.json of $id deleted" ;;
    7) [ -n "$id" ] && [ -f "$K/$id/state.json" ] && jq '.segments += [{file: "proc.csv", stream: "proc", session_id: .session.session_id, state: "sealed", pruned: false, bytes: 1, rows: 1, last_row_at: "2000-01-01T00:00:00.000+00:00", aggregate: null}]' "$K/$id/state.json" >"$K/$id/s.new" 2>/dev/null && mv "$K/$id/s.new" "$K/$id/state.json"
        echo "state.json of $id: a sealed entry naming proc.csv" ;;
    8) printf '{"format": "runmon-sink-ind' >"$K/index.jsonl.new" && tail -n +2 "$K/index.jsonl" >>"$K/index.jsonl.new" && mv "$K/index.jsonl.new" "$K/index.jsonl"
        echo "index header broken" ;;
    9) rm -f "$K/index.jsonl"; echo "index deleted" ;;
    esac
}

check_round() { # ROUND: the checks, each its own TAP line
    local r=$1 j bad listed folders i
    j=$("$RUNMON" sessions "$K" --format json 2>"$W/sessions.err")
    if [ $? -ne 0 ]; then
        not_ok "round $r: runmon sessions failed" "$(head -5 "$W/sessions.err")"
        n_fail=$((n_fail + 1))
        return
    fi
    listed=$(jq -r '.sessions[].session_id' <<<"$j" | sort)
    folders=$(sink_folders "$K")
    bad=""
    [ "$listed" = "$folders" ] || bad="listed: $(echo $listed | tr ' ' ','); folders: $(echo $folders | tr ' ' ',')"
    [ -z "$(jq -r '.sessions[] | select(.status == "running") | .session_id' <<<"$j")" ] ||
        bad="$bad; running: $(jq -r '.sessions[] | select(.status == "running") | .session_id' <<<"$j" | tr '\n' ' ')"
    expect_eq "round $r: every folder listed once, none running" "" "$bad"
    [ -n "$bad" ] && n_fail=$((n_fail + 1))
    # The truth of each recorder of this round.
    bad=""
    for i in "${!pids[@]}"; do
        local p=${pids[$i]} code=${codes[$i]} rc=${rcs[$i]} id st ex sj
        id=$(sink_folders "$K" | grep -E -- "-$p\$" | tail -1)
        [ -n "$id" ] || { [ "$rc" = 137 ] || bad="$bad; pid $p (rc $rc): no folder"; continue; }
        st=$(jq -r --arg i "$id" '.sessions[] | select(.session_id == $i) | "\(.status) \(.exit_code)"' <<<"$j")
        want="completed $code"
        [ "$code" != 0 ] && want="failed $code"
        if [ "$rc" = 137 ]; then
            [ "$st" = "$want" ] || [ "$st" = "interrupted null" ] || bad="$bad; killed $id: $st (command $code)"
        else
            [ "$rc" = "$code" ] || bad="$bad; $id: record exited $rc, the command $code"
            [ "$st" = "$want" ] || bad="$bad; $id: $st, not $want"
        fi
        if [ -f "$K/$id/session.json" ]; then
            sj=$(jq -r '"\(.status) \(.exit_code)"' "$K/$id/session.json")
            [ "$sj" = "$st" ] || bad="$bad; $id/session.json: $sj, listed $st"
        fi
    done
    expect_eq "round $r: each status true (exit codes, kills), session.json agreeing" "" "${bad#; }"
    [ -n "$bad" ] && n_fail=$((n_fail + 1))
    local disk json
    disk=$(sink_disk_totals "$K")
    json=$(sink_json_totals "$K")
    expect_eq "round $r: sink.json totals = bytes on disk" "$disk" "$json"
    [ "$disk" = "$json" ] || n_fail=$((n_fail + 1))
    expect_eq "round $r: sink.json lists nothing running" '{}' "$(jq -c .running "$K/sink.json")"
    local now_live gone
    now_live=$(live_sums)
    gone=$(comm -23 <(echo "$live_before") <(echo "$now_live"))
    expect_eq "round $r: no live file of a finished session changed or deleted" "" "$gone"
    [ -n "$gone" ] && n_fail=$((n_fail + 1))
    expect_eq "round $r: no temp file left" "" "$(find "$K" -name '*.tmp*' | sed "s|$K/||")"
    expect_eq "round $r: nothing outside the sink touched" "$canary0" "$(canary_sum)"
}

# CHAOS_KEEP: the sink is copied there at the first failed round.
keep_failed() { # ROUND
    if [ "$n_fail" -gt 0 ] && [ -n "${CHAOS_KEEP:-}" ] && [ ! -e "$CHAOS_KEEP" ]; then
        cp -a "$W" "$CHAOS_KEEP" && echo "# the sink as it failed (round $1): $CHAOS_KEEP"
    fi
}

exit_codes=(0 0 0 1 3 7)
live_before="" shared_kib=0
for r in $(seq "$rounds"); do
    pids=() codes=() rcs=() kill_at=() starts=()
    exec 3>&2 2>/dev/null # bash's "Killed" notices of the recorders it reaps
    t0=$(date +%s%N)
    for i in $(seq 0 7); do
        code=${exit_codes[$((RANDOM % ${#exit_codes[@]}))]}
        dur=$((RANDOM % 2)).$((RANDOM % 10))
        opts=(-q -o "$K" -i 0.1 --flush-seconds 0.2)
        [ $((RANDOM % 2)) = 0 ] && opts+=(--rollover-mb 0.003)
        [ $((RANDOM % 3)) = 0 ] && opts+=(--retention-files 2)
        [ $((RANDOM % 4)) = 0 ] && opts+=(--retention-total-mb 0.05)
        limit=unlimited
        if [ $((RANDOM % 6)) = 0 ]; then
            # Room for the sink's shared files as they were before the corruption (a
            # recorder that can never write sink.json leaves its session out of the totals
            # until a rebuild: docs/FORMATS.md), not always for its own state.json,
            # summary.json and CSV files.
            limit=$((shared_kib + 4 + RANDOM % 12))
            n_limit=$((n_limit + 1))
        fi
        (
            ulimit -f "$limit"
            exec "$RUNMON" "record" "${opts[@]}" -- sh -c "sleep $dur; exit $code"
        ) 2>"$W/rec.$i.err" &
        pids[$i]=$!
        track $!
        starts[$i]=$(start_of $!)
        codes[$i]=$code
        case $((RANDOM % 5)) in
        0) kill_at[$i]=$((RANDOM % 300)); n_early=$((n_early + 1)) ;;
        1) kill_at[$i]=$((300 + RANDOM % 1200)); n_late=$((n_late + 1)) ;;
        *) kill_at[$i]=-1 ;;
        esac
        n_rec=$((n_rec + 1))
    done
    # The kills, in time order, each only to a recorder still ours (same pid, same start).
    for i in $(for i in "${!kill_at[@]}"; do [ "${kill_at[$i]}" -ge 0 ] && echo "${kill_at[$i]} $i"; done | sort -n | awk '{ print $2 }'); do
        now=$((($(date +%s%N) - t0) / 1000000))
        [ "${kill_at[$i]}" -gt "$now" ] && sleep "$(awk -v ms=$((kill_at[$i] - now)) 'BEGIN { printf "%.3f", ms / 1000 }')"
        p=${pids[$i]}
        if [ -n "${starts[$i]}" ] && [ "$(start_of "$p")" = "${starts[$i]}" ] && kill -9 "$p" 2>/dev/null; then
            n_kill=$((n_kill + 1))
        fi
    done
    for i in "${!pids[@]}"; do
        wait "${pids[$i]}"
        rcs[$i]=$?
    done
    exec 2>&3 3>&-
    san=$(cat "$W"/rec.*.err | grep -E 'Sanitizer|runtime error:' | head -3)
    expect_eq "round $r: no sanitizer report from the recorders" "" "$san"
    [ -n "$san" ] && n_fail=$((n_fail + 1))
    check_round "$r"
    keep_failed "$r"
    live_before=$(live_sums)
    shared_kib=$(($(stat -c %s "$K/sink.json" "$K/index.jsonl" 2>/dev/null | sort -n | tail -1) / 1024))
    echo "# round $r: corruption: $(corrupt)"
    n_corrupt=$((n_corrupt + 1))
done
# Whatever the last corruption was, the sink mends it at its next open.
"$RUNMON" record -q -o "$K" -i 0.1 -- true 2>/dev/null
pids=() codes=() rcs=()
check_round "after the last corruption"
keep_failed "after the last corruption"
echo "# chaos: $rounds rounds, $n_rec recorders (8 at once), $n_kill SIGKILLs delivered ($n_early planned early, $n_late later), $n_limit under a file-size limit, $n_corrupt corruptions; $n_fail failed checks"
done_testing
