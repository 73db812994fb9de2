#!/usr/bin/env bash
# CSV formula cells (issue 36 item 13): a phase named `=cmd|' /C calc'!A1`, a host starting
# with `=`, parameters `-1+1` and `@x` reach CSV cells a spreadsheet would run as formulas.
# By default every CSV keeps the exact bytes (docs/FORMATS.md promises them); --csv-safe
# (summary, sessions, sessions --summary) writes such a cell with a leading ' and leaves plain
# numbers (-1.5) alone. Cells are read back with Python's csv module.
. "$(dirname "$0")/lib.sh"

export FAKE_SMI_CAPTURES="$FIXTURES/captures"
export PATH="$FAKEBIN:/usr/local/bin:/usr/bin:/bin"
unset FAKE_SMI_OVERRIDE FAKE_SMI_NVML_ERROR FAKE_SMI_FAULT_ONLY RUNMON_RUNLOG RUNMON_PHASE_PATH \
    RUNMON_SWEEP FAKE_SMI_GPUS

PHASE="=cmd|' /C calc'!A1"
HOST='=HYPERLINK("http://x","y")'
# Cells of column NAME in FILE (rows after the header), one a line, as Python's csv reads them.
col() {
    python3 -c 'import csv,sys
r = list(csv.reader(open(sys.argv[1], newline="")))
i = r[0].index(sys.argv[2])
print("\n".join(row[i] for row in r[1:]))' "$@"
}

# Two runs of a sweep; the phase path is nested (a name holds no '/'): `=cmd|' ` then
# `C calc'!A1`.
for y in '-1+1' '@x'; do
    RUNMON_HOSTNAME=$HOST "$RUNMON" record -q -o "$T/s" -i 0.2 --sweep f --param x=-1.5 \
        --param "y=$y" -- "$RUNMON" phase "=cmd|' " -- "$RUNMON" phase "C calc'!A1" -- sleep 0.6
done
s=$(session_dir "$T/s")
check "two sessions recorded" test -n "$s"

# --- the default: exact bytes ---------------------------------------------------------------
"$RUNMON" summary "$s" --format csv >"$T/sum.csv"
expect_eq "summary csv: the phase cell is the exact path (no guard by default)" "$PHASE" \
    "$(col "$T/sum.csv" phase | grep calc | awk "NR == 1")"
"$RUNMON" sessions "$T/s" --format csv >"$T/ses.csv"
expect_eq "sessions csv: the host cell exact by default" "$HOST" "$(col "$T/ses.csv" host | awk "NR == 1")"

# --- --csv-safe -------------------------------------------------------------------------------
"$RUNMON" summary "$s" --format csv --csv-safe >"$T/safe.csv"
expect_eq "summary --csv-safe: the phase cell gets a leading '" "'$PHASE" \
    "$(col "$T/safe.csv" phase | grep calc | awk "NR == 1")"
expect_eq "summary --csv-safe: no cell starts with = + - @ tab or CR but a plain number" "" \
    "$(python3 -c 'import csv,re,sys
for row in csv.reader(open(sys.argv[1], newline="")):
    for c in row:
        if c[:1] in ("=", "+", "-", "@", "\t", "\r") and not re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", c):
            print(c)' "$T/safe.csv")"
"$RUNMON" summary "$s" --csv-safe >"$T/safe2.csv"
cmp -s "$T/safe.csv" "$T/safe2.csv"
expect_eq "summary --csv-safe alone writes the same CSV (it implies --format csv)" 0 $?
"$RUNMON" summary "$s" --csv-safe -o "$T/safe3.csv"
cmp -s "$T/safe.csv" "$T/safe3.csv"
expect_eq "summary --csv-safe -o FILE: the same CSV in the file" 0 $?

"$RUNMON" sessions "$T/s" --csv-safe >"$T/ses-safe.csv"
expect_eq "sessions --csv-safe: the host cell gets a leading '" "'$HOST" \
    "$(col "$T/ses-safe.csv" host | awk "NR == 1")"
"$RUNMON" sessions --summary "$T/s" --csv-safe >"$T/sw-safe.csv"
expect_eq "sessions --summary --csv-safe: -1+1 and @x guarded" "$(printf "'%s\n'%s" '-1+1' '@x')" \
    "$(col "$T/sw-safe.csv" param:y)"
expect_eq "sessions --summary --csv-safe: a plain negative number stays a number" \
    "$(printf '%s\n%s' -1.5 -1.5)" "$(col "$T/sw-safe.csv" param:x)"
"$RUNMON" sessions --summary "$T/s" --format csv >"$T/sw.csv"
expect_eq "sessions --summary csv: exact by default" "$(printf '%s\n%s' '-1+1' '@x')" \
    "$(col "$T/sw.csv" param:y)"

# --- bad input ----------------------------------------------------------------------------------
"$RUNMON" summary "$s" --format json --csv-safe >/dev/null 2>"$T/e1"
expect_eq "summary --csv-safe with --format json: exit 2, a clear message" \
    "2 runmon summary: --csv-safe writes CSV; it goes with --format csv only" "$? $(cat "$T/e1")"
"$RUNMON" sessions "$T/s" --format text --csv-safe >/dev/null 2>"$T/e2"
expect_eq "sessions --csv-safe with --format text: exit 2, a clear message" \
    "2 runmon sessions: --csv-safe writes CSV; it goes with --format csv only" "$? $(cat "$T/e2")"
done_testing
