#!/usr/bin/env bash
# The io stream on real work (issue 23): a file of known size read with the page cache
# dropped shows as that many bytes read on the disk holding it and in the command's process
# tree (within 5 %), in io.csv and in the summary, per run and in the phase that read it; a
# loopback transfer of known size shows in lo, and only with --io-net-lo; --no-io records no
# io.csv; bad input: a fake /proc whose diskstats changes under the recorder.
. "$(dirname "$0")/lib.sh"

export PATH="$FAKEBIN:/usr/local/bin:/usr/bin:/bin"
SIZE=$((64 * 1024 * 1024))

# The whole disk holding a path: its st_dev -> /sys/dev/block/MAJ:MIN, the parent when that
# is a partition. Empty when the file is on no block device (tmpfs, overlay, NFS).
whole_disk() {
    local dev maj min d
    dev=$(stat -c '%d' "$1") || return
    maj=$(((dev >> 8) & 0xfff)) min=$(((dev & 0xff) | ((dev >> 12) & 0xfff00)))
    d=$(readlink -f "/sys/dev/block/$maj:$min" 2>/dev/null) || return
    [ -d "$d" ] || return
    [ -f "$d/partition" ] && d=$(dirname "$d")
    if [ -n "$(ls -A "$d/slaves" 2>/dev/null)" ]; then return; fi # dm, md: counted below
    basename "$d"
}

# ---- 1. a 64 MiB file read cold ---------------------------------------------------------
F=$T/big
head -c $SIZE /dev/urandom >"$F"
sync
disk=$(whole_disk "$F")
# Only the file's pages leave the cache (posix_fadvise DONTNEED through dd's nocache, once
# it is written back), so the disk reads the file and little else: dropping every cache
# (echo 3 >/proc/sys/vm/drop_caches) makes every process on the machine read its files again,
# which the disk's counters would show too. That is the fallback where the file's pages stay.
cached() { fincore --noheadings --bytes --output RES "$1" 2>/dev/null | tr -d ' '; }
evict() {
    sync
    dd if="$1" iflag=nocache count=0 status=none 2>/dev/null
    [ "$(cached "$1")" = 0 ] && return 0
    (echo 3 >/proc/sys/vm/drop_caches) 2>/dev/null && return 0
    return 1
}
# Bytes the disk read over $1 seconds.
disk_read_for() {
    local b
    b=$(awk -v d="$disk" '$3 == d {printf "%.0f\n", $6 * 512}' /proc/diskstats)
    sleep "$1"
    echo $(($(awk -v d="$disk" '$3 == d {printf "%.0f\n", $6 * 512}' /proc/diskstats) - b))
}
skip=""
if [ -z "$disk" ]; then
    skip="$T is on no whole block disk runmon counts (tmpfs, overlay, a stacked device)"
elif ! evict "$F"; then
    skip="cannot drop the file's pages from the page cache (no nocache, drop_caches not writable)"
fi
if [ -n "$skip" ]; then
    ok "# SKIP cold read: $skip"
