# Shared by regen.sh and tests/e2e/test_golden.sh: runs one case of cases.txt from fixtures/
# and prints its output with the one field that changes per run (generated_at) removed.
golden_run() { # $1 = runmon binary, $2 = name, $3.. = arguments
    local bin=$1 name=$2
    shift 2
    (cd "$FIXTURES" && TZ=UTC "$bin" "$@" 2>/dev/null) | case $name in
    *.json) jq -S 'walk(if type == "object" then del(.generated_at) else . end)' ;;
    *) cat ;;
    esac
}
golden_cases() { # prints "name<TAB>args" for every case
    grep -v '^[[:space:]]*#' "$FIXTURES/../tests/golden/cases.txt" | grep -v '^[[:space:]]*$' |
        sed 's/[[:space:]]*|[[:space:]]*/\t/'
}
