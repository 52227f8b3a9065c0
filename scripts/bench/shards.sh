#!/usr/bin/env bash
# shards.sh: a sharded schedule exploration, 1, 2 and 4 shards as separate
# processes side by side (AGENTIDEM_SHARD=i/n), on the 2520 schedules of four
# dependent calls (examples/invoices, TestMeasureShard). Per shard count: the
# schedules each shard ran, the median wall time of a shard, its schedules/s,
# the wall time until the last shard finished, the aggregate schedules/s and
# the speed-up over one process; then the shards' reports of the last round
# are merged (agentidem-gen report --merge) and the merged schedule count is
# checked against the unsharded one. ROUNDS rounds (default 3), medians.
# Every shard also runs the baseline and the 18 fault scenarios, so their
# cost repeats per shard. On a machine with c cores, expect at most c-fold.
#
#   bash scripts/bench/shards.sh
#   ROUNDS=5 SHARDS='1 2 3 4' bash scripts/bench/shards.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${ROUNDS:-3}
shards=${SHARDS:-1 2 4}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go test -c -o "$tmp/invoices.test" ./examples/invoices
go build -o "$tmp/agentidem-gen" ./cmd/agentidem-gen
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown) on $(nproc 2>/dev/null || echo '?') CPUs"

: >"$tmp/lines"
for r in $(seq "$rounds"); do
	for n in $shards; do
		rm -rf "$tmp/rep.$n"
		t0=$(date +%s.%N)
		pids=()
		for i in $(seq "$n"); do
			shard=""
			[ "$n" -gt 1 ] && shard="$i/$n"
			(cd examples/invoices && AGENTIDEM_MEASURE_SHARD=1 AGENTIDEM_SHARD="$shard" \
				AGENTIDEM_REPORT_DIR="$tmp/rep.$n/$i" "$tmp/invoices.test" -test.run '^TestMeasureShard$' -test.v \
				>"$tmp/out.$n.$i" 2>&1) &
			pids+=($!)
		done
		for p in "${pids[@]}"; do wait "$p"; done
		t1=$(date +%s.%N)
		for i in $(seq "$n"); do
			line=$(grep -o 'measure: shard|.*' "$tmp/out.$n.$i" || { cat "$tmp/out.$n.$i" >&2; exit 1; })
			echo "$n|$(echo "$line" | cut -d'|' -f3,4)|$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')" >>"$tmp/lines"
		done
	done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"

awk -F'|' '
function median(list,   a, k, i, j, t) {
	k = split(list, a, " ")
	for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
	return (k % 2) ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
}
{ if (!($1 in seen)) order[++m] = $1; seen[$1] = 1; sched[$1] = sched[$1] " " $2; wall[$1] = wall[$1] " " $3; total[$1] = total[$1] " " $4; sum[$1] += $2; cnt[$1]++ }
END {
	printf "%-7s %14s %14s %14s %14s %16s %9s\n", "shards", "sched/shard", "shard wall s", "sched/s/shard", "all done s", "sched/s, total", "speed-up"
	for (k = 1; k <= m; k++) {
		n = order[k]; s = median(sched[n]); w = median(wall[n]); tw = median(total[n]); all = sum[n] / (cnt[n] / n)
		if (k == 1) base = all / tw
		printf "%-7s %14d %14.3f %14.0f %14.3f %16.0f %8.2fx\n", n, s, w, s / w, tw, all / tw, (all / tw) / base
	}
	print "(sched/shard, shard wall: medians over shards and rounds; all done: from the first start to the last shard'"'"'s end; every shard also runs the baseline and 18 fault scenarios)"
}' "$tmp/lines"

for n in $shards; do
	[ "$n" -gt 1 ] || continue
	"$tmp/agentidem-gen" report -q --merge "$tmp/merged.$n.json" "$tmp"/rep."$n"/*/examples/invoices/*.json 2>/dev/null
	got=$(grep -c '"kind": "interleaving"' "$tmp/merged.$n.json" || true)
	echo "merged $n shards' reports: $got interleaving scenarios (agentidem-gen report --merge)"
done
