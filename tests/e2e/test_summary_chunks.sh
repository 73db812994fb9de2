#!/usr/bin/env bash
# One large GPU file parsed in parallel chunks gives exactly the figures of a scan in one
# piece: sample groups (one time, one row per GPU) and phase windows that straddle chunk
# boundaries, gaps and energy across them, every layout that is read in chunks, and a file
# whose columns change mid-file (read again whole). Tiny chunks (RUNMON_SUMMARY_CHUNK_BYTES)
# put a boundary inside every few sample groups.
. "$(dirname "$0")/lib.sh"
export TZ=UTC

# 4 GPUs, 1 s apart, 300 samples; a 10 s hole every 97 samples (gaps), one GPU missing from
# some samples, "[N/A]" power now and then; values from a fixed seed.
python3 - "$T" <<'PY'
import random, sys, time
d = sys.argv[1]
random.seed(13)
t0 = 1795255200.0
def iso(t): return time.strftime('%Y-%m-%dT%H:%M:%S', time.gmtime(t)) + '.%03d+00:00' % round((t % 1) * 1000)
def smi(t): return time.strftime('%Y/%m/%d %H:%M:%S', time.gmtime(t)) + '.%03d' % round((t % 1) * 1000)
rows, t = [], t0
for s in range(300):
    t += 1.0 + (10.0 if s % 97 == 50 else 0.0) + random.choice([0, 0.001, 0.002])
    for g in range(4):
        if g == 3 and s % 41 == 7: continue
        p = '[N/A]' if s % 53 == 9 and g == 1 else '%.2f' % (90 + random.random() * 400)
        rows.append((t, g, random.randint(0, 100), random.randint(1000, 80000), p))
with open(d + '/gpu.csv', 'w') as f:
    f.write('ts,timestamp,index,uuid,name,pci.bus_id,utilization.gpu,memory.used,power.draw\n')
    for t, g, u, m, p in rows:
        f.write('%s,%s,%d,GPU-%08d-aaaa,NVIDIA H100 80GB HBM3,00000000:%02X:00.0,%d,%d,%s\n'
                % (iso(t), smi(t - 0.004), g, g, 0x18 + g, u, m, p))
with open(d + '/smi.csv', 'w') as f:  # nvidia-smi's own: ", ", no header, units
    for t, g, u, m, p in rows:
        f.write('%s, %d, NVIDIA H100 80GB HBM3, %d %%, %d MiB, %s\n'
                % (smi(t), g, u, m, p if p[0] == '[' else p + ' W'))
