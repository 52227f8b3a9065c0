#!/usr/bin/env bash
# Effects, not executions: the cost of judging repeats. The whole fault suite
# of a two-write agent, judged by count, by the idempotent declaration, and
# by a State snapshot around every write: median ns per suite of 5 runs, and
# the ratio to the count.
set -euo pipefail
cd "$(dirname "$0")/../.."
raw=$(go test -run '^$' -bench '^BenchmarkEffects$' -benchtime 200x -count 5 ./runtime/)
echo "$raw" | awk '
/^BenchmarkEffects\// {
	name=$1; sub(/-[0-9]+$/, "", name); sub(/^BenchmarkEffects\//, "", name)
	for (i = 3; i < NF; i++) {
		if ($(i+1) == "ns/op") ns[name] = ns[name] " " $i
		if ($(i+1) == "allocs/op") al[name] = $i
	}
	if (!(name in seen)) { order[++n] = name; seen[name] = 1 }
}
function median(list,   a, k, i, j, t) {
	k = split(list, a, " ")
	for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
	return (k % 2) ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
}
END {
	base = median(ns["count"])
	printf "%-10s %14s %10s %10s\n", "judged by", "suite (µs)", "ratio", "allocs"
	for (i = 1; i <= n; i++) {
		m = median(ns[order[i]])
		printf "%-10s %14.1f %10.2f %10d\n", order[i], m / 1e3, m / base, al[order[i]]
	}
	print ""
	print "suite (µs) is the median of 5 runs of 200 suites each. Without State no snapshot is taken"
	print "(the recorder holds no judge); with it, one before and one after each write call (shared by"
	print "calls that overlap) and one at the end of each scenario."
}'
