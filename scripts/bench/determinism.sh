#!/usr/bin/env bash
# Same agent, same test, same verdict: runs the whole fault suite of two
# agents with parallel calls RUNS times each (default 100) and prints the
# number of distinct finding sets (code, scenario, ops of every finding).
# It must be 1 for both.
#   - invoices: createInvoice and attachInvoice dispatched in one turn
#     against an API that refuses to attach to an unknown invoice.
#   - shop: two quotes over HTTP in parallel, then an order retried without
#     a key (an httptest server, http.DefaultClient).
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${RUNS:-100}
printf '%-44s %6s %14s %10s\n' "agent" "runs" "distinct sets" "seconds"
for spec in "examples/invoices TestDependencyVerdictIsTheSameEveryRun" "examples/shop TestVerdictIsTheSameEveryRun"; do
	set -- $spec
	start=$(date +%s.%N)
	out=$(AGENTIDEM_RUNS=$runs go test -count=1 -run "^$2\$" -v "./$1/" 2>&1) || { echo "$out"; exit 1; }
	end=$(date +%s.%N)
	line=$(echo "$out" | grep -o '[a-z ]*: [0-9]* runs, [0-9]* distinct finding sets' | head -1)
	name=${line%%:*}
	n=$(echo "$line" | sed -E 's/.* ([0-9]+) distinct.*/\1/')
	printf '%-44s %6s %14s %10.1f\n' "$1 (${name# })" "$runs" "$n" "$(echo "$end - $start" | bc)"
done