else
    # The commands run below are read once now, so the cold read is the file's alone.
    "$RUNMON" phase --help >/dev/null; sleep 0; cat /dev/null
    progs=$(stat -L -c %s "$RUNMON" "$(command -v sh)" "$(command -v cat)" "$(command -v sleep)" |
        awk '{t += $1} END {printf "%.0f", t}')
    # Other work on this shared machine reads the same disk; at most 3 tries for a run whose
    # disk bytes are the file's within 5 %, plus what the disk read without us over about the
    # run's time (3 s) and the programs the run starts (read again when something on the
    # machine dropped the caches). The lower bound holds on every try.
    for try in 1 2 3; do
        before=$(disk_read_for 1.5)
        evict "$F"
        P=$T/cold$try
        # The read sits well inside its phase: an interval is shared out by time, so one that
        # straddles the phase's start would give part of it to the time before.
        "$RUNMON" record -q --no-gpu -o "$P" --io-interval 0.2 -- sh -c \
            "\"$RUNMON\" phase read -- sh -c 'sleep 0.5; cat \"$F\" >/dev/null; sleep 0.5'
             \"$RUNMON\" phase idle -- sleep 1"
        rc=$?
        S=$(session_dir "$P")
        # The disk's bytes over the run, straight from the counters.
        got=$(awk -F, -v d="$disk" '$2 == "disk" && $3 == d {if (first == "") first = $4; last = $4}
            END {printf "%.0f\n", last - first}' "$S/io.csv")
        after=$(disk_read_for 1.5)
        echo "# try $try: disk $disk read $got bytes during the run; without it: $before in 1.5 s before, $after in 1.5 s after"
        awk -v g="$got" -v s=$SIZE -v b="$before" -v a="$after" -v p="$progs" \
            'BEGIN {exit !(g <= 1.05 * s + b + a + p)}' && break
    done
    expect_eq "record: exit 0" 0 $rc
    check "io.csv written" test -s "$S/io.csv"
    expect_eq "io.csv header" \
        "ts,kind,name,read_bytes,write_bytes,busy_ms,rx_bytes,tx_bytes,some_us,full_us,procs,unreadable" \
        "$(head -n 1 "$S/io.csv")"
    check "io.csv: disk $disk read $got bytes >= 95 % of $SIZE" \
        awk -v g="$got" -v s=$SIZE 'BEGIN {exit !(g >= 0.95 * s)}'
    check "io.csv: disk $disk read $got bytes <= 105 % of $SIZE + other work ($before + $after) + programs ($progs)" \
        awk -v g="$got" -v s=$SIZE -v b="$before" -v a="$after" -v p="$progs" \
        'BEGIN {exit !(g <= 1.05 * s + b + a + p)}'
    tree=$(awk -F, '$2 == "tree" {last = $4} END {print last}' "$S/io.csv")
    check "io.csv: the tree read $tree bytes, within 5 % of $SIZE" \
        awk -v g="$tree" -v s=$SIZE 'BEGIN {d = g - s; if (d < 0) d = -d; exit !(d <= 0.05 * s)}'
    J=$("$RUNMON" summary --format json "$P")
    mb=$(echo "$J" | jq --arg d "$disk" '.io.disks[] | select(.name == $d) | .read_mb')
    check "summary: disk $disk read_mb $mb >= 95 % of $((SIZE / 1000000)) MB" \
        awk -v g="$mb" -v s=$SIZE 'BEGIN {exit !(g * 1e6 >= 0.95 * s)}'
    tmb=$(echo "$J" | jq '.io.tree_read_mb')
    check "summary: tree_read_mb $tmb within 5 % of $SIZE bytes" \
        awk -v g="$tmb" -v s=$SIZE 'BEGIN {d = g * 1e6 - s; if (d < 0) d = -d; exit !(d <= 0.05 * s)}'
    rmb=$(echo "$J" | jq '[.phases[] | select(.path == "read") | .io.tree_read_mb][0]')
    imb=$(echo "$J" | jq '[.phases[] | select(.path == "idle") | .io.tree_read_mb][0]')
    check "summary: the phase that read holds most of the tree's bytes ($rmb MB; idle $imb MB)" \
        awk -v r="$rmb" -v i="$imb" -v s=$SIZE 'BEGIN {exit !(r * 1e6 >= 0.8 * s && i < r / 10)}'
    rate=$(echo "$J" | jq '[.phases[] | select(.path == "read") | .io.disk_read_mb_s][0]')
    check "summary: phase read's disk_read_mb_s ($rate) is a positive rate" \
        awk -v r="$rate" 'BEGIN {exit !(r > 0)}'
    echo "$J" | jq -e '.io | [.disk_read_mb_s, .disk_write_mb_s, .net_rx_mb_s, .net_tx_mb_s,
        .tree_read_mb_s, .tree_write_mb_s] | all(. >= 0)' >/dev/null
    expect_eq "summary: no negative rate" 0 $?
    if [ -r /proc/pressure/io ]; then
        echo "$J" | jq -e '.io.io_some_pct >= 0 and .io.io_some_pct <= 100 and
            .io.memory_full_pct >= 0' >/dev/null
        expect_eq "summary: io pressure is a percentage" 0 $?
    else
        echo "$J" | jq -e '.io.io_some_pct == null' >/dev/null
        expect_eq "summary: no /proc/pressure: io_some_pct null" 0 $?
    fi
    txt=$("$RUNMON" summary --format text "$P")
    expect_match "summary text: an I/O line" "I/O  disk read [0-9.]+ write [0-9.]+ MB/s" "$txt"
    # README's recipe: per phase, disk read, network rx, io stall
    tsv=$(jq -r '.phases[] | [.path, .io.disk_read_mb_s, .io.net_rx_mb_s, .io.io_some_pct] | @tsv' "$S/summary.json")
    expect_match "README recipe: a row per phase with its I/O" "^read"$'\t'"[0-9.]+"$'\t'"[0-9.]+"$'\t'"[0-9.]*"$'\n'"idle"$'\t' "$tsv"
    "$RUNMON" report "$P" -o "$T/cold.html" >/dev/null
    expect_eq "report: the I/O charts" "2" "$(grep -Ec '<section class="panel" id="c-(io|psi)">' "$T/cold.html")"
    expect_match "report: disk read and the command's read drawn" 'data-series="io.disk_read".*data-series="io.tree_read"' "$(tr -d '\n' <"$T/cold.html")"
    expect_match "report: I/O columns in the phase table" "<th>disk read MB/s</th><th>disk write MB/s</th><th>net rx MB/s</th><th>net tx MB/s</th><th>io stall %</th>" "$(cat "$T/cold.html")"
    top=$("$RUNMON" top --once "$P")
    expect_match "top: an io line with rates" "io +disk r [0-9.]+ w [0-9.]+ +net rx [0-9.]+ tx [0-9.]+ MB/s  psi io [0-9.]+% mem [0-9.]+%  tree r [0-9.]+ w [0-9.]+ MB/s" "$top"
    expect_match "summary text: I/O by phase" "I/O by phase.*"$'\n'".*PATH.*DISK R" "$txt"
