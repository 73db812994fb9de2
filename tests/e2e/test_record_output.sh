#!/usr/bin/env bash
# runmon record -o DIR: a missing DIR is created, but not the folders above it. A typo higher
# up the path is refused with a clear message and exit 2, and nothing is created; --parents
# creates them all and says which; an existing DIR, or a new one in an existing folder, is
# used without a word about it; a DIR that is a file is refused.
. "$(dirname "$0")/lib.sh"
rec() { "$RUNMON" record --no-gpu -i 0.2 "$@"; }
mkdir -p "$T/w" && cd "$T/w" || exit 1

# A typo deep in the path: exit 2, the missing folder named, --parents suggested, no folder.
rec -o "$T/w/x/typo/deep/sink" -- true >"$T/out" 2>"$T/err"; rc=$?
expect_eq "-o with a missing parent: exit 2" 2 "$rc"
expect_eq "... one line naming the first missing folder and --parents" \
    "runmon record: -o $T/w/x/typo/deep/sink: $T/w/x does not exist; runmon creates only the last folder of the path (--parents creates the ones above it too)" \
    "$(cat "$T/err")"
expect_eq "... nothing created" "" "$(ls -A "$T/w")"
rec -q -o "rel/sink" -- true 2>"$T/err"; rc=$?
expect_eq "a relative -o with a missing parent: exit 2, nothing created" "2 " "$rc $(ls -A "$T/w")"
expect_match "... naming rel" "^runmon record: -o rel/sink: rel does not exist" "$(cat "$T/err")"

# --parents: every folder made, and said (one line, top first); the session records there.
rec -o "$T/w/x/typo/deep/sink" --parents -- true >"$T/out" 2>"$T/err"; rc=$?
expect_eq "--parents: exit 0" 0 "$rc"
expect_eq "... says which folders it created" \
    "runmon record: created $T/w/x, $T/w/x/typo, $T/w/x/typo/deep, $T/w/x/typo/deep/sink" \
    "$(grep '^runmon record: created' "$T/err")"
check "... the session is there" test -f "$(session_dir "$T/w/x/typo/deep/sink")/session.json"
rec -o "$T/w/x/typo/deep/sink" --parents -- true 2>"$T/err"
expect_eq "--parents on an existing sink: nothing said about folders" "" "$(grep -c 'created' "$T/err" | grep -v '^0$')"
rec -q -o "$T/w/y/sink" --parents -- true 2>"$T/err"; rc=$?
expect_eq "--parents with -q: exit 0, nothing said" "0 " "$rc $(cat "$T/err")"
check "... the folders are there" test -d "$T/w/y/sink"

# One missing folder in an existing one (the default ./runmon is such a case): made silently.
rec -o newdir -- true >"$T/out" 2>"$T/err"; rc=$?
expect_eq "-o newdir (one level): exit 0" 0 "$rc"
expect_eq "... not a word about creating it" "" "$(grep -i 'creat' "$T/err")"
check "... the session is in newdir" test -f "$(session_dir newdir)/session.json"
rec -q -o newdir2/ -- true; rc=$?
expect_eq "-o newdir2/ (a trailing slash): exit 0" "0 yes" "$rc $(test -d newdir2 && echo yes)"
rec -q -- true; rc=$?
expect_eq "no -o: ./runmon is created" "0 yes" "$rc $(test -d runmon && echo yes)"

# A file where the folder should be, or above it.
: >"$T/w/file"
rec -q -o file -- true 2>"$T/err"; rc=$?
expect_eq "-o FILE: exit 2, said" "2 runmon record: -o file: Not a directory" "$rc $(cat "$T/err")"
rec -q -o file/sink --parents -- true 2>"$T/err"; rc=$?
expect_eq "-o FILE/sink --parents: exit 2, said" "2 runmon record: -o file/sink: Not a directory" "$rc $(cat "$T/err")"

# --private: the folders runmon creates are 0700, those --parents creates as well.
rec -q --private -o "$T/w/p/q/sink" --parents -- true; rc=$?
expect_eq "--private --parents: exit 0, each created folder 0700" "0 700 700 700" \
    "$rc $(stat -c %a "$T/w/p" "$T/w/p/q" "$T/w/p/q/sink" | tr '\n' ' ' | sed 's/ $//')"
done_testing
