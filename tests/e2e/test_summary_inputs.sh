#!/usr/bin/env bash
# Issue 25: what `runmon summary` makes of what a shell glob gives it, and of files that are
# not data. Several sessions of one sink (SINK/2026*) are several sessions: one section each,
# no totals across them (3 sessions of one 2-GPU machine are not 6 GPUs); SINK/* also skips
# the sink's root files and reads SINK/latest's session once. A binary or a page of prose is
# "not a runmon or nvidia-smi file", without advice on nvidia-smi's layouts, which stays for
# files that look like nvidia-smi's.
. "$(dirname "$0")/lib.sh"

export PATH="$FAKEBIN:/usr/local/bin:/usr/bin:/bin"
export FAKE_SMI_CAPTURES="$FIXTURES/captures" FAKE_SMI_GPUS=2
unset FAKE_SMI_OVERRIDE FAKE_SMI_NVML_ERROR FAKE_SMI_FAULT_ONLY FAKE_SMI_APPS RUNMON_RUNLOG \
    RUNMON_PHASE_PATH

# (5) three sessions of one sink.
for i in 1 2 3; do "$RUNMON" record -q -o "$T/m" -i 0.2 -- sleep 0.3 >/dev/null; done
check "three sessions recorded" test "$(sink_folders "$T/m" | wc -l)" -eq 3
"$RUNMON" summary --format json "$T"/m/2026* >"$T/s.json" 2>"$T/s.err"
expect_eq "SINK/2026*: exits 0" 0 "$?"
expect_eq "SINK/2026*: a runmon-summary-sessions" runmon-summary-sessions "$(jq -r .format "$T/s.json")"
expect_eq "SINK/2026*: one summary per session" \
    "$(sink_folders "$T/m" | tr '\n' ' ')" "$(jq -r '.sessions[].session.id' "$T/s.json" | tr '\n' ' ')"
expect_eq "SINK/2026*: each has its 2 GPUs" "2 2 2" \
    "$(jq -r '[.sessions[].totals.gpu_count] | map(tostring) | join(" ")' "$T/s.json")"
expect_eq "SINK/2026*: no totals or hosts across sessions" "null null" \
    "$(jq -r '"\(.totals) \(.hosts)"' "$T/s.json")"
"$RUNMON" summary --format text "$T"/m/2026* >"$T/s.txt" 2>/dev/null
check "text: a section per session" test "$(grep -c '^session ' "$T/s.txt")" -eq 3
check "text: no TOTAL row" test "$(grep -c 'TOTAL' "$T/s.txt")" -eq 0
check "text: says there are no totals across sessions" \
    grep -q "^3 sessions, each summarized on its own" "$T/s.txt"
expect_eq "csv: one total row per session" 3 \
    "$("$RUNMON" summary --format csv "$T"/m/2026* 2>/dev/null | grep -c '^total,')"
"$RUNMON" summary --format json "$T"/m/* >"$T/all.json" 2>"$T/all.err"
expect_eq "SINK/*: exits 0" 0 "$?"
expect_eq "SINK/*: the three sessions, latest read once" 3 "$(jq '.sessions | length' "$T/all.json")"
check "SINK/*: sink.json and index.jsonl skipped, said on stderr" \
    grep -q "skipped .*index.jsonl, .*sink.json (files of a sink's root" "$T/all.err"
"$RUNMON" summary "$T/m/sink.json" >/dev/null 2>"$T/only.err"
expect_eq "only a sink's root file: exit 2" 2 "$?"
check "... nothing to summarize" grep -q "nothing to summarize" "$T/only.err"
# Sink directories (the nodes of one job) still give totals per host.
"$RUNMON" record -q -o "$T/m2" -i 0.2 -- sleep 0.3 >/dev/null
"$RUNMON" summary --format json "$T/m" "$T/m2" >"$T/set.json" 2>/dev/null
expect_eq "two sink directories: the set with totals per host" "runmon-summary-set 4" \
    "$(jq -r '"\(.format) \(.totals.gpu_count)"' "$T/set.json")"

# (6) files that are no runmon or nvidia-smi files.
head -c 4096 /dev/urandom >"$T/random.bin"
printf 'It was a bright cold day in April, and the clocks were striking thirteen.\nWinston Smith slipped quickly through the glass doors.\n' >"$T/prose.txt"
elf=$(readlink -f /bin/true)
for f in "$T/random.bin" "$elf" "$T/prose.txt"; do
    n=$(basename "$f")
    "$RUNMON" summary "$f" >/dev/null 2>"$T/bad.err"
    expect_eq "$n: exit 2" 2 "$?"
    check "$n: not a runmon or nvidia-smi file" grep -q "$n: not a runmon or nvidia-smi file" "$T/bad.err"
    check "$n: no advice on nvidia-smi layouts" \
        test "$(grep -c -e 'gpu-fields' -e 'field list' -e "maybe nvidia-smi" "$T/bad.err")" -eq 0
    check "$n: one line" test "$(wc -l <"$T/bad.err")" -eq 1
done
check "random.bin: said to be binary" grep -q "(binary data)" <("$RUNMON" summary "$T/random.bin" 2>&1)
check "prose: said to be text" grep -q "(text, but" <("$RUNMON" summary "$T/prose.txt" 2>&1)
check "the ELF given as --gpu-csv: the same message" \
    grep -q "not a runmon or nvidia-smi file" <("$RUNMON" summary --gpu-csv "$elf" 2>&1)
# Issue 36: Markdown has '#' lines, names GPUs and nvidia-smi, and holds lines that parse as
# rows further down (the README was read as 41 GPUs, exit 0): refused all the same, with the
# message a page of prose gets, as it is, and given as --gpu-csv.
ROOT=$(cd "$FIXTURES/.." && pwd)
for md in "$ROOT/README.md" "$ROOT/docs/FORMATS.md"; do
    n=$(basename "$md")
    for how in plain --gpu-csv; do
        if [ "$how" = plain ]; then args=("$md"); else args=(--gpu-csv "$md"); fi
        "$RUNMON" summary "${args[@]}" --format json >"$T/md.json" 2>"$T/md.err"
        expect_eq "$n ($how): exit 2" 2 "$?"
        check "$n ($how): not a runmon or nvidia-smi file (text ...)" \
            grep -q "$n: not a runmon or nvidia-smi file (text, but" "$T/md.err"
        check "$n ($how): no GPUs, no summary" test ! -s "$T/md.json"
        check "$n ($how): not offered as nvidia-smi's error" \
            test "$(grep -c "maybe nvidia-smi" "$T/md.err")" -eq 0
    done
done

# Files that look like nvidia-smi's keep the advice.
printf '2026/11/21 10:15:02.113, 45, 30\n2026/11/21 10:15:03.113, 46, 31\n' >"$T/gpu-3col.csv"
check "a header-less nvidia-smi CSV: the field-list advice" \
    grep -q "no field list fits" <("$RUNMON" summary "$T/gpu-3col.csv" 2>&1)
printf 'Failed to initialize NVML: Driver/library version mismatch\n' >"$T/gpu-nvml.csv"
check "nvidia-smi's own error: quoted as such" \
    grep -q "maybe nvidia-smi's own error: Failed to initialize NVML" <("$RUNMON" summary "$T/gpu-nvml.csv" 2>&1)

done_testing