fi

# ---- 2. a loopback transfer -------------------------------------------------------------
NBYTES=$((32 * 1024 * 1024))
cat >"$T/lo.py" <<'PY'
import socket, sys, threading
n = int(sys.argv[1])
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(1)
got = []
def sink():
    c, _ = srv.accept()
    total = 0
    while True:
        b = c.recv(1 << 20)
        if not b:
            break
        total += len(b)
    got.append(total)
t = threading.Thread(target=sink)
t.start()
s = socket.create_connection(srv.getsockname())
buf = b"x" * (1 << 20)
left = n
while left > 0:
    left -= s.send(buf[: min(left, len(buf))])
s.close()
t.join()
assert got[0] == n, got
PY
for lo in with without; do
    P=$T/lo-$lo
    opt=()
    [ $lo = with ] && opt=(--io-net-lo)
    "$RUNMON" record -q --no-gpu -o "$P" --io-interval 0.2 "${opt[@]}" -- \
        sh -c "python3 \"$T/lo.py\" $NBYTES && sleep 0.5"
    expect_eq "record $lo --io-net-lo: exit 0" 0 $?
    S=$(session_dir "$P")
    rows=$(awk -F, '$2 == "net" && $3 == "lo"' "$S/io.csv" | wc -l)
    if [ $lo = without ]; then
        expect_eq "without --io-net-lo: no lo rows" 0 "$rows"
        continue
    fi
    rx=$(awk -F, '$2 == "net" && $3 == "lo" {if (first == "") first = $7; last = $7}
        END {print last - first}' "$S/io.csv")
    check "with --io-net-lo: lo received $rx bytes >= the $NBYTES sent" \
        awk -v g="$rx" -v s=$NBYTES 'BEGIN {exit !(g >= s)}'
    check "with --io-net-lo: lo received $rx bytes <= 110 % of $NBYTES" \
        awk -v g="$rx" -v s=$NBYTES 'BEGIN {exit !(g <= 1.1 * s)}'
    J=$("$RUNMON" summary --format json "$P")
    mb=$(echo "$J" | jq '.io.interfaces[] | select(.name == "lo") | .rx_mb')
    check "summary: lo rx_mb $mb >= $NBYTES bytes" \
        awk -v g="$mb" -v s=$NBYTES 'BEGIN {exit !(g * 1e6 >= s)}'
done

# A session without io.csv: no I/O chart, column or summary object.
cp -r "$FIXTURES/sessions/h100-torch-phases" "$T/old"
"$RUNMON" report "$T/old" -o "$T/old.html" >/dev/null 2>&1
expect_eq "report without io.csv: no I/O chart or column" 0 "$(grep -Ec 'id="c-io"|id="c-psi"|disk read MB/s' "$T/old.html")"
expect_eq "summary without io.csv: no io object" false "$("$RUNMON" summary --format json "$T/old" 2>/dev/null | jq 'has("io")')"

# ---- 3. the live Prometheus gauges ------------------------------------------------------
P=$T/prom
"$RUNMON" record -q --no-gpu -o "$P" --prom-textfile "$T/live.prom" --io-interval 0.2 -- sh -c \
    "dd if=/dev/zero of=\"$T/w\" bs=1M count=32 conv=fsync status=none
     for i in \$(seq 50); do grep -q '^runmon_io_process_write' \"$T/live.prom\" 2>/dev/null && break; sleep 0.1; done
     cp \"$T/live.prom\" \"$T/mid.prom\""
expect_eq "prom: record exit 0" 0 $?
for g in disk_read disk_write network_receive network_transmit process_read process_write; do
    expect_match "prom: runmon_io_${g}_bytes_per_second while recording" \
        "runmon_io_${g}_bytes_per_second\{host=\"[^\"]+\",session=\"[^\"]+\"\} [0-9.e+-]+" "$(cat "$T/mid.prom")"
done
if [ -r /proc/pressure/io ]; then
    expect_match "prom: runmon_io_pressure_ratio by resource and kind" \
        'runmon_io_pressure_ratio\{resource="io",kind="some",host=' "$(cat "$T/mid.prom")"
fi
expect_eq "prom: no io gauges once the session ended" 0 "$(grep -c '^runmon_io_' "$T/live.prom")"

# ---- 4. --no-io -------------------------------------------------------------------------
P=$T/noio
"$RUNMON" record -q --no-gpu --no-io -o "$P" -- true
S=$(session_dir "$P")
check "--no-io: no io.csv" test ! -e "$S/io.csv"
expect_eq "--no-io: the io collector is disabled" disabled "$(jq -r '.collectors.io.health' "$S/session.json")"
"$RUNMON" summary --format json "$P" | jq -e 'has("io") | not' >/dev/null
expect_eq "--no-io: summary has no io object" 0 $?
out=$("$RUNMON" record --io-interval 0.01 -- true 2>&1)
expect_eq "--io-interval 0.01: usage error" 2 $?
expect_match "--io-interval 0.01: says why" "io-interval" "$out"

# ---- 5. a process of the tree whose /proc/PID/io cannot be read (another user's) --------
# Recorded as nobody, the command runs passwd, set-user-ID root, which waits on its input:
# its io file is EACCES for the recorder. It counts in `unreadable`, the run log says so once,
# nothing fails.
RUNUSER=$(PATH=/usr/sbin:/sbin:$PATH command -v runuser)
if [ "$(id -u)" != 0 ] || [ -z "$RUNUSER" ] || ! command -v passwd >/dev/null ||
    [ ! -u "$(command -v passwd)" ]; then
    ok "# SKIP unreadable /proc/PID/io: needs root, runuser and a set-user-ID passwd"
else
    N=$(mktemp -d /tmp/runmon-io-nobody.XXXXXX)
    chmod 777 "$N"
    (cd "$N" && "$RUNUSER" -u nobody -- "$RUNMON_REL" record -q --no-gpu -o "$N/s" --io-interval 0.2 -- \
        sh -c 'sleep 1.2 | passwd >/dev/null 2>&1; true')
    expect_eq "unreadable: record as nobody exits 0" 0 $?
    S=$(session_dir "$N/s")
    u=$(awk -F, '$2 == "tree" && $12 > m {m = $12} END {print m + 0}' "$S/io.csv")
    check "unreadable: the tree rows count the set-user-ID process ($u)" test "$u" -ge 1
    expect_match "unreadable: the run log says so" '"io_unreadable_processes"' "$(cat "$S/runlog.jsonl")"
    check "unreadable: summary tree_unreadable_max >= 1" \
        test "$("$RUNMON_REL" summary --format json "$N/s" 2>/dev/null | jq '.io.tree_unreadable_max')" -ge 1
    rm -rf "$N"
fi

# ---- 6. a fake /proc: extra columns, a device that goes away, counters that go back -----
R=$T/proc
mkdir -p "$R/net" "$R/pressure"
cp "$FIXTURES/proc/root1/stat" "$FIXTURES/proc/root1/meminfo" "$R/"
printf '   8 0 sda 1 0 100 1 2 0 16 2 0 3 3 0 0 0 0 0 0 9 9 9\n   8 16 sdb 1 0 8 1 2 0 16 2 0 3 3\n' >"$R/diskstats"
printf 'Inter-|\n face |\n  eth0: 7 0 0 0 0 0 0 0 9 0 0 0 0 0 0 0\n' >"$R/net/dev"
P=$T/fake
RUNMON_PROC_ROOT=$R RUNMON_SYS_ROOT=$T/nosys "$RUNMON" record -q --no-gpu -o "$P" \
    --io-interval 0.1 -- sh -c "sleep 0.5
        printf '   8 0 sda 1 0 50 1 2 0 16 2 0 3 3\n   8 32 sdc garbage\n' >\"$R/diskstats\"
        sleep 0.5
        printf '   8 0 sda 1 0 150 1 2 0 16 2 0 3 3\n' >\"$R/diskstats\"; sleep 0.5"
expect_eq "fake /proc: record exit 0" 0 $?
S=$(session_dir "$P")
expect_match "fake /proc: sda rows" ",disk,sda,51200,8192,3," "$(cat "$S/io.csv")"
expect_match "fake /proc: sdb rows until it went" ",disk,sdb,4096,8192,3," "$(cat "$S/io.csv")"
expect_eq "fake /proc: no pressure rows (no /proc/pressure)" 0 "$(grep -c ',pressure,' "$S/io.csv")"
expect_match "fake /proc: the missing pressure files are noted" '"io_part_unavailable".*pressure/io' \
    "$(cat "$S/runlog.jsonl")"
check "fake /proc: the garbage line counted (once per sample it was read)" \
    test "$(jq '.collectors.io.nonconforming_lines' "$S/session.json")" -ge 1
J=$("$RUNMON" summary --format json "$P")
expect_eq "fake /proc: one reset (sda went back)" 1 "$(echo "$J" | jq '.io.resets')"
expect_eq "fake /proc: sda read 50 KiB after the reset" 0.051 \
    "$(echo "$J" | jq '.io.disks[] | select(.name == "sda") | .read_mb')"
expect_eq "fake /proc: pressure null" null "$(echo "$J" | jq '.io.io_some_pct')"
echo "$J" | jq -e '[.io.disk_read_mb_s, .io.disk_write_mb_s] | all(. >= 0)' >/dev/null
expect_eq "fake /proc: no negative rate" 0 $?

done_testing
