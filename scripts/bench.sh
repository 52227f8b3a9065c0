#!/usr/bin/env bash
# Prints every benchmark table of the repository: each scripts/bench/*.sh
# runs its Benchmark* functions (several counts, medians) and prints a table.
# Timings never live in pass/fail tests.
set -euo pipefail
cd "$(dirname "$0")/.."
for s in scripts/bench/*.sh; do
	echo "== $s"
	bash "$s"
	echo
done
