#!/usr/bin/env bash
# What a --flush-seconds round of the sink thread does (issue 24 section 2), counted under
# strace on a real recording: the active files are synced through descriptors kept open (never
# opened by name again), and only when they grew since their last fdatasync; state.json and
# sink.json are swapped in (RENAME_EXCHANGE, so ext4 neither writes the new file out at once
# nor frees the old one's blocks inside the rename) and, while no one else wrote them, not read
# again; nor is index.jsonl while it is unchanged. What the round writes stays the same.
. "$(dirname "$0")/lib.sh"

if ! strace -f -qq -e trace=fdatasync -o "$T/probe.txt" true 2>/dev/null; then
    ok "# SKIP strace cannot trace here: the rounds are not counted"
    done_testing
    exit 0
fi

# At -i 1 the files grow once a second; the rounds come every 0.25 s: about 16 rounds, of
# which about 4 have new rows to sync in each file.
K=$T/k
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
    strace -f -qq -y -e trace=openat,fdatasync,rename,renameat2,newfstatat,lstat,stat \
    -o "$T/strace.txt" "$RUNMON" record -q --no-gpu -o "$K" -i 1 --flush-seconds 0.25 -- sleep 4
expect_eq "recorded" 0 $?
s=$(readlink "$K/latest")
S=$K/$s
st=$T/strace.txt
count() { grep -cE "$1" "$st"; }

rounds=$(count "RENAME_EXCHANGE\) = 0")
check "the rounds swap state.json and sink.json in ($rounds swaps)" test "$rounds" -ge 20
renamed=$(count "rename(at2?)?\(.*\"$S/state.json\"" )
renamed=$((renamed - $(count "\"$S/state.json\", RENAME_EXCHANGE")))
check "state.json renamed over only in its durable rounds ($renamed)" test "$renamed" -le 3

for f in cpu proc io; do
    # (the summary at the end reads each file once or twice)
    n=$(count "openat\(.*\"$S/$f\.csv\", O_RDONLY")
    check "$f.csv: not opened by name each round ($n opens to read)" test "$n" -le 3
    n=$(count "fdatasync\([0-9]+<$S/$f\.csv>\)")
    rows_f=$(rows "$S/$f.csv")
    check "$f.csv: synced when it grew ($n fdatasyncs, $rows_f rows, ~16 rounds)" \
        test "$n" -ge 2 -a "$n" -le $((rows_f + 3))
done

n=$(count "openat\(.*\"$K/index.jsonl\", O_RDONLY")
check "index.jsonl read only when it changed ($n times)" test "$n" -le 4
n=$(count "(newfstatat|lstat)\(.*\"$S\", .*AT_SYMLINK_NOFOLLOW|lstat\(\"$S\"")
check "the session folder looked at a few times, not 7 a round ($n)" test "$n" -le 12

expect_eq "no temp file left" "" "$(cd "$K" && ls -A | grep -i tmp)"
expect_eq "sink.json's totals = the files on disk" "$(sink_disk_totals "$K")" "$(sink_json_totals "$K")"
expect_eq "state.json's cpu.csv bytes = the file's" "$(stat -c %s "$S/cpu.csv")" \
    "$(jq '.segments[] | select(.file == "cpu.csv") | .bytes' "$S/state.json")"
expect_eq "completed" completed "$(jq -r .session.status "$S/state.json")"

done_testing
