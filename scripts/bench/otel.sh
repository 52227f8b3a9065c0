#!/usr/bin/env bash
# otel.sh: the cost of a tool call's span in production, as a table.
#
# Runs the benchmarks of the otel module (otel/bench_test.go) COUNT times,
# interleaved: Store.Put of internal/benchtool called directly, inside a span
# started by hand (name, two attributes, error status, End: what an
# instrumented tool pays anyway), and through its generated wrapper with
# agentidemotel.Install (span, keyed digests of identity, entity and
# arguments, call site, status). The tracer provider records every span and
# exports none. Prints median and min ns/op, B/op, allocs/op, and the
# observer's extra cost over the hand-made span. The inactive path (no
# observer) is scripts/bench/core.sh's. Exit status 0 whatever the figures.
#
#   scripts/bench/otel.sh                 # COUNT=5
#   COUNT=11 BENCHTIME=500ms scripts/bench/otel.sh
set -euo pipefail

cd "$(dirname "$0")/../.."
count=${COUNT:-5}
benchtime=${BENCHTIME:-300ms}
raw=${RAW:-$(mktemp)}
bin=$(mktemp -d)/otel.test
echo "(cd otel && go test -c -o $bin .)"
(cd otel && GOFLAGS=-mod=mod go test -c -o "$bin" .)
: >"$raw"
for _ in $(seq "$count"); do
	(cd otel && "$bin" -test.run '^$' -test.bench '^BenchmarkOTel(Direct|HandSpan|Observed)$' \
		-test.benchmem -test.benchtime "$benchtime") >>"$raw"
done
grep -m3 -E '^(goos|goarch|cpu):' "$raw" || true
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown) on $(nproc 2>/dev/null || echo '?') CPUs"

awk -v count="$count" '
function minimum(list,    n, a, i, m) {
	n = split(list, a, " "); m = a[1] + 0
	for (i = 2; i <= n; i++) if (a[i] + 0 < m) m = a[i] + 0
	return m
}
function median(list,    n, a, i, j, t) {
	n = split(list, a, " ")
	for (i = 2; i <= n; i++) { t = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
	if (n % 2) return a[(n + 1) / 2] + 0
	return (a[n / 2] + a[n / 2 + 1]) / 2
}
/^BenchmarkOTel/ {
	name = $1; sub(/^BenchmarkOTel/, "", name); sub(/-[0-9]+$/, "", name)
	for (i = 3; i < NF; i++) {
		if ($(i + 1) == "ns/op") ns[name] = ns[name] " " $i
		if ($(i + 1) == "B/op") bytes[name] = bytes[name] " " $i
		if ($(i + 1) == "allocs/op") allocs[name] = allocs[name] " " $i
	}
	runs[name]++
}
END {
	if (!("HandSpan" in ns) || !("Observed" in ns)) { print "otel.sh: missing results" > "/dev/stderr"; exit 1 }
	h = median(ns["HandSpan"])
	printf "\n%-10s %5s %11s %11s %7s %10s %14s\n", "benchmark", "runs", "ns/op(med)", "ns/op(min)", "B/op", "allocs/op", "vs hand span"
	split("Direct HandSpan Observed", order, " ")
	for (k = 1; k <= 3; k++) {
		b = order[k]; m = median(ns[b])
		printf "%-10s %5d %11.0f %11.0f %7.0f %10.0f %13.2fx\n", b, runs[b], m, minimum(ns[b]), median(bytes[b]), median(allocs[b]), m / h
	}
	o = median(ns["Observed"])
	printf "\nobserver over a hand-made span: +%.0f ns/call median (+%.0f ns on the fastest runs), +%.0f allocs/call\n", o - h, minimum(ns["Observed"]) - minimum(ns["HandSpan"]), median(allocs["Observed"]) - median(allocs["HandSpan"])
}' "$raw"