with open(d + '/dmon.csv', 'w') as f:
    f.write('ts,gpu,pwr,gtemp,sm,mem,fb\n')
    for t, g, u, m, p in rows:
        f.write('%s,%d,%s,%d,%d,%d,%d\n' % (iso(t), g, '-' if p[0] == '[' else p.split('.')[0], 40 + u % 30, u, u // 2, m))
with open(d + '/dmon.txt', 'w') as f:  # nvidia-smi dmon -o DT text, header every 20 lines
    for i, (t, g, u, m, p) in enumerate(rows):
        if i % 20 == 0:
            f.write('#Date       Time        gpu    pwr  gtemp     sm    mem\n'
                    '#YYYYMMDD   HH:MM:SS    Idx      W      C      %      %\n')
        f.write(' %s   %s  %5d  %5s  %5d  %5d  %5d\n' % (time.strftime('%Y%m%d', time.gmtime(t)),
                time.strftime('%H:%M:%S', time.gmtime(t)), g, '-' if p[0] == '[' else p.split('.')[0],
                40 + u % 30, u, u // 2))
def dmon_plain(name, skip):  # nvidia-smi dmon's default text: no time, header every 20 lines
    with open(d + '/' + name, 'w') as f:
        for i, (t, g, u, m, p) in enumerate(rows):
            if skip(i, g): continue
            if i % 20 == 0:
                f.write('# gpu    pwr  gtemp     sm    mem\n# Idx      W      C      %      %\n')
            f.write('  %5d  %5s  %5d  %5d  %5d\n' % (g, '-' if p[0] == '[' else p.split('.')[0],
                    40 + u % 30, u, u // 2))
dmon_plain('dmon-untimed.txt', lambda i, g: False)
# GPU 0 missing from every other sample: the whole file's sample groups then start at GPU 1
# there, so no cut before a GPU 0 row stands for a group start.
dmon_plain('dmon-skew.txt', lambda i, g: g == 0 and (i // 4) % 2 == 1)
with open(d + '/changed.csv', 'w') as f:  # the columns change mid-file: a restarted nvidia-smi
    f.write('timestamp, index, power.draw [W]\n')
    for i, (t, g, u, m, p) in enumerate(rows):
        if i == len(rows) // 2: f.write('timestamp, power.draw [W], index\n')
        f.write('%s, %d, %s\n' % (smi(t), g, p) if i < len(rows) // 2 else '%s, %s, %d\n' % (smi(t), p, g))
# Phases: windows across many boundaries, one narrow window around a few samples, a nested
# one, and a phase entered twice.
ev = []
def ph(name, path, a, b, depth=0):
    ev.append((a, '{"ts": "%s", "type": "phase_enter", "pid": 7, "t": %.3f, "name": "%s", "path": "%s", "depth": %d}' % (iso(a), a, name, path, depth)))
    ev.append((b, '{"ts": "%s", "type": "phase_exit", "pid": 7, "t": %.3f, "name": "%s", "path": "%s", "depth": %d, "seconds": %.3f, "status": "ok"}' % (iso(b), b, name, path, depth, b - a)))
ph('train', 'train', t0 + 20.3, t0 + 180.7)
ph('step', 'train/step', t0 + 100.1, t0 + 101.9, 1)
ph('eval', 'eval', t0 + 190.25, t0 + 260.5)
ph('train', 'train', t0 + 270.0, t0 + 305.4)
with open(d + '/runlog.jsonl', 'w') as f:
    for _, line in sorted(ev): f.write(line + '\n')
PY

summ() { # CHUNK THREADS ARGS...: the summary without its generation time
    local chunk=$1 threads=$2
    shift 2
    RUNMON_SUMMARY_CHUNK_BYTES=$chunk "$RUNMON" summary --threads "$threads" --format json "$@" \
        2>"$T/stderr" | jq -S 'del(.generated_at)'
}
same() { # NAME ARGS...: chunked (several sizes and thread counts) == one piece
    local name=$1
    shift
    local whole chunked
    whole=$(summ 0 1 "$@")
    check "$name: a summary in one piece" test -n "$whole"
    for ct in "1000 4" "1000 1" "777 2" "4096 3"; do
        chunked=$(summ ${ct% *} ${ct#* } "$@")
        local n
        n=$(sed -n 's/.*: \([0-9]*\) chunks.*/\1/p' "$T/stderr" | head -1)
        check "$name: chunks of ${ct% *} bytes really made ($n)" test "${n:-0}" -gt 3
        expect_eq "$name: chunks of ${ct% *} bytes, ${ct#* } threads = one piece" "$whole" "$chunked"
    done
}

same "gpu.csv with phases, --interval" --gpu-csv "$T/gpu.csv" --runlog "$T/runlog.jsonl" --interval 1
same "gpu.csv, median spacing" --gpu-csv "$T/gpu.csv" --runlog "$T/runlog.jsonl"
same "nvidia-smi csv without header, with units" --gpu-csv "$T/smi.csv" \
    --gpu-fields timestamp,index,name,utilization.gpu,memory.used,power.draw --runlog "$T/runlog.jsonl"
same "dmon.csv" --dmon "$T/dmon.csv" --runlog "$T/runlog.jsonl" --interval 1
same "dmon text with date and time (-o DT)" --dmon "$T/dmon.txt" --runlog "$T/runlog.jsonl"

# Without time, chunks are cut where the GPU of the first row (the one that starts each
# sample group) comes again: the per-sample total power needs whole groups.
same "dmon text without time (default dmon)" --dmon "$T/dmon-untimed.txt"
expect_eq "dmon text without time: 4 GPUs, every row, the groups' total power" \
    "4 $(grep -c '^  ' "$T/dmon-untimed.txt") true" \
    "$(summ 0 1 --dmon "$T/dmon-untimed.txt" | jq -r '"\(.gpus | length) \([.gpus[].samples] | add) \(.power_watts_max > 0)"')"
whole=$(summ 0 1 --dmon "$T/dmon-skew.txt")
chunked=$(summ 1000 4 --dmon "$T/dmon-skew.txt")
expect_match "dmon without time, groups not starting at the first GPU: chunks given up" \
    "read again whole" "$(cat "$T/stderr")"
expect_eq "dmon without time, groups not starting at the first GPU: figures as in one piece" \
    "$whole" "$chunked"

J=$(summ 0 1 --gpu-csv "$T/gpu.csv" --runlog "$T/runlog.jsonl" --interval 1)
expect_eq "the figures checked are not empty: 4 GPUs, 4 phases, gaps, energy" "4 3 true true" \
    "$(jq -r '"\(.gpus|length) \(.phases|length) \(.data_quality.gaps.count > 0) \(.gpus[0].energy_wh > 0)"' <<<"$J")"

# Columns that change mid-file: the chunks after the change would start with the wrong map,
# so the file is read again whole, with the same figures.
whole=$(summ 0 1 --gpu-csv "$T/changed.csv")
chunked=$(summ 1000 4 --gpu-csv "$T/changed.csv")
expect_match "changed columns: the chunks are given up" "read again whole" "$(cat "$T/stderr")"
expect_eq "changed columns: figures as in one piece" "$whole" "$chunked"
expect_eq "changed columns: both maps read (power of every row)" \
    "$(jq '[.gpus[].samples] | add' <<<"$whole")" "$(grep -c '^2026' "$T/changed.csv")"

# Sample groups longer than 16 KiB (300 GPUs): a cut is looked for in 16 KiB past each grid
# point first, and in the whole probe window where that holds no new time; the chunks are
# still cut and give the figures of one piece. Whole watts, whole seconds: every sum is
# exact in any order (fractional ones can differ in a last digit between chunked and whole,
# an order of addition apart).
python3 - "$T" <<'PY'
import sys
with open(sys.argv[1] + '/wide.csv', 'w') as f:
    f.write('timestamp, index, uuid, utilization.gpu [%], power.draw [W]\n')
    for s in range(30):
        for g in range(300):
            f.write('2026/11/23 05:%02d:%02d.000, %d, GPU-%032d, %d %%, %d W\n'
                    % (s // 60, s % 60, g, g, (s * 7 + g) % 101, 100 + (s * g) % 300))
PY
whole=$(summ 0 1 --gpu-csv "$T/wide.csv")
chunked=$(summ 60000 2 --gpu-csv "$T/wide.csv")
n=$(sed -n 's/.*: \([0-9]*\) chunks.*/\1/p' "$T/stderr" | head -1)
check "groups over 16 KiB: chunks made ($n), none given up" \
    test "${n:-0}" -gt 5 -a -z "$(grep 'read again whole' "$T/stderr")"
expect_eq "groups over 16 KiB: figures as in one piece" "$whole" "$chunked"
expect_eq "groups over 16 KiB: 300 GPUs, every row" "300 9000" \
    "$(jq -r '"\(.gpus | length) \([.gpus[].samples] | add)"' <<<"$whole")"

# A quoted field can hold a line end, so a chunk cut could fall inside it: a chunk whose bytes
# hold a '"' gives the file up to a reading in one piece (the reader spots the quote as it
# splits, in its fast path or libcsv's), with the same figures.
awk 'NR == 700 { sub(/NVIDIA H100 80GB HBM3/, "\"NVIDIA H100\n80GB HBM3\"") } { print }' \
    "$T/gpu.csv" >"$T/quoted.csv"
whole=$(summ 0 1 --gpu-csv "$T/quoted.csv")
chunked=$(summ 1000 4 --gpu-csv "$T/quoted.csv")
expect_match "a quoted field with a line end mid-file: the chunks are given up" "read again whole" \
    "$(cat "$T/stderr")"
expect_eq "a quoted field with a line end mid-file: figures as in one piece" "$whole" "$chunked"
expect_eq "a quoted field with a line end mid-file: every row read" \
    "$(jq '[.gpus[].samples] | add' <<<"$whole")" "$(grep -c '^2026' "$T/gpu.csv")"

done_testing
