#!/usr/bin/env bash
# core.sh: the cost of a generated wrapper, as a table.
#
# Runs the benchmarks of internal/benchtool (a map insert under a mutex,
# called directly, through its wrapper with no run active, and through its
# wrapper inside runtime.RunTraced) COUNT times with -benchmem and prints,
# per benchmark, the median ns/op, the extra ns over the direct call, the
# fastest run, the median B/op and allocs/op, and the ratio to the direct
# call; then the inactive overhead measured in alternating blocks
# (BenchmarkInactivePaired, median of its per-block differences), and checks
# the targets (inactive: <= 2 ns extra and 0 allocs/op; active: <= 300 ns
# extra and <= 3 allocs/op). Exit status 0 whatever the figures: timings are
# reported, not enforced.
#
#   scripts/bench/core.sh               # COUNT=5
#   COUNT=10 BENCHTIME=2s scripts/bench/core.sh
#   RAW=out.txt scripts/bench/core.sh   # also keep the raw go test output
#   BENCH='Direct|WrapperInactive' COUNT=21 BENCHTIME=200ms scripts/bench/core.sh
#
# On a loaded machine the median moves with the load (the script prints the
# load average); the min column is then the better estimate of the cost.
set -euo pipefail

cd "$(dirname "$0")/../.."
count=${COUNT:-5}
benchtime=${BENCHTIME:-1s}
raw=${RAW:-$(mktemp)}
bench=${BENCH:-Direct|WrapperInactive|WrapperActive|InactivePaired|ActivePaired}

# One test binary, run COUNT times over all three benchmarks, so that the
# rounds interleave and a change of machine load hits them alike.
bin=$(mktemp -d)/benchtool.test
echo "go test -c -o $bin ./internal/benchtool"
go test -c -o "$bin" ./internal/benchtool
echo "$count x: $bin -test.run '^\$' -test.bench '^Benchmark($bench)\$' -test.benchmem -test.benchtime $benchtime"
: >"$raw"
for _ in $(seq "$count"); do
	"$bin" -test.run '^$' -test.bench "^Benchmark($bench)\$" \
		-test.benchmem -test.benchtime "$benchtime" >>"$raw"
done
grep -m3 -E '^(goos|goarch|cpu):' "$raw" || true
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown) on $(nproc 2>/dev/null || echo '?') CPUs"

awk -v count="$count" '
function minimum(list,    n, a, i, m) {
	n = split(list, a, " ")
	m = a[1] + 0
	for (i = 2; i <= n; i++) if (a[i] + 0 < m) m = a[i] + 0
	return m
}
function median(list,    n, a, i, j, t) {
	n = split(list, a, " ")
	for (i = 2; i <= n; i++) {
		t = a[i] + 0
		for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]
		a[j + 1] = t
	}
	if (n % 2) return a[(n + 1) / 2] + 0
	return (a[n / 2] + a[n / 2 + 1]) / 2
}
/^Benchmark/ {
	name = $1
	sub(/^Benchmark/, "", name)
	sub(/-[0-9]+$/, "", name)
	for (i = 3; i < NF; i++) {
		if ($(i + 1) == "ns/op") ns[name] = ns[name] " " $i
		if ($(i + 1) == "B/op") bytes[name] = bytes[name] " " $i
		if ($(i + 1) == "allocs/op") allocs[name] = allocs[name] " " $i
		if ($(i + 1) == "extra-ns/op") paired = paired " " $i
		if ($(i + 1) == "active-extra-ns/op") apaired = apaired " " $i
	}
	runs[name]++
}
END {
	if (!("Direct" in ns)) { print "core.sh: no BenchmarkDirect result" > "/dev/stderr"; exit 1 }
	d = median(ns["Direct"])
	printf "\n%-16s %5s %11s %9s %11s %6s %10s %7s\n", "benchmark", "runs", "ns/op(med)", "extra ns", "ns/op(min)", "B/op", "allocs/op", "ratio"
	split("Direct WrapperInactive WrapperActive", order, " ")  # InactivePaired only reports extra-ns/op
	for (k = 1; k <= 3; k++) {
		b = order[k]
		if (!(b in ns)) continue
		m = median(ns[b]); med_alloc[b] = median(allocs[b]); extra[b] = m - d
		printf "%-16s %5d %11.2f %9.2f %11.2f %6.0f %10.0f %6.2fx\n", b, runs[b], m, m - d, minimum(ns[b]), median(bytes[b]), med_alloc[b], m / d
	}
	printf "\ntargets (median of %d runs):\n", count
	if (paired != "") {
		pe = median(paired)
		printf "  inactive, paired (BenchmarkInactivePaired, alternating blocks, robust to load): extra %.2f ns (target <= 2): %s\n", pe, pe <= 2 ? "met" : "MISSED"
	}
	if ("WrapperInactive" in ns) printf "  inactive: extra %.2f ns (target <= 2), %d allocs/op (target 0): %s\n", extra["WrapperInactive"], med_alloc["WrapperInactive"], (extra["WrapperInactive"] <= 2 && med_alloc["WrapperInactive"] == 0) ? "met" : "MISSED"
	if (apaired != "") {
		ae = median(apaired)
		printf "  active, paired (BenchmarkActivePaired, alternating blocks, robust to load): extra %.2f ns (target <= 300): %s\n", ae, ae <= 300 ? "met" : "MISSED"
	}
	if ("WrapperActive" in ns) printf "  active:   extra %.2f ns (target <= 300), %d allocs/op (target <= 3): %s\n", extra["WrapperActive"], med_alloc["WrapperActive"], (extra["WrapperActive"] <= 300 && med_alloc["WrapperActive"] <= 3) ? "met" : "MISSED"
}' "$raw"
