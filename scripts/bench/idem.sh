#!/usr/bin/env bash
# idem.sh: idem.Do against a naive check-then-insert, per backend, as a table.
#
# For each backend (memory, SQLite, and PostgreSQL when AGENTIDEM_PG_DSN is
# set: source .ci/postgres.sh first) it runs the benchmarks of
# idemtest.Benchmarks COUNT times and prints the median throughput of first
# calls on fresh keys and of replays of one completed key (64 goroutines
# each), and the duplicate executions per key when 64 goroutines hit one
# fresh key at once (mean over all rounds: 0 for idem; 63 means every
# goroutine ran the work). With PostgreSQL it also prints the wait latency: how
# long a call waiting for a key another call holds takes to return after the
# holder's work ends, polling alone (as before LISTEN/NOTIFY; the default 50ms
# poll interval) vs woken by NOTIFY (WAITX iterations, default 20x, of work
# spread over 50-150ms). Exit status 0 whatever the figures.
#
#   scripts/bench/idem.sh                      # COUNT=3 BENCHTIME=1s
#   COUNT=5 BENCHTIME=2s scripts/bench/idem.sh
#   RAW=out.txt scripts/bench/idem.sh          # also keep the raw go test output
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
count=${COUNT:-3}
benchtime=${BENCHTIME:-1s}
raw=${RAW:-$(mktemp)}
: >"$raw"

bench() { # dir pattern label
	echo "go test -run '^\$' -bench '$2' -benchtime $benchtime -count $count ./$1" >&2
	(cd "$root/$1" && go test -run '^$' -bench "$2" -benchtime "$benchtime" -count "$count" .) |
		awk -v label="$3" '/^Benchmark/ { print label, $0 }' >>"$raw"
}

bench idem '^BenchmarkMemory$' memory
bench idem/sqlite '^BenchmarkSQLite$' sqlite
pg_note=""
waitraw=$(mktemp)
if [ -n "${AGENTIDEM_PG_DSN:-}" ]; then
	bench idem/postgres '^BenchmarkPostgres$' postgres
	waitx=${WAITX:-20x}
	echo "go test -run '^\$' -bench '^BenchmarkPostgresWait$' -benchtime $waitx -count $count ./idem/postgres" >&2
	(cd "$root/idem/postgres" && go test -run '^$' -bench '^BenchmarkPostgresWait$' -benchtime "$waitx" -count "$count" .) |
		grep '^Benchmark' >"$waitraw"
	awk '{ print "postgres-wait", $0 }' "$waitraw" >>"$raw"
else
	pg_note="postgres: skipped (AGENTIDEM_PG_DSN is not set; source .ci/postgres.sh)"
fi

echo "idem: Do vs naive check-then-insert; $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); median of $count, -benchtime $benchtime"
awk '
function median(list,   v, n, i, j, t) {
	n = split(list, v, " ")
	for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
	if (n == 0) return 0
	return (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
$1 == "postgres-wait" { next }
{
	label = $1; split($2, parts, "/"); kind = parts[2]; impl = parts[3]; sub(/-[0-9]+$/, "", impl)
	key = label "/" impl
	if (!(key in seen)) { seen[key] = 1; order[++n] = key }
	for (i = 3; i < NF; i++) {
		if ($(i + 1) == "ns/op") ns[key "/" kind] = ns[key "/" kind] " " $i
		if ($(i + 1) == "dups/op") { dsum[key] += $i * $3; dn[key] += $3 }
	}
}
END {
	printf "%-9s %-6s %14s %14s %24s\n", "backend", "impl", "first ops/s", "replay ops/s", "dups/key, 64 at once"
	for (j = 1; j <= n; j++) {
		k = order[j]; split(k, kp, "/")
		f = median(ns[k "/first"]); r = median(ns[k "/replay"])
		d = dn[k] ? sprintf("%.2f (%d keys)", dsum[k] / dn[k], dn[k]) : "-"
		printf "%-9s %-6s %14.0f %14.0f %24s\n", kp[1], kp[2], (f > 0 ? 1e9 / f : 0), (r > 0 ? 1e9 / r : 0), d
	}
}' "$raw"
if [ -n "$pg_note" ]; then echo "$pg_note"; fi
if [ -s "$waitraw" ]; then
	echo
	echo "postgres: wait latency after the holder finishes (median of $count runs of ${WAITX:-20x}; default poll interval 50ms)"
	awk '
function median(list,   v, n, i, j, t) {
	n = split(list, v, " ")
	for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
	if (n == 0) return 0
	return (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
{
	split($1, parts, "/"); mode = parts[2]; sub(/-[0-9]+$/, "", mode)
	if (!(mode in seen)) { seen[mode] = 1; order[++n] = mode }
	for (i = 2; i < NF; i++) {
		if ($(i + 1) == "wake-ms/op") mean[mode] = mean[mode] " " $i
		if ($(i + 1) == "wake-max-ms") worst[mode] = worst[mode] " " $i
	}
}
END {
	printf "%-8s %16s %16s\n", "waiter", "mean wake ms", "max wake ms"
	for (j = 1; j <= n; j++) { m = order[j]; printf "%-8s %16.2f %16.2f\n", m, median(mean[m]), median(worst[m]) }
	if (("poll" in seen) && ("notify" in seen) && median(mean["notify"]) > 0)
		printf "notify wakes %.1fx sooner than polling (mean)\n", median(mean["poll"]) / median(mean["notify"])
}' "$waitraw"
fi
rm -f "$waitraw"
