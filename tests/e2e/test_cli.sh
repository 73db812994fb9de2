#!/usr/bin/env bash
# The runmon binary's top-level behaviour: help, version, unknown commands.
. "$(dirname "$0")/lib.sh"

out=$("$RUNMON" --help); rc=$?
expect_eq "--help exits 0" 0 "$rc"
expect_match "--help names the program" "usage: runmon COMMAND" "$out"
out=$("$RUNMON" --version)
expect_eq "--version prints the VERSION file's version" "runmon $(cat "$(dirname "$0")/../../VERSION")" "$(head -n 1 <<<"$out")"
expect_match "--version names the libraries it was built with" \
    "^built with: jansson [0-9.]+, pcre2 [0-9]+\.[0-9]+, libcsv [0-9]+\.[0-9]+\.[0-9]+, ncurses [0-9.]+$" \
    "$(sed -n 2p <<<"$out")"
expect_eq "--version prints two lines" 2 "$(wc -l <<<"$out")"
err=$("$RUNMON" no-such-command 2>&1 >/dev/null); rc=$?
expect_eq "unknown command exits 2" 2 "$rc"
expect_match "unknown command is named" "unknown command 'no-such-command'" "$err"
"$RUNMON" >/dev/null 2>&1; rc=$?
expect_eq "no command exits 2" 2 "$rc"
done_testing
