#!/usr/bin/env bash
# The manual pages against the program: each command has its page, runmon-COMMAND(1), and
# runmon(1) is the overview. Every option a command's --help prints is in its page's
# OPTIONS section (a .TP entry), every option there is printed by --help and accepted by
# the command (it never answers "unknown option"). Every page
# renders without a groff warning at 80 columns, has its EXIT STATUS, and runmon(1) names
# every RUNMON_* variable the sources read or set.
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
MAN=${MAN_DIR:-$ROOT/man}
# The --help parser is the completion's own, so completion and this test read --help alike.
. "$ROOT/contrib/bash-completion/runmon"

# Options in the OPTIONS section of a page: the tag line after each .TP, font escapes gone.
man_options() {
    awk '/^\.SH /{ in_opts = ($0 ~ /^\.SH "?OPTIONS"?$/) ; next }
         in_opts && /^\.TP/ { tag = 1; next }
         in_opts && tag { print; tag = 0 }' "$1" |
        sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' |
        grep -oE '(^|[ ",])--?[A-Za-z][A-Za-z0-9-]*' | sed 's/^[ ",]//' | sort -u
}
help_options() { # $@ = the command's words
    "$RUNMON" "$@" --help 2>/dev/null | _runmon_parse_help | cut -f1 | sort -u
}

commands=$("$RUNMON" --help | sed -n '/^commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p')
[ -n "$commands" ] && ok "runmon --help lists commands" || not_ok "runmon --help lists commands"

compare() { # $1 = page name, $2 = page file, rest = the command's words
    local page=$1 file=$2; shift 2
    local words="runmon${*:+ $*}" from_help from_man missing extra
    if [ ! -f "$file" ]; then
        not_ok "$page exists for '$words'" "no $file"
        return
    fi
    from_help=$(help_options "$@")
    from_man=$(man_options "$file")
    if [ -z "$from_help" ] || [ -z "$from_man" ]; then
        not_ok "$page and '$words --help' both list options" "help: $from_help" "man: $from_man"
        return
    fi
    missing=$(comm -23 <(echo "$from_help") <(echo "$from_man"))
    extra=$(comm -13 <(echo "$from_help") <(echo "$from_man"))
    if [ -z "$missing" ]; then ok "$page has every option '$words --help' prints"; else
        readarray -t msg < <(for o in $missing; do echo "$page lacks $o (printed by '$words --help')"; done)
        not_ok "$page has every option '$words --help' prints" "${msg[@]}"
    fi
    if [ -z "$extra" ]; then ok "'$words --help' prints every option of $page"; else
        readarray -t msg < <(for o in $extra; do echo "$page lists $o, which '$words --help' does not print"; done)
        not_ok "'$words --help' prints every option of $page" "${msg[@]}"
    fi
}

compare "runmon(1)" "$MAN/runmon.1"
for c in $commands; do compare "runmon-$c(1)" "$MAN/runmon-$c.1" "$c"; done

# Every option of a page is accepted: "runmon CMD OPTION [VALUE] --help" never says the
# option is unknown (a value it finds wrong is not what this checks). The value comes from
# the placeholder --help gives the option.
value_for() {
    case $1 in
    FILE | PATH | DIR) echo "$T/x" ;;
    *\|*) echo "${1%%|*}" ;;
    FIELD) echo start ;;
    LIST) echo timestamp ;;
    GROUPS) echo pucm ;;
    REGEX | ID) echo x ;;
    N) echo 100 ;;
    *) echo 1 ;;
    esac
}
accepts() { # $1 = page file, rest = the command's words
    local file=$1 o arg bad="" err; shift
    local -A placeholder=()
    while IFS=$'\t' read -r o arg; do placeholder[$o]=$arg; done \
        < <("$RUNMON" "$@" --help 2>/dev/null | _runmon_parse_help)
    for o in $(man_options "$file"); do
        arg=${placeholder[$o]:-}
        err=$(cd "$T" && timeout 10 "$RUNMON" "$@" "$o" ${arg:+"$(value_for "$arg")"} --help 2>&1 >/dev/null)
        grep -qiE '(unknown|unrecognized|unrecognised|bad|invalid) option' <<<"$err" &&
            bad+="'runmon${*:+ $*} $o' is refused: $err"$'\n'
    done
    if [ -z "$bad" ]; then ok "runmon${*:+ $*} accepts every option of its page"; else
        readarray -t msg <<<"${bad%$'\n'}"
        not_ok "runmon${*:+ $*} accepts every option of its page" "${msg[@]}"
    fi
}
[ -f "$MAN/runmon.1" ] && accepts "$MAN/runmon.1"
for c in $commands; do [ -f "$MAN/runmon-$c.1" ] && accepts "$MAN/runmon-$c.1" "$c"; done

# The overview names every command's page.
for c in $commands; do
    grep -q "^\.BR runmon\\\\-$c (1)" "$MAN/runmon.1" && ok "runmon(1) refers to runmon-$c(1)" ||
        not_ok "runmon(1) refers to runmon-$c(1)"
done

render() { # groff's warnings only (-ww: all of them), at 80 columns
    if command -v man >/dev/null; then MANWIDTH=80 man --warnings -l "$1" 2>&1 >/dev/null
    else groff -ww -z -man -rLL=80n "$1" 2>&1; fi
}
for page in "$MAN"/*.[1-8]; do
    name=$(basename "$page")
    warn=$(render "$page")
    [ -z "$warn" ] && ok "$name renders without warnings" || not_ok "$name renders without warnings" "$warn"
    case $name in
    *.1) grep -q '^\.SH EXIT STATUS' "$page" && ok "$name documents its exit status" ||
        not_ok "$name documents its exit status" ;;
    esac
done
[ -f "$MAN/runmon-formats.5" ] && ok "runmon-formats(5) exists" || not_ok "runmon-formats(5) exists"

# Every RUNMON_* variable the program or the Python module reads or sets is in runmon(1).
envs=$(cd "$ROOT" && grep -rhoE '"RUNMON_[A-Z_]+"' --include=*.c base model runlog monitor summary sink report record cli |
    tr -d '"'; grep -rhoE 'RUNMON_[A-Z_]+' "$ROOT"/python/runmon/*.py)
environment=$(awk '/^\.SH /{ on = ($0 ~ /ENVIRONMENT/); next } on' "$MAN/runmon.1")
for v in $(sort -u <<<"$envs"); do
    [ "$v" = RUNMON_VERSION ] && continue
    grep -q "$v" <<<"$environment" && ok "runmon(1) documents $v" ||
        not_ok "runmon(1) documents $v" "$v is read or set by the sources but not in ENVIRONMENT"
done
done_testing
