#!/usr/bin/env bash
# scripts/bench/idem.sh — idem.Do against a naive check-then-insert, per backend.
#
# Prints one table to stdout: first-call and replay throughput (64 goroutines)
# and the duplicate executions per key when 64 goroutines hit one fresh key at
# once. Memory and SQLite always run; PostgreSQL only when AGENTIDEM_PG_DSN is
# set (source .ci/postgres.sh first). BENCHTIME overrides go test's -benchtime.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
benchtime=${BENCHTIME:-1s}
raw=$(mktemp)
trap 'rm -f "$raw"' EXIT

bench() { # dir pattern label
	(cd "$root/$1" && go test -run '^$' -bench "$2" -benchtime "$benchtime" -count 1 .) |
		awk -v label="$3" '/^Benchmark/ { print label, $0 }' >>"$raw"
}

bench idem '^BenchmarkMemory$' memory
bench idem/sqlite '^BenchmarkSQLite$' sqlite
if [ -n "${AGENTIDEM_PG_DSN:-}" ]; then
	bench idem/postgres '^BenchmarkPostgres$' postgres
	pg_note=""
else
	pg_note="postgres: skipped (AGENTIDEM_PG_DSN is not set; source .ci/postgres.sh)"
fi

echo "idem: Do vs naive check-then-insert ($(nproc) cores, GOMAXPROCS default, -benchtime $benchtime)"
awk '
{
	label = $1; split($2, parts, "/"); kind = parts[2]; impl = parts[3]; sub(/-[0-9]+$/, "", impl)
	key = label "/" impl
	if (!(key in seen)) { seen[key] = 1; order[++n] = key }
	for (i = 3; i < NF; i++) {
		if ($(i + 1) == "ns/op") ns[key "/" kind] = $i
		if ($(i + 1) == "dups/op") dups[key] = $i
	}
}
END {
	printf "%-9s %-6s %16s %16s %22s\n", "backend", "impl", "first ops/s", "replay ops/s", "dups/key (64 at once)"
	for (j = 1; j <= n; j++) {
		k = order[j]; split(k, kp, "/")
		f = ns[k "/first"]; r = ns[k "/replay"]
		printf "%-9s %-6s %16.0f %16.0f %22s\n", kp[1], kp[2], (f > 0 ? 1e9 / f : 0), (r > 0 ? 1e9 / r : 0), dups[k]
	}
}' "$raw"
if [ -n "$pg_note" ]; then echo "$pg_note"; fi
