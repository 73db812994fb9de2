#!/usr/bin/env bash
# `runmon record`'s options come from one table (cli/cmd_record.c, record_options[]): getopt's
# options, --help's list and how each is applied. Here the table is checked against what a
# user reads and types: --help, the man page's OPTIONS (man/runmon-record.1) and the bash
# completion's words for `runmon record -` (contrib/bash-completion/runmon). An option
# missing from any of them fails, and so does one of theirs that the table lacks. Every
# option of the table is accepted with a value of its kind. MAN_DIR and COMPLETION point
# at other copies (a test of this test).
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PAGE=${MAN_DIR:-$ROOT/man}/runmon-record.1
COMPLETION=${COMPLETION:-$ROOT/contrib/bash-completion/runmon}
. "$COMPLETION"
. "$ROOT/tests/e2e/completion_cases.sh" # _complete

# The table's rows, each "--NAME -C ARG" (- where it has no short name, no value).
table_rows() {
    sed -n '/^static const struct record_option record_options\[\] = {/,/^};/p' \
        "$ROOT/cli/cmd_record.c" |
        sed -nE -e "s/^    \{\"([a-z0-9-]+)\", .arg = \"([^\"]*)\".*/--\1 - \2/p" \
            -e "s/^    \{\"([a-z0-9-]+)\", ('(.)'|0), (\"([^\"]*)\"|NULL).*/--\1 -\3 \5/p" |
        sed 's/ $/ -/'
}
# Its options, "--NAME" and "-C", one a line, sorted.
table_options() { table_rows | cut -d' ' -f1,2 | tr ' ' '\n' | grep -vx -- '-' | sort -u; }
# As tests/e2e/test_manpages.sh reads a page: the tag line after each .TP of OPTIONS.
man_options() {
    awk '/^\.SH /{ in_opts = ($0 ~ /^\.SH "?OPTIONS"?$/) ; next }
         in_opts && /^\.TP/ { tag = 1; next }
         in_opts && tag { print; tag = 0 }' "$1" |
        sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' |
        grep -oE '(^|[ ",])--?[A-Za-z][A-Za-z0-9-]*' | sed 's/^[ ",]//' | sort -u
}
# same NAME WHAT LIST: LIST (one a line) is the table's, or the differences are named.
same() {
    local name=$1 what=$2 list=$3 lacks has
    lacks=$(comm -23 <(echo "$table") <(echo "$list") | tr '\n' ' ')
    has=$(comm -13 <(echo "$table") <(echo "$list") | tr '\n' ' ')
    if [ -z "$lacks$has" ]; then ok "$name"; else
        not_ok "$name" "$what lacks: ${lacks:-none}" "$what has, the table not: ${has:-none}"
    fi
}

table=$(table_options)
check "the table has rows ($(wc -l <<<"$table") options)" test "$(wc -l <<<"$table")" -gt 20
check "the table has the short options" grep -qx -- -o <<<"$table"

help=$("$RUNMON" record --help)
same "--help lists every option of the table, and no other" "--help" \
    "$(_runmon_parse_help <<<"$help" | cut -f1 | sort -u)"
same "the man page's OPTIONS are the table's" "$PAGE" "$(man_options "$PAGE")"

mkdir -p "$T/bin" "$T/cwd" && ln -s "$RUNMON" "$T/bin/runmon"
words=$(cd "$T/cwd" && PATH="$T/bin:$PATH" && _complete runmon record - | tr ' ' '\n' | sort -u)
same "the completion offers every option of the table for 'runmon record -'" "the completion" \
    "$(grep -v -x -- -- <<<"$words")"

# Each option is accepted (no "unknown option"), with a value of its kind before --help.
value_for() {
    case $1 in
    DIR | PATH) echo "$T/x" ;;
    LIST) echo timestamp ;;
    GROUPS) echo pucm ;;
    PCT) echo 95 ;;
    URL) echo http://localhost:9 ;;
    NAME) echo sweep1 ;;
    KEY=VALUE) echo k=v ;;
    *) echo 1 ;;
    esac
}
declare -A placeholder=()
while read -r o c arg; do
    [ "$arg" = - ] && continue
    placeholder[$o]=$arg
    [ "$c" = - ] || placeholder[$c]=$arg
done < <(table_rows)
bad=""
for o in $table; do
    arg=${placeholder[$o]:-}
    out=$(cd "$T/cwd" && timeout 10 "$RUNMON" record "$o" ${arg:+"$(value_for "$arg")"} --help 2>&1)
    [[ $out == "usage: runmon record"* ]] || bad+=" $o: $(head -n 1 <<<"$out");"
done
if [ -z "$bad" ]; then ok "every option of the table is accepted"; else
    not_ok "every option of the table is accepted" "$bad"; fi
done_testing
