# Sourced by every end-to-end script. Gives each script its own scratch directory,
# the binaries under test, and TAP helpers that tests/run.sh tallies.
set -u
: "${BUILD:?run through make test}"
: "${RUNMON:=$BUILD/asan/runmon}"
: "${FAKEBIN:=$BUILD/fakebin}"
: "${FIXTURES:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../fixtures" && pwd)}"
export LC_ALL=C
T=$(mktemp -d "${TMPDIR:-/tmp}/runmon-e2e.XXXXXX")
_t_children=()
_t_cleanup() {
    local p
    for p in "${_t_children[@]:-}"; do [ -n "$p" ] && kill -9 "$p" 2>/dev/null; done
    rm -rf "$T"
}
trap _t_cleanup EXIT
_t_n=0
_t_failed=0

ok() { _t_n=$((_t_n + 1)); echo "ok $_t_n - $1"; }
not_ok() {
    _t_n=$((_t_n + 1)); _t_failed=$((_t_failed + 1))
    echo "not ok $_t_n - $1"
    shift
    [ $# -gt 0 ] && printf '#   %s\n' "$@"
    return 0
}
# check NAME CMD...: passes when CMD exits 0.
check() {
    local name=$1; shift
    if "$@"; then ok "$name"; else not_ok "$name" "command failed: $*"; fi
}
# expect_eq NAME EXPECTED ACTUAL
expect_eq() {
    if [ "$2" == "$3" ]; then ok "$1"; else not_ok "$1" "expected: $2" "actual:   $3"; fi
}
# expect_match NAME REGEX ACTUAL
expect_match() {
    if [[ $3 =~ $2 ]]; then ok "$1"; else not_ok "$1" "expected to match: $2" "actual: $3"; fi
}
# Wait up to $2 seconds (default 10) for the command in $1 to succeed.
wait_for() {
    local cmd=$1 limit=${2:-10} i=0
    while ! eval "$cmd"; do
        sleep 0.05; i=$((i + 1))
        [ $i -ge $((limit * 20)) ] && return 1
    done
    return 0
}
# boosted CMD...: CMD in a new session, so a new scheduler autogroup, given the highest weight
# (nice -19 on /proc/self/autogroup, as root; else as it is): on the shared test machine the
# other sessions' work then barely takes CPU time from it, so figures that measure a workload's
# waiting for a CPU see only what the test set up.
boosted() {
    setsid -w bash -c 'echo -19 >/proc/self/autogroup 2>/dev/null; exec "$@"' boosted "$@"
}
# Remember a background pid so the script never leaves it behind.
track() { _t_children+=("$1"); }
# --- helpers for recorded sessions -------------------------------------------------------
# The newest session folder in a sink (the real folder, not the `latest` link).
session_dir() {
    local d
    for d in "$1"/*/; do
        [ "$(basename "$d")" = latest ] && continue
        [ -f "$d/session.json" ] && echo "${d%/}"
    done | tail -n 1
}
count_event() { jq -r 'select(.type=="event") | .event' "$1/runlog.jsonl" | grep -cx "$2"; }
event_data() { jq -c "select(.type==\"event\" and .event==\"$2\") | .data" "$1/runlog.jsonl"; }
# Data rows of a CSV file (its header not counted; 0 when absent or empty).
rows() { local n=0; [ -f "$1" ] && n=$(wc -l <"$1"); [ "$n" -gt 0 ] && n=$((n - 1)); echo "$n"; }
# No fake nvidia-smi listed in DIR/pids (FAKE_SMI_STATE_DIR) is still alive. A zombie is
# dead: it only waits for a reaper (pid 1 on some machines never reaps).
no_fake_left() {
    local pid kind st alive=""
    [ -f "$1/pids" ] || return 0
    while read -r pid kind; do
        st=$(cut -d' ' -f3 "/proc/$pid/stat" 2>/dev/null) || continue
        [ "$st" = Z ] || alive="$alive $pid($kind:$st)"
    done <"$1/pids"
    [ -z "$alive" ] || { echo "# still alive:$alive"; return 1; }
}

done_testing() {
    echo "1..$_t_n"
    [ "$_t_failed" -eq 0 ]
}

# --- helpers for sinks under faults (issue 27) ----------------------------------------------
# "FILES BYTES" of the CSV segment files on disk in a sink's session folders: what sink.json's
# final_retained_files and final_retained_bytes must count.
sink_disk_totals() {
    find "$1" -mindepth 2 -maxdepth 2 -type f -regextype posix-extended \
        -regex '.*/[A-Za-z0-9_-][A-Za-z0-9._-]*/(gpu|dmon|cpu|proc|apps|io|stall)(-[0-9]+)?\.csv' \
        -printf '%s\n' | awk '{ n++; b += $1 } END { print n + 0, b + 0 }'
}
sink_json_totals() {
    jq -r '.counters | "\(.final_retained_files) \(.final_retained_bytes)"' "$1/sink.json"
}
# The session folders of a sink (valid ids, real directories), one per line, sorted.
sink_folders() {
    find "$1" -mindepth 1 -maxdepth 1 -type d -regextype posix-extended \
        -regex '.*/[A-Za-z0-9_-][A-Za-z0-9._-]*' -printf '%f\n' | sort
}
# gdb, when it can run a program here (ptrace may be forbidden in a container).
have_gdb() { command -v gdb >/dev/null 2>&1 && gdb -q -batch -ex run --args /bin/true >/dev/null 2>&1; }
# gdb_kill_at FUNC N CMD...: runs CMD under gdb and SIGKILLs it at the Nth call of FUNC (the
# moment a breakpoint there is hit; CMD runs to its end when FUNC is called fewer times).
gdb_kill_at() {
    local fn=$1 n=$2
    shift 2
    gdb -q -batch -ex 'set pagination off' -ex 'set confirm off' \
        -ex 'handle SIGUSR1 SIGCHLD SIGPIPE SIGXFSZ nostop noprint pass' \
        -ex "break $fn" -ex "ignore 1 $((n - 1))" -ex run -ex kill --args "$@" >/dev/null 2>&1
}
# gdb_hold_at FUNC SECONDS CMD...: runs CMD under gdb; the thread that first calls FUNC waits
# there SECONDS while the others go on (non-stop mode), then everything runs to its end.
gdb_hold_at() {
    local fn=$1 secs=$2
    shift 2
    gdb -q -batch -ex 'set non-stop on' -ex 'set pagination off' -ex 'set confirm off' \
        -ex 'handle SIGUSR1 SIGCHLD SIGPIPE SIGXFSZ nostop noprint pass' \
        -ex "break $fn" -ex run -ex "shell sleep $secs" -ex 'delete' -ex 'continue -a' \
        --args "$@" >/dev/null 2>&1
}
