#!/usr/bin/env bash
# The Makefile's order and parallelism (issue 36 item 14): `make -jN` on a fresh machine
# compiled while deps was still installing the libraries' headers ("jansson.h: No such
# file"), and a plain `make` built one file at a time (80 s on 2 cores). On a copy of the
# tree whose deps takes a second (as apt-get does) and a compiler that only records what it
# is asked (it fails when deps has not finished, and counts how many run at once):
# nothing compiles before deps is done, and `make` alone runs several compilers at once.
. "$(dirname "$0")/lib.sh"

SRC=$(cd "$(dirname "$0")/../.." && pwd)
W=$T/tree
mkdir -p "$W"
(cd "$SRC" && tar cf - Makefile VERSION .ci base model runlog monitor summary sink report \
    record cli fixtures/nvidia-smi) | (cd "$W" && tar xf -)
unset MAKEFLAGS MAKELEVEL MFLAGS # a make of its own, not make test's
cat >"$W/.ci/deps.sh" <<'EOF'
#!/usr/bin/env bash
# deps, as slow as an install: the headers are there once it is done.
sleep 1
touch "$(dirname "$0")/../deps.done"
EOF
cat >"$T/cc" <<EOF
#!/usr/bin/env bash
# A compiler that compiles nothing: writes its -o file, records how many run at once.
[ -e "$W/deps.done" ] || { echo "cc: called before deps finished" >&2; exit 1; }
mkdir -p "$T/running"
touch "$T/running/\$\$"
ls "$T/running" | wc -l >>"$T/concurrent"
sleep 0.1
out= prev=
for a in "\$@"; do [ "\$prev" = -o ] && out=\$a; prev=\$a; done
[ -n "\$out" ] && : >"\$out"
rm -f "$T/running/\$\$"
EOF
chmod +x "$T/cc" "$W/.ci/deps.sh"

make -C "$W" -j4 CC="$T/cc" BUILD="$W/build" all >"$T/out1" 2>&1
expect_eq "make -j4 all: exit 0 (no compiler before deps finished)" 0 $?
check "make -j4 all: the program was built" test -e "$W/build/runmon"
expect_eq "make -j4 all: no compiler ran before deps finished" 0 \
    "$(grep -c 'called before deps' "$T/out1")"

rm -rf "$W/build" "$W/deps.done" "$T/concurrent"
make -C "$W" CC="$T/cc" BUILD="$W/build" all >"$T/out2" 2>&1
expect_eq "make all (no -j): exit 0" 0 $?
most=$(sort -n "$T/concurrent" | tail -n 1)
if [ "$(nproc)" -ge 2 ]; then
    check "make all (no -j) on $(nproc) CPUs: compilers run side by side (at most $most at once)" \
        test "$most" -ge 2
fi
rm -rf "$W/build" "$T/concurrent"
make -C "$W" -j1 CC="$T/cc" BUILD="$W/build" all >"$T/out3" 2>&1
expect_eq "make -j1 all: one compiler at a time" "0 1" "$? $(sort -n "$T/concurrent" | tail -n 1)"
done_testing
