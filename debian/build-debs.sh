#!/usr/bin/env bash
# Builds the Debian packages from a copy of the working tree into OUTDIR (make deb).
# dpkg-buildpackage writes its results into the parent of the source folder and its build
# into debian/, so it runs on a copy (the files git tracks or would track, as they are now)
# in a temporary folder, and the checkout stays clean. The project's tests are skipped
# (nocheck): make test runs them.
# Usage: debian/build-debs.sh OUTDIR
set -euo pipefail
out=${1:?usage: debian/build-debs.sh OUTDIR}
root=$(cd "$(dirname "$0")/.." && pwd)
version=$(cat "$root/VERSION")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/runmon-deb.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
src=$tmp/runmon-$version
mkdir -p "$src" "$out"
# The files git tracks or would track (-z: any name survives; links stay links); outside
# a git checkout, the tree without build folders.
if git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    (cd "$root" && git ls-files -z --cached --others --exclude-standard |
        while IFS= read -r -d '' f; do [ -e "$f" ] || [ -L "$f" ] && printf '%s\0' "$f"; done |
        tar --null --no-recursion -T - -cf -) | tar -xf - -C "$src"
else
    tar -C "$root" --exclude='./build*' --exclude=./node_modules --exclude=./debian/build \
        -cf - . | tar -xf - -C "$src"
fi
(cd "$src" && DEB_BUILD_OPTIONS="nocheck ${DEB_BUILD_OPTIONS:-}" \
    dpkg-buildpackage -us -uc -b -Pnocheck >"$tmp/build.log" 2>&1) || {
    tail -n 60 "$tmp/build.log" >&2
    echo "build-debs: dpkg-buildpackage failed (last lines above)" >&2
    exit 1
}
rm -f "$out"/*.deb "$out"/*.ddeb "$out"/*.changes "$out"/*.buildinfo
find "$tmp" -maxdepth 1 -type f \( -name '*.deb' -o -name '*.ddeb' -o -name '*.changes' \
    -o -name '*.buildinfo' \) -exec mv -t "$out" {} +
cp "$tmp/build.log" "$out/build.log"
ls "$out"/*.deb
