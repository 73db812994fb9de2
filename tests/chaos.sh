#!/usr/bin/env bash
# Chaos for the sink's index (issue 27, items 1-4; issue 35, items 2, 4, 5). Each round starts 8
# recorders on one sink at once, with random commands (exit codes 0, 1, 3, 7) and rollover, one
# retention setting for the whole round (none; N sealed segments per stream; or a byte limit
# a little above the sink's size at the round's start, so that correct retention deletes some
# segments and keeps others), some under a file-size limit (ulimit -f; one recorder samples
# fast under a tight one, so that rows are dropped), and SIGKILLs some of them at a random
# moment: early (in their first 300 ms: the sink's reservation, the folder, session.json, the
# first index line), later while their command runs (from 300 ms: flushes, seals, retention)
# or as their command ends (the end's documents and its index line). Between rounds
# it corrupts the sink: a torn last index line, a garbage index line, a cut or deleted
# sink.json, sealed entries naming live files or files outside the sink, a cut or deleted
# state.json of a finished session, a broken or deleted index, a sink.json whose figures
# claim far more bytes than the disk holds (retention must check them against the disk), a
# state.json claiming a huge segment. After each round, once `runmon sessions` has opened the
# sink, it checks:
#   - every session folder is listed exactly once, none "running"; each session's listed
#     files and bytes are its segment files on disk, byte for byte;
#   - each status is the truth: a recorder that ended by itself is completed/failed with its
#     command's exit code (session.json agreeing); a killed one is completed/failed with that
#     exit code when its end was already written (an "ended" index line or session.json, read
#     before anything recovered it), else interrupted;
#   - each session has at most one "ended"/"interrupted" index line;
#   - sink.json's final_retained_files/bytes are the segment files on disk, it lists no
#     session running, and its rows_dropped grew by the rows the round's sessions dropped;
#   - retention deleted exactly what the round's limits required: nothing without limits;
#     oldest first (per stream for a file limit, over the sink for a byte limit) among the
#     sealed segments that were there at the round's start; never below the file limit; and
#     no segment whose deletion the byte limit did not require (the round's last retention
#     pass, sink.json's last_prune: what it kept plus the last segment it chose exceed the
#     limit, and what it kept is no more than the sink's bytes now);
#   - no fsynced row was lost: no live file of a finished session changed or went, and a
#     killed recorder's live files, read before recovery, keep every whole line (recovery
#     cuts only a torn last line); no temp file of a dead writer is left, and nothing outside
#     the sink was touched (a canary folder beside it, checksummed).
# Prints TAP. CHAOS_ROUNDS (default 20), CHAOS_SEED (default: random, printed), CHAOS_KEEP
# (a path: the sink is copied there at the first failed round), RUNMON, BUILD. `make chaos`
# runs it; `make test` runs a short version (tests/e2e/test_chaos.sh); `make chaos-mutants`
# runs short ones against mutants of the sink (tests/chaos_mutants.sh).
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

n_rec=0 n_kill=0 n_early=0 n_late=0 n_end=0 n_limit=0 n_corrupt=0 n_fail=0

# The start time (clock ticks since boot) of a live pid: a kill goes to our recorder only.
start_of() { awk '{ sub(/^.*\) /, ""); print $20 }' "/proc/$1/stat" 2>/dev/null; }

# Checksums of the live files (<stem>.csv, never rewritten once their session ended) of the
# sessions the listing says finished.
live_sums() {
    local id
    for id in $("$RUNMON" sessions "$K" --format json 2>/dev/null |
        jq -r '.sessions[] | select(.status != "running") | .session_id'); do
        (cd "$K/$id" 2>/dev/null && sha256sum gpu.csv dmon.csv cpu.csv proc.csv apps.csv io.csv stall.csv 2>/dev/null |
            sed "s|  |  $id/|")
    done | sort
}

