#!/usr/bin/env bash
# e2e-packages.sh [NAME…] prints the end-to-end packages but the NAMEs
# (e.g. generative, which make test-e2e runs beside the others: its
# sequences wait on the periodic audit most of the time), longest first,
# so that go test's two lanes (-p, the cores) end together instead of one
# long package running alone at the end (times of a fresh-clone CI run, in
# the closing notes of issue 28); the rest follow in go list's order.
set -euo pipefail
cd "$(dirname "$0")/.."
first=(realworld generative callcount policy audit reliability ha node webhook kinds hatls failures autoscaler)
module=$(go list -m)
skip=" $* "
for p in "${first[@]}"; do [[ $skip == *" $p "* ]] || echo "./test/e2e/$p"; done
go list ./test/e2e/... | while read -r pkg; do
	rel=${pkg#"$module"/test/e2e/}
	[[ " ${first[*]} " == *" $rel "* || $skip == *" $rel "* ]] || echo "./test/e2e/$rel"
done
