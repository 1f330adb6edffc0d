#!/usr/bin/env bash
# Prints the end-to-end packages longest first, so that go test's two
# lanes (-p, the cores) end together instead of one long package running
# alone at the end (times of a fresh-clone CI run, in the closing notes of
# issue 28); the rest follow in go list's order.
set -euo pipefail
cd "$(dirname "$0")/.."
first=(realworld generative callcount policy audit reliability ha node webhook kinds hatls failures autoscaler)
module=$(go list -m)
for p in "${first[@]}"; do echo "./test/e2e/$p"; done
go list ./test/e2e/... | while read -r pkg; do
	rel=${pkg#"$module"/test/e2e/}
	[[ " ${first[*]} " == *" $rel "* ]] || echo "./test/e2e/$rel"
done