corrupt() {
    local what=$((RANDOM % 12)) f id ids
    ids=($("$RUNMON" sessions "$K" --format json 2>/dev/null | jq -r '.sessions[] | select(.status != "running") | .session_id'))
    id=${ids[$((RANDOM % (${#ids[@]} > 0 ? ${#ids[@]} : 1)))]:-}
    printf '%d: ' "$what"
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
    10) # figures retention would plan on: a tampered total of the finished sessions' bytes.
        # Only with a sealed segment on disk: retention checks the figures when they would
        # delete something, and with nothing to delete the number is not mended (nor harmful).
        f=$K/sink.json
        if [ -z "$(sealed_keys)" ]; then echo "no sealed segment for a tampered total"; return; fi
        jq '.finished.active_bytes = 1000000000000' "$f" >"$f.new" 2>/dev/null && mv "$f.new" "$f"
        echo "sink.json: finished.active_bytes 1e12" ;;
    11) # a segment's size in state.json that is no number of bytes, read back by a rebuild
        [ -n "$id" ] && [ -f "$K/$id/state.json" ] &&
            jq 'if (.segments | length) > 0 then .segments[0].bytes = 1e30 else . end' \
                "$K/$id/state.json" >"$K/$id/s.new" 2>/dev/null && mv "$K/$id/s.new" "$K/$id/state.json"
        rm -f "$K/index.jsonl"
        echo "state.json of $id: a segment of 1e30 bytes; index deleted" ;;
    esac
}

# A failed check: its TAP line, and counted.
fail_if() { # NAME EXPECTED ACTUAL
    expect_eq "$1" "$2" "$3"
    [ "$2" = "$3" ] || n_fail=$((n_fail + 1))
}

SEG_RE='(gpu|dmon|cpu|proc|apps|io|stall)'
# The sealed segment files on disk: "ID/FILE SIZE", sorted.
sealed_on_disk() {
    find "$K" -mindepth 2 -maxdepth 2 -type f -regextype posix-extended \
        -regex ".*/[A-Za-z0-9_-][A-Za-z0-9._-]*/$SEG_RE-[0-9]+\\.csv" -printf '%P %s\n' | sort
}
# Each session folder's segment files on disk: "ID FILES BYTES", sorted.
disk_per_session() {
    {
        sink_folders "$K" | awk '{ print $1, "-" }'
        find "$K" -mindepth 2 -maxdepth 2 -type f -regextype posix-extended \
            -regex ".*/[A-Za-z0-9_-][A-Za-z0-9._-]*/$SEG_RE(-[0-9]+)?\\.csv" -printf '%P %s\n' |
            sed 's|/[^ ]* | |'
    } | awk '{ if (!($1 in n)) { n[$1] = 0; b[$1] = 0 } if ($2 != "-") { n[$1]++; b[$1] += $2 } }
             END { for (i in n) print i, n[i], b[i] }' | sort
}
# "LAST_ROW_AT ID FILE STREAM BYTES" of sink.json's sealed entries whose file is on disk, in
# retention's order (oldest first; ties by session and file, as sink/manifest.c sorts; a
# segment without rows, no last_row_at, first: "!").
sealed_keys() {
    jq -r '.sealed[]? | "\(.last_row_at // "!" | if . == "" then "!" else . end) \(.session_id) \(.file) \(.stream) \(.bytes)"' "$K/sink.json" 2>/dev/null |
        while read -r t id f st b; do [ -f "$K/$id/$f" ] && echo "$t $id $f $st $b"; done | sort
}
# The session folder of recorder pid P of this round.
folder_of() { sink_folders "$K" | grep -E -- "-$1\$" | tail -1; }
# How a killed recorder's session ended as far as its files say before any recovery, in the
# order recovery weighs them (sink/recover.c, decide_end): its newest index line when it says
# the session ended, else state.json's status, else session.json's; "" when none does.
end_evidence() { # ID
    local id=$1 s
    s=$(jq -R -r --arg i "$id" 'fromjson? | select(.session_id? == $i) | "\(.status) \(.exit_code)"' \
        "$K/index.jsonl" 2>/dev/null | tail -1)
    case $s in completed* | failed* | interrupted*) echo "$s"; return ;; esac
    s=$(jq -r '.session | "\(.status) \(.exit_code)"' "$K/$id/state.json" 2>/dev/null)
    case $s in completed* | failed* | interrupted*) echo "$s"; return ;; esac
    s=$(jq -r 'select(.ended_at | type == "string") | "\(.status) \(.exit_code)"' "$K/$id/session.json" 2>/dev/null)
    case $s in completed* | failed* | interrupted*) echo "$s" ;; esac
}
# "FILE SIZE SHA256" of the whole lines of each live file of a session folder: what recovery
# must leave of a killed recorder's files (it cuts only a torn last line).
whole_lines() { # ID
    local f
    for f in gpu dmon cpu proc apps io stall; do
        [ -f "$K/$1/$f.csv" ] || continue
        perl -0777 -ne 'print substr($_, 0, rindex($_, "\n") + 1)' "$K/$1/$f.csv" >"$W/wl"
        echo "$f.csv $(stat -c %s "$W/wl") $(sha256sum <"$W/wl" | cut -d' ' -f1)"
    done
}
whole_now() { # ID: the same figures of the files as they are
    local f
    for f in gpu dmon cpu proc apps io stall; do
        [ -f "$K/$1/$f.csv" ] || continue
        echo "$f.csv $(stat -c %s "$K/$1/$f.csv") $(sha256sum <"$K/$1/$f.csv" | cut -d' ' -f1)"
    done
}
# The rows the sessions of this round dropped, as their state.json say (after recovery).
round_dropped() {
    local id sum=0 n
    for id in $round_ids; do
        n=$(jq '[.session.sink.rows_dropped // {} | .[]] | add // 0' "$K/$id/state.json" 2>/dev/null) || { echo "?"; return; }
        sum=$((sum + n))
    done
    echo "$sum"
}

# The retention of this round (ret_mode none/files/bytes, ret_files, ret_bytes) against what
# was on disk at its start (sealed_before, in retention's order) and is now.
check_retention() { # ROUND
    local r=$1 bad="" gone pruned newest now_sealed st
    gone=$(while read -r t id f st b; do
        [ -n "$t" ] && [ ! -e "$K/$id/$f" ] && echo "$t $id $f $st $b"
    done <<<"$sealed_before")
    pruned=$({
        [ -n "$gone" ] && echo "$gone"
        for id in $round_ids; do
            jq -r '.segments[] | select(.state == "sealed" and .pruned == true) |
                "\(.last_row_at // "!" | if . == "" then "!" else . end) \(.session_id) \(.file) \(.stream) \(.bytes)"' "$K/$id/state.json" 2>/dev/null
        done
    } | sort -u)
    n_pruned=$((n_pruned + $(grep -c . <<<"$pruned")))
    if [ "$ret_mode" = none ]; then
        fail_if "round $r: no limit, nothing deleted" "" "$pruned"
        return
    fi
    # Oldest first: a segment there at the round's start is deleted only after every older one.
    bad=$(while read -r t id f st b; do
        [ -n "$t" ] || continue
        g=0
        [ -e "$K/$id/$f" ] || g=1
        echo "$t $id $f $st $b $g"
    done <<<"$sealed_before" | awk -v mode="$ret_mode" '{
        key = mode == "files" ? $4 : "all"
        if (!$6) { if (!(key in kept)) kept[key] = $2 "/" $3 }
        else if (key in kept) print "deleted " $2 "/" $3 " but kept the older " kept[key] }')
    fail_if "round $r: retention ($ret_mode) deleted the oldest first" "" "$bad"
    bad=""
    if [ "$ret_mode" = files ]; then
        now_sealed=$(sealed_on_disk)
        for st in $(awk '{ print $4 }' <<<"$pruned" | sort -u); do
            n=$(grep -cE "/$st-[0-9]+\\.csv " <<<"$now_sealed")
            [ "$n" -ge "$ret_files" ] || bad="$bad $st: $n sealed kept, limit $ret_files;"
        done
        fail_if "round $r: never below $ret_files sealed segments per stream" "" "$bad"
    else
        # The segment deleted last is not the newest deleted: a segment sealed later (a
        # file-size limit seals early) may hold older rows, and one a recorder could not list
        # in its state.json is seen nowhere else. So the round's last retention pass, as
        # sink.json records it: what it kept (its own figure) plus the last segment it chose
        # must exceed the limit, and what it kept is on disk still (only growth since, and
        # the torn lines recovery cut).
        local rec disk kept nb seg
        rec=$(jq -c '.last_prune // empty' "$K/sink.json" 2>/dev/null)
        [ "$rec" = "$prune_before" ] && rec="" # none this round
        if [ -n "$rec" ]; then
            disk=$(sink_disk_totals "$K" | awk '{ print $2 }')
            read -r kept nb seg <<<"$(jq -r '"\(.retained_bytes) \(.bytes) \(.session_id)/\(.file)"' <<<"$rec")"
            if [ $((kept + nb)) -le "$ret_bytes" ]; then
                bad="deleted $seg ($nb B) while retention kept $kept B, limit $ret_bytes B"
            elif [ "$kept" -gt $((disk + trimmed)) ]; then
                bad="retention counted $kept B kept after deleting $seg, the sink holds $disk B (+$trimmed B recovery cut)"
            fi
        elif [ -n "$pruned" ]; then
            bad="deleted $(awk '{ print $2 "/" $3 }' <<<"$pruned" | tr '\n' ' ')but sink.json records no retention pass this round"
        fi
        fail_if "round $r: nothing deleted that the byte limit did not require" "" "$bad"
    fi
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
    fail_if "round $r: every folder listed once, none running" "" "$bad"
    fail_if "round $r: each session's listed files and bytes are its files on disk" "" \
        "$(diff <(disk_per_session) <(jq -r '.sessions[] | "\(.session_id) \(.files) \(.bytes)"' <<<"$j" | sort) |
            sed -n 's/^< /disk: /p; s/^> /listed: /p' | tr '\n' ';')"
    # The truth of each recorder of this round.
    bad=""
    for i in "${!pids[@]}"; do
        local p=${pids[$i]} code=${codes[$i]} rc=${rcs[$i]} id st ex sj
        id=$(folder_of "$p")
        [ -n "$id" ] || { [ "$rc" = 137 ] || bad="$bad; pid $p (rc $rc): no folder"; continue; }
        st=$(jq -r --arg i "$id" '.sessions[] | select(.session_id == $i) | "\(.status) \(.exit_code)"' <<<"$j")
        want="completed $code"
        [ "$code" != 0 ] && want="failed $code"
        if [ "$rc" = 137 ]; then
            ex=${evidence[$i]:-interrupted null}
            case $ex in completed* | failed*) [ "$ex" = "$want" ] || bad="$bad; killed $id: its end says $ex (command $code)" ;; esac
            [ "$st" = "$ex" ] || bad="$bad; killed $id: $st, its files said $ex before recovery (command $code)"
        else
            [ "$rc" = "$code" ] || bad="$bad; $id: record exited $rc, the command $code"
            [ "$st" = "$want" ] || bad="$bad; $id: $st, not $want"
        fi
        if [ -f "$K/$id/session.json" ]; then
            sj=$(jq -r '"\(.status) \(.exit_code)"' "$K/$id/session.json")
            [ "$sj" = "$st" ] || bad="$bad; $id/session.json: $sj, listed $st"
        fi
    done
    fail_if "round $r: each status true (exit codes, kills, an end already written), session.json agreeing" "" "${bad#; }"
    fail_if "round $r: at most one ended/interrupted index line per session" "" \
        "$(jq -R -r 'fromjson? | select(.event? == "ended" or .event? == "interrupted") | .session_id' "$K/index.jsonl" 2>/dev/null |
            sort | uniq -d | grep -Fx -f <(echo "$folders") | tr '\n' ' ')"
    # No fsynced row lost: a killed recorder's whole lines are all there after recovery.
    bad=""
    for i in "${!pids[@]}"; do
        [ -n "${before_recovery[$i]:-}" ] || continue
        id=$(folder_of "${pids[$i]}")
        [ "$(whole_now "$id")" = "${before_recovery[$i]}" ] ||
            bad="$bad; $id: $(diff <(echo "${before_recovery[$i]}") <(whole_now "$id") |
                awk '/^</ { printf "before recovery %s %s B, ", $2, $3 } /^>/ { printf "after %s %s B; ", $2, $3 }')"
        trimmed=$((trimmed + $(awk '{ s += $2 } END { print s + 0 }' <<<"${sizes_killed[$i]}") -
            $(whole_now "$id" | awk '{ s += $2 } END { print s + 0 }')))
    done
    fail_if "round $r: recovery kept every whole line of the killed recorders' files" "" "${bad#; }"
    local disk json
    disk=$(sink_disk_totals "$K")
    json=$(sink_json_totals "$K")
    fail_if "round $r: sink.json totals = bytes on disk" "$disk" "$json"
    fail_if "round $r: sink.json lists nothing running" '{}' "$(jq -c .running "$K/sink.json")"
    if [ -n "${dropped0:-}" ] && [ ${#pids[@]} -gt 0 ]; then
        local d1 want_d
        d1=$(jq '.counters.rows_dropped' "$K/sink.json")
        want_d=$(round_dropped)
        [ "$want_d" = "?" ] || fail_if "round $r: sink.json's rows_dropped grew by the rows this round's sessions dropped" \
            "$want_d" "$((d1 - dropped0))"
        n_dropped=$((n_dropped + ${want_d/\?/0}))
    fi
    [ ${#pids[@]} -gt 0 ] && check_retention "$r"
    local now_live gone
    now_live=$(live_sums)
    gone=$(comm -23 <(echo "$live_before") <(echo "$now_live"))
    fail_if "round $r: no live file of a finished session changed or deleted" "" "$gone"
    fail_if "round $r: no temp file left" "" "$(find "$K" -name '*.tmp*' | sed "s|$K/||")"
    fail_if "round $r: nothing outside the sink touched" "$canary0" "$(canary_sum)"
}

# CHAOS_KEEP: the sink is copied there at the first failed round.
keep_failed() { # ROUND
    if [ "$n_fail" -gt 0 ] && [ -n "${CHAOS_KEEP:-}" ] && [ ! -e "$CHAOS_KEEP" ]; then
        cp -a "$W" "$CHAOS_KEEP" && echo "# the sink as it failed (round $1): $CHAOS_KEEP"
    fi
}

exit_codes=(0 0 0 1 3 7)
live_before="" shared_kib=0 n_pruned=0 n_dropped=0 sealed_before="" last_corruption=""
for r in $(seq "$rounds"); do
    pids=() codes=() rcs=() kill_at=() starts=() evidence=() before_recovery=() sizes_killed=()
    trimmed=0
    # One retention setting for the whole round, so that what it must delete is known: none;
    # N sealed segments per stream; or a byte limit a little above what the sink holds now.
    ret_files=0 ret_bytes=0
    m=$((RANDOM % 3))
    [ "$last_corruption" = 10 ] && m=2 # the tampered total: retention must check it first
    case $m in
    0) ret_mode=none ;;
    1) ret_mode=files ret_files=$((1 + RANDOM % 3)) ;;
    2) ret_mode=bytes ret_bytes=$(($(sink_disk_totals "$K" | awk '{ print $2 }') + 20000 + RANDOM % 60000)) ;;
    esac
    ret_opts=(--retention-files "$ret_files" --retention-total-mb "$(awk -v b="$ret_bytes" 'BEGIN { printf "%.6f", b / 1048576 }')")
    # what the limit is in bytes once the recorder has parsed it (llround of MB * 2^20)
    ret_bytes=$(awk -v b="$ret_bytes" 'BEGIN { m = sprintf("%.6f", b / 1048576); printf "%.0f", m * 1048576 }')
    prune_before=$(jq -c '.last_prune // empty' "$K/sink.json" 2>/dev/null)
    dropped0=""
    case $last_corruption in 2 | 3 | 8 | 9 | 11) ;; # a rebuild counts every session again
    *) dropped0=$(jq '.counters.rows_dropped // empty' "$K/sink.json" 2>/dev/null) ;;
    esac
    [ "$r" = 1 ] && dropped0=0 # a new sink
    exec 3>&2 2>/dev/null # bash's "Killed" notices of the recorders it reaps
    t0=$(date +%s%N)
    for i in $(seq 0 7); do
        code=${exit_codes[$((RANDOM % ${#exit_codes[@]}))]}
        dur=$((RANDOM % 2)).$((RANDOM % 10))
        opts=(-q -o "$K" -i 0.1 --flush-seconds 0.2 "${ret_opts[@]}")
        [ $((RANDOM % 2)) = 0 ] && opts+=(--rollover-mb 0.003)
        limit=unlimited
        gpus=2
        if [ "$i" = 7 ] && [ "$shared_kib" -le 16 ]; then
            # 8 GPUs' rows into one gpu.csv under a file-size limit it outgrows (the sink's
            # shared files still fit): rows are dropped, and must be counted. (Once the
            # index is larger than that file can grow in the time, a recorder like the others.)
            opts=(-q -o "$K" -i 0.1 --flush-seconds 0.2 "${ret_opts[@]}")
            dur=1.9 limit=$((shared_kib + 8)) gpus=8
            n_limit=$((n_limit + 1))
        elif [ $((RANDOM % 6)) = 0 ]; then
            # Room for the sink's shared files as they were before the corruption (a
            # recorder that can never write sink.json leaves its session out of the totals
            # until a rebuild: docs/FORMATS.md), not always for its own state.json,
            # summary.json and CSV files.
            limit=$((shared_kib + 4 + RANDOM % 12))
            n_limit=$((n_limit + 1))
        fi
        (
            ulimit -f "$limit"
            FAKE_SMI_GPUS=$gpus exec "$RUNMON" "record" "${opts[@]}" -- sh -c "sleep $dur; exit $code"
        ) 2>"$W/rec.$i.err" &
        pids[$i]=$!
        track $!
        starts[$i]=$(start_of $!)
        codes[$i]=$code
        case $((RANDOM % 6)) in
        0) kill_at[$i]=$((RANDOM % 300)); n_early=$((n_early + 1)) ;;
        1) # while its command runs: flushes, seals, retention (recovery cuts its torn lines)
            ms=$((${dur%.*} * 1000 + ${dur#*.} * 100))
            kill_at[$i]=$((300 + RANDOM % (ms > 400 ? ms - 300 : 100))); n_late=$((n_late + 1)) ;;
        2) # as its command ends: the end's session.json, state.json, summary and ended line
            kill_at[$i]=$((${dur%.*} * 1000 + ${dur#*.} * 100 + 20 + RANDOM % 400)); n_end=$((n_end + 1)) ;;
        *) kill_at[$i]=-1 ;;
        esac
        [ "$gpus" = 8 ] && kill_at[$i]=-1
        n_rec=$((n_rec + 1))
    done
    # The kills, in time order, each only to a recorder still ours (same pid, same start).
    for i in $(for i in "${!kill_at[@]}"; do [ "${kill_at[$i]}" -ge 0 ] && echo "${kill_at[$i]} $i"; done | sort -n | awk '{ print $2 }'); do
        now=$((($(date +%s%N) - t0) / 1000000))
        [ "${kill_at[$i]}" -gt "$now" ] && sleep "$(awk -v ms=$((kill_at[$i] - now)) 'BEGIN { printf "%.3f", ms / 1000 }')"
        p=${pids[$i]}
        if [ -n "${starts[$i]}" ] && [ "$(start_of "$p")" = "${starts[$i]}" ] && kill -9 "$p" 2>/dev/null; then
            n_kill=$((n_kill + 1))
            wait "$p"
            rcs[$i]=$?
            # Its files at once, before another recorder's open (or end) recovers it: how
            # its end was written, and its live files' whole lines.
            id=$(folder_of "$p")
            if [ "${rcs[$i]}" = 137 ] && [ -n "$id" ]; then
                evidence[$i]=$(end_evidence "$id")
                before_recovery[$i]=$(whole_lines "$id")
                sizes_killed[$i]=$(whole_now "$id")
            fi
        fi
    done
    for i in "${!pids[@]}"; do
        [ -n "${rcs[$i]:-}" ] && continue
        wait "${pids[$i]}"
        rcs[$i]=$?
    done
    exec 2>&3 3>&-
    round_ids=""
    for i in "${!pids[@]}"; do
        id=$(folder_of "${pids[$i]}")
        [ -n "$id" ] && round_ids="$round_ids $id"
    done
    san=$(cat "$W"/rec.*.err | grep -E 'Sanitizer|runtime error:' | head -3)
    fail_if "round $r: no sanitizer report from the recorders" "" "$san"
    check_round "$r"
    keep_failed "$r"
    live_before=$(live_sums)
    sealed_before=$(sealed_keys)
    shared_kib=$(($(stat -c %s "$K/sink.json" "$K/index.jsonl" 2>/dev/null | sort -n | tail -1) / 1024))
    c=$(corrupt)
    last_corruption=${c%%:*}
    echo "# round $r: retention $ret_mode (files $ret_files, bytes $ret_bytes); corruption: ${c#*: }"
    n_corrupt=$((n_corrupt + 1))
done
# Whatever the last corruption was, the sink mends it at its next open.
# (A byte limit the sink keeps: what it would delete on a tampered total is checked first.)
"$RUNMON" record -q -o "$K" -i 0.1 --retention-files 0 --retention-total-mb \
    "$(sink_disk_totals "$K" | awk '{ printf "%.6f", $2 / 1048576 + 1 }')" -- true 2>/dev/null
pids=() codes=() rcs=() evidence=() before_recovery=()
check_round "after the last corruption"
keep_failed "after the last corruption"
echo "# chaos: $rounds rounds, $n_rec recorders (8 at once), $n_kill SIGKILLs delivered ($n_early planned early, $n_late later, $n_end at the command's end), $n_limit under a file-size limit, $n_corrupt corruptions, $n_pruned segments deleted by retention, $n_dropped rows dropped; $n_fail failed checks"
done_testing
