#!/usr/bin/env bash
# audit.sh: agentidem-gen audit's throughput and memory, as a table.
#
# 1. BenchmarkAudit (internal/audit) COUNT times: 10,000 spans of Collector
#    OTLP JSON read and audited per op; median spans/s and MB/s.
# 2. A 1,000,000-span export (N to change it) written by
#    internal/audit/internal/spangen in each format (Collector OTLP JSON, 100
#    spans a line; stdouttrace, a span a line; one duplicated refund every
#    10,000 traces), audited by the agentidem-gen binary under /usr/bin/time:
#    wall and CPU time, spans/s, and peak resident memory.
# The files go to a temporary directory and are removed. Exit status 0
# whatever the figures.
#
#   scripts/bench/audit.sh
#   N=200000 COUNT=3 scripts/bench/audit.sh
set -euo pipefail

cd "$(dirname "$0")/../.."
count=${COUNT:-3}
n=${N:-1000000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown) on $(nproc 2>/dev/null || echo '?') CPUs"

go test -c -o "$tmp/audit.test" ./internal/audit
for _ in $(seq "$count"); do
	"$tmp/audit.test" -test.run '^$' -test.bench '^BenchmarkAudit$' -test.benchmem -test.benchtime 5x
done >"$tmp/bench.txt"
awk '
function median(list,    n, a, i, j, t) {
	n = split(list, a, " ")
	for (i = 2; i <= n; i++) { t = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
	if (n % 2) return a[(n + 1) / 2] + 0
	return (a[n / 2] + a[n / 2 + 1]) / 2
}
/^BenchmarkAudit/ { for (i = 3; i < NF; i++) { if ($(i + 1) == "spans/s") s = s " " $i; if ($(i + 1) == "MB/s") m = m " " $i; if ($(i + 1) == "allocs/op") a = a " " $i } runs++ }
END { printf "\nBenchmarkAudit (%d runs, 10,000 spans per op): %.0f spans/s, %.2f MB/s, %.0f allocs per span (medians)\n", runs, median(s), median(m), median(a) / 10000 }' "$tmp/bench.txt"

go build -o "$tmp/agentidem-gen" ./cmd/agentidem-gen
go build -o "$tmp/spangen" ./internal/audit/internal/spangen
printf "\n%-12s %9s %8s %9s %9s %11s %11s %12s\n" format spans "MB" "wall s" "cpu s" "spans/s" "spans/cpu-s" "peak RSS MB"
for format in otlp stdout; do
	"$tmp/spangen" -n "$n" -format "$format" -o "$tmp/spans.jsonl"
	size=$(($(stat -c %s "$tmp/spans.jsonl") / 1048576))
	if [ -x /usr/bin/time ]; then
		# Exit status 1: the input holds duplicates on purpose.
		/usr/bin/time -f '%e %U %S %M' -o "$tmp/time.txt" "$tmp/agentidem-gen" audit -q "$tmp/spans.jsonl" 2>/dev/null || true
		read -r wall user sys rss < <(tail -n 1 "$tmp/time.txt")
		awk -v f="$format" -v n="$n" -v mb="$size" -v w="$wall" -v u="$user" -v s="$sys" -v r="$rss" \
			'BEGIN { printf "%-12s %9d %8d %9.1f %9.1f %11.0f %11.0f %12.0f\n", f, n, mb, w, u + s, n / w, n / (u + s), r / 1024 }'
	else
		echo "$format: /usr/bin/time is not installed (apt-get install time): no memory figure"
	fi
	rm -f "$tmp/spans.jsonl"
done
