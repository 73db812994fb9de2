#!/usr/bin/env bash
# Install the Debian packages runmon needs, or say exactly how to.
# Usage: .ci/deps.sh [build|test|bench|all]   (default: build)
set -euo pipefail
want=${1:-build}
pkgs=(libcsv-dev libjansson-dev libpcre2-dev libncurses-dev libcurl4-openssl-dev pkg-config)
case "$want" in
  test|all) pkgs+=(libcmocka-dev jq clang clang-format valgrind procps gdb prometheus prometheus-node-exporter prometheus-pushgateway influxdb curl chromium fonts-dejavu-core python3 python3-venv tmux nodejs)
    # The package test (tests/e2e/test_package.sh): build the .debs, lintian, man -l.
    pkgs+=(build-essential debhelper dh-python dpkg-dev lintian man-db groff-base bash-completion)
    # The SLURM test (tests/e2e/test_slurm.sh): a one-node cluster started by the test.
    pkgs+=(slurm-wlm munge) ;;
esac
# make bench: the recorder's peers measured in the same window (bench/run.sh recorder-nogpu),
# strace for its system calls, and perf for where its CPU goes (recorder-turns).
case "$want" in bench|all) pkgs+=(sysstat collectd-core strace linux-perf) ;; esac
[ "$want" = all ] && pkgs+=(mawk)
if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "deps: not a Debian system; make sure these are installed: ${pkgs[*]}" >&2
  exit 0
fi
# The report's 390 px test drives chromium with puppeteer-core (from the npm registry, no
# browser download; package-lock.json pins it). nodejs brings npm on this project's machines.
node_modules() {
  [ "$want" != build ] || return 0
  local root
  root=$(cd "$(dirname "$0")/.." && pwd)
  [ -d "$root/node_modules/puppeteer-core" ] && return 0
  if command -v npm >/dev/null 2>&1; then
    (cd "$root" && npm ci --no-audit --no-fund >&2)
  else
    echo "deps: npm not found; for the report's 390 px test run: npm ci (in $root)" >&2
  fi
}
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then node_modules; exit 0; fi
if [ "$(id -u)" -eq 0 ]; then
  echo "deps: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
else
  echo "deps: missing Debian packages: ${missing[*]}" >&2
  echo "deps: run:  sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
node_modules
