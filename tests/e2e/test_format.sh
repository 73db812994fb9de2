#!/usr/bin/env bash
# Issue 37: the tree is in clang-format's layout (.clang-format, Debian's clang-format 14), so
# that `make format` changes only what a change touched. Every C source and header the
# project tracks is checked; one line per file that clang-format would change.
. "$(dirname "$0")/lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
if ! command -v clang-format >/dev/null 2>&1; then
    not_ok "clang-format is installed (.ci/deps.sh test)"
    done_testing
    exit
fi
bad=""
n=0
while IFS= read -r f; do
    n=$((n + 1))
    clang-format --dry-run -Werror "$root/$f" >/dev/null 2>&1 || bad+="$f "
done < <(git -C "$root" ls-files '*.c' '*.h' | grep -v '^python/')
check "some sources were checked ($n)" test "$n" -gt 100
expect_eq "every C file is in clang-format's layout (make format)" "" "$bad"
# The check can fail: a copy of one file with its layout broken is reported.
sed 's/^    /  /' "$root/base/alloc.c" >"$T/alloc.c"
cp "$root/.clang-format" "$T/"
check "a file out of layout is caught" bash -c "! clang-format --dry-run -Werror '$T/alloc.c' 2>/dev/null"
done_testing
