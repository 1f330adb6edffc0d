#!/usr/bin/env bash
# fuzz.sh PKG TARGET FUZZTIME [go test flags…] runs one fuzz target for
# FUZZTIME with one worker. A run that fails with only "context deadline
# exceeded" and writes no failing input under PKG/testdata/fuzz/TARGET is
# Go's fuzzing coordinator racing its own -fuzztime deadline on a busy
# machine (it reads the parent context's error before the child's; seen in
# CI with "execs: 5 (0/sec)"), not a finding: it is run once more, and
# fails only if that run fails too. A written input always fails at once.
set -euo pipefail
pkg=$1 target=$2 fuzztime=$3
shift 3
corpus="$pkg/testdata/fuzz/$target"
count() { { find "$corpus" -type f 2>/dev/null || true; } | wc -l; }
run() { go test "$pkg" -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" -parallel 1 "$@" 2>&1 | tee "$log"; }
log=$(mktemp)
trap 'rm -f "$log"' EXIT
before=$(count)
if run "$@"; then exit 0; fi
if [ "$(count)" != "$before" ] || grep -q 'Failing input written' "$log" || ! grep -q '^    context deadline exceeded$' "$log"; then
	exit 1
fi
echo "fuzz.sh: $target stopped with 'context deadline exceeded' and wrote no input (Go's fuzzing coordinator, at its own deadline); running it once more"
run "$@"
