# Sourced by test_completion.sh (the tree's completion) and test_package.sh (the one the
# package installs). Calls the completion function as bash does, with COMP_WORDS and
# COMP_CWORD set, and compares COMPREPLY. Needs lib.sh's ok/not_ok and `runmon` on PATH.
# completion_cases FILE SINK IDS: FILE the completion script, SINK a sink directory, IDS
# its session ids (sorted, space-separated). Runs in a scratch folder made here.

# complete WORD...: COMPREPLY for the command line WORD... (the last word is being
# completed), sorted, duplicates removed, on one line.
_complete() {
    COMP_WORDS=("$@")
    COMP_CWORD=$(($# - 1))
    COMP_LINE="$*"
    COMP_POINT=${#COMP_LINE}
    COMPREPLY=()
    _runmon 2>/dev/null
    printf '%s\n' "${COMPREPLY[@]}" | sed '/^$/d' | sort -u | tr '\n' ' ' | sed 's/ $//'
}

# case_eq NAME EXPECTED WORD...: the completions are exactly EXPECTED.
_case_eq() {
    local name=$1 want=$2; shift 2
    expect_eq "completion: $name ($*)" "$want" "$(_complete "$@")"
}
# case_has NAME "A B" WORD...: the completions include A and B, and not what follows "!".
_case_has() {
    local name=$1 want=$2 got w bad=""; shift 2
    got=" $(_complete "$@") "
    for w in $want; do
        if [[ $w == !* ]]; then [[ $got == *" ${w#!} "* ]] && bad+=" has ${w#!}"
        else [[ $got == *" $w "* ]] || bad+=" lacks $w"; fi
    done
    if [ -z "$bad" ]; then ok "completion: $name ($*)"; else
        not_ok "completion: $name ($*)" "$bad" "got:$got"; fi
}

completion_cases() {
    local file=$1 sink=$2 ids=$3 first
    # shellcheck disable=SC1090
    . "$file" || { not_ok "completion: $file can be sourced"; return; }
    declare -F _runmon >/dev/null && ok "completion: $file defines _runmon for runmon" ||
        not_ok "completion: $file defines _runmon for runmon"
    mkdir -p "$T/cwd/out.d/inner" && : >"$T/cwd/gpu.csv" && : >"$T/cwd/other.txt"
    cd "$T/cwd" || return
    _case_has "commands and top-level options" \
        "record summary sessions report top log phase --help --version" runmon ''
    _case_eq "a command's prefix" "record report" runmon re
    _case_has "summary's options from its --help" \
        "--format --session --rescan --gpu-csv --apps-csv -o !--duration !--once" runmon summary -
    _case_eq "--format values" "csv json text" runmon summary --format ''
    _case_eq "--format value prefix in sessions" "json" runmon sessions "$sink" --format j
    _case_eq "session ids after --session following a sink" "$ids" \
        runmon summary "$sink" --session ''
    first=${ids%% *}
    _case_eq "a session id's prefix for report" "$first" runmon report "$sink" --session "${first:0:11}"
    _case_eq "session ids with options between the sink and --session" "$ids" \
        runmon summary "$sink" --format json --session ''
    _case_eq "record -o completes folders only" "out.d" runmon record -o ''
    _case_eq "record --telemetry-sink-dir completes folders" "out.d" runmon record --telemetry-sink-dir o
    _case_eq "summary --gpu-csv completes files" "gpu.csv" runmon summary --gpu-csv g
    _case_has "summary's PATH is a file or a folder" "gpu.csv out.d other.txt" runmon summary ''
    _case_eq "sessions' DIR is a folder" "out.d" runmon sessions ''
    _case_eq "record's --no- options" "--no-apps --no-gpu --no-io --no-stall" runmon record --no-
    _case_eq "log's subcommands" "event metric objective phase" runmon log ''
    _case_eq "log metric's --step" "--step" runmon log --file x.jsonl metric --st
    _case_eq "nothing after log metric" "" runmon log metric ''
    _case_eq "sessions --cost's words (gpu_hours whole)" "duration energy gpu_hours vram" runmon sessions --cost ''
    _case_eq "report --cost's words" "gpu_hours" runmon report --cost gpu
    _case_eq "nothing after log's subcommand" "" runmon log --file x.jsonl phase ''
    _case_eq "--sort fields" "duration energy start status util vram" runmon sessions "$sink" --sort ''
    _case_has "top's options" "--once --width --help" runmon top -
    _case_has "record completes the command after --" "basename" runmon record -- basen
    _case_has "phase completes the command after --" "echo" runmon phase train -- ech
    _case_eq "an option's value that is free text gets nothing" "" runmon summary --phase ''
    cd - >/dev/null || return
}
