#!/usr/bin/env bash
# The program, the fuzz targets and the unit tests compile under clang with the Makefile's
# warnings as well as under gcc (make fuzz builds with clang; -Wmissing-field-initializers is
# one warning clang raises where gcc does not: a table row that left its last member to the
# zero default broke `make fuzz` unnoticed, as no test built the fuzz targets). Syntax only:
# about 10 s for the whole tree.
. "$(dirname "$0")/lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
if ! command -v clang >/dev/null 2>&1; then
    not_ok "clang is installed (.ci/deps.sh test)"
    done_testing
    exit
fi
cd "$root" || exit 1
# The Makefile's own flags, so that this test checks what the build uses.
warn=$(make -s --no-print-directory -f - print-warn <<'MK'
include Makefile
print-warn: ; @echo $(WARN)
MK
)
check "the Makefile's warning flags were read" grep -q -- "-Werror" <<<"$warn"
srcs=$(git ls-files 'base/*.c' 'model/*.c' 'runlog/*.c' 'monitor/*.c' 'summary/*.c' 'sink/*.c' \
    'report/*.c' 'sweep/*.c' 'record/*.c' 'cli/*.c' 'fuzz/*.c' 'tests/unit/*.c')
check "some sources were found" test "$(wc -w <<<"$srcs")" -gt 100
# shellcheck disable=SC2086 # word lists
out=$(clang $warn -I. -DRUNMON_VERSION='"0"' -fsyntax-only $srcs 2>&1)
expect_eq "every source compiles under clang with -Werror" "" "$out"
# The check can fail: a row that leaves a member out is caught.
printf 'struct r { const char *k; int d; };\nconst struct r rows[1] = {{"a"}};\n' >"$T/row.c"
# shellcheck disable=SC2086
check "a row missing a member is caught" bash -c "! clang $warn -fsyntax-only '$T/row.c' 2>/dev/null"
done_testing
