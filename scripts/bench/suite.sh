#!/usr/bin/env bash
# Whole fault suite for an agent with W writes: wall time per suite (median of
# 5 runs), scenarios per second, and agent runs per suite next to the
# AgentIdem Python SDK's 2W+3.
set -euo pipefail
cd "$(dirname "$0")/../.."
raw=$(go test -run '^$' -bench '^BenchmarkSuite$' -benchtime 200x -count 5 ./testkit/)
echo "$raw" | awk '
/^BenchmarkSuite\// {
	name=$1; sub(/-[0-9]+$/, "", name); sub(/^BenchmarkSuite\//, "", name)
	for (i = 3; i < NF; i++) {
		if ($(i+1) == "ns/op") ns[name] = ns[name] " " $i
		if ($(i+1) == "agent-runs/suite") runs[name] = $i
		if ($(i+1) == "python-sdk-runs/suite") py[name] = $i
		if ($(i+1) == "scenarios/suite") sc[name] = $i
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
	printf "%-10s %10s %12s %14s %12s %16s %10s\n", "agent", "scenarios", "suite (ms)", "scenarios/s", "agent runs", "python 2W+3 runs", "allocs"
	for (i = 1; i <= n; i++) {
		m = median(ns[order[i]]) / 1e6
		printf "%-10s %10d %12.3f %14.0f %12d %16d %10d\n", order[i], sc[order[i]], m, sc[order[i]] / (m / 1000), runs[order[i]], py[order[i]], al[order[i]]
	}
	print ""
	print "suite (ms) is the median of 5 runs of 200 suites each; target for writes=10: < 20 ms."
	print "Extra agent runs over 2W+3: a crash_restart per write (the write runs, the worker dies,"
	print "the invocation is delivered again: 2 runs each) and concurrent duplicate delivery in lockstep,"
	print "which is what catches check-then-act across deliveries."
}'
