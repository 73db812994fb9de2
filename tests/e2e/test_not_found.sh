#!/usr/bin/env bash
# A command that is not found (issue 36 item 14): runmon still writes a whole session and a
# summary (exit 127), and the listing says plainly that it never ran: status failed and
# "(command not found)" after the command, command_error in session.json and in the JSON
# listing. A command that ran and exited 127 itself is listed as it is.
. "$(dirname "$0")/lib.sh"

export FAKE_SMI_CAPTURES="$FIXTURES/captures"
export PATH="$FAKEBIN:/usr/local/bin:/usr/bin:/bin"
unset FAKE_SMI_OVERRIDE FAKE_SMI_NVML_ERROR FAKE_SMI_FAULT_ONLY RUNMON_RUNLOG RUNMON_PHASE_PATH

S=$T/s
"$RUNMON" record -q -o "$S" -i 0.2 -- no_such_command_xyz 2>"$T/err"
expect_eq "a command not found: exit 127" 127 $?
d=$(session_dir "$S")
expect_eq "a command not found: session.json says failed, command not found" \
    "failed command not found" "$(jq -r '"\(.status) \(.command_error)"' "$d/session.json")"
check "a command not found: a summary is written all the same" test -s "$d/summary.json"
"$RUNMON" record -q -o "$S" -i 0.2 -- sh -c 'exit 127'
expect_eq "a command that exits 127 itself: exit 127" 127 $?
d2=$(session_dir "$S")
expect_eq "a command that exits 127 itself: no command_error" null \
    "$(jq -r '.command_error' "$d2/session.json")"
: >"$T/noexec"
"$RUNMON" record -q -o "$S" -i 0.2 -- "$T/noexec" 2>/dev/null
expect_eq "a file that is not executable: exit 126" 126 $?

"$RUNMON" sessions "$S" --format text >"$T/list"
row=$(grep no_such_command_xyz "$T/list")
expect_match "listing: the command not found is failed, and says so" \
    ' failed .* no_such_command_xyz \(command not found\)$' "$row"
expect_match "listing: the command that exited 127 reads as a run" ' failed .* sh -c exit 127$' \
    "$(grep 'exit 127' "$T/list")"
expect_match "listing: the file that could not run says so (its long path cut, the note kept)" \
    ' failed .*… \(command could not run\)$' "$(grep 'could not run' "$T/list")"
expect_match "  and, with room, the whole path" ' failed .*/noexec \(command could not run\)$' \
    "$(COLUMNS=300 "$RUNMON" sessions "$S" --format text | grep noexec)"
expect_match "listing sorted (held rows): the same words" 'no_such_command_xyz \(command not found\)$' \
    "$("$RUNMON" sessions "$S" --format text --sort status | grep no_such)"
expect_eq "JSON listing: command_error on the sessions that never ran" \
    "command not found|null|command could not run" \
    "$("$RUNMON" sessions "$S" --format json | jq -r '[.sessions[] | .command_error // "null"] | join("|")')"
expect_eq "JSON listing, sorted: the same" \
    "command not found|null|command could not run" \
    "$("$RUNMON" sessions "$S" --format json --sort start | jq -r '[.sessions[] | .command_error // "null"] | join("|")')"
done_testing
