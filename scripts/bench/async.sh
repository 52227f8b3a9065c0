#!/usr/bin/env bash
# Async assertions (testkit.Eventually, ExactlyOne, QuietFor) against a worker
# that emits one event 50ms after the scenario starts: median wall time per
# assertion on virtual time (inside a testing/synctest bubble) and in real
# time (the same calls outside a bubble), and the ratio. Each figure is the
# median of 5 testing.Benchmark runs (TestAsyncBenchmark: synctest.Test needs
# a *testing.T, so a Benchmark function cannot own a bubble).
set -euo pipefail
cd "$(dirname "$0")/../.."
raw=$(AGENTIDEM_ASYNC_BENCH=1 go test -run '^TestAsyncBenchmark$' -count 5 -v ./testkit/)
echo "$raw" | awk '
/^BenchmarkAsync\// {
	name=$1; sub(/^BenchmarkAsync\//, "", name)
	mode=name; sub(/.*\//, "", mode); sub(/\/[a-z]+$/, "", name)
	for (i = 2; i < NF; i++) if ($(i+1) == "ns/op") ns[name "|" mode] = ns[name "|" mode] " " $i
	if (!(name in seen)) { order[++n] = name; seen[name] = 1 }
}
/^--- FAIL/ { failed = 1 }
function median(list,   a, k, i, j, t) {
	k = split(list, a, " ")
	for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
	return (k % 2) ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
}
END {
	if (failed || n == 0) { print "async bench: an assertion failed or nothing ran"; exit 1 }
	printf "%-24s %14s %12s %10s\n", "assertion", "virtual (us)", "real (ms)", "ratio"
	for (i = 1; i <= n; i++) {
		v = median(ns[order[i] "|virtual"]); r = median(ns[order[i] "|real"])
		printf "%-24s %14.1f %12.1f %9.0fx\n", order[i], v / 1e3, r / 1e6, r / v
	}
	print ""
	print "Worker delay 50ms; ExactlyOne waits out its 200ms window; QuietFor(200ms, 1s) waits 200ms"
	print "after the event. Virtual time includes creating the synctest bubble and the worker goroutine."
	print "On virtual time Eventually and ExactlyOne look every 1ms of virtual time (so a second ticket"
	print "fails at once); QuietFor on a Stream sleeps from deadline to deadline (its events carry"
	print "their times). In real time a Stream wakes ExactlyOne and QuietFor on each event; Eventually polls"
	print "every 5ms."
}'
