#!/usr/bin/env bash
# The scheduler: time to explore every schedule of a batch of four dependent
# calls (target < 1 s), on real time (the default) and on virtual time
# (testkit.VirtualTime), schedules per second, and for each seeded order bug of
# examples/invoices the number of schedules run until its finding showed,
# next to whether the listed/reversed/lexicographic heuristic (6 schedules)
# finds it. Medians of 5 runs. The measurement lives in a test
# (TestMeasureSchedules) because testing/synctest bubbles need a *testing.T;
# it asserts nothing about time.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=$(for i in 1 2 3 4 5; do
	AGENTIDEM_MEASURE=1 go test -count=1 -v -run '^TestMeasureSchedules$' ./examples/invoices/ | grep -o 'measure:.*'
done)
echo "$out" | awk -F'|' '
function median(list,   a, k, i, j, t) {
	k = split(list, a, " ")
	for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
	return (k % 2) ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
}
$1 == "measure: explore" { if (!($2 in n)) order[++m] = $2; n[$2] = $3; wall[$2] = wall[$2] " " $4 }
$1 == "measure: bug" { if (!($2 in code)) border[++bm] = $2; code[$2] = $3; found[$2] = $4; total[$2] = $5; heur[$2] = $6 }
END {
	printf "%-36s %10s %12s %14s\n", "exploration", "schedules", "wall (s)", "schedules/s"
	for (i = 1; i <= m; i++) { w = median(wall[order[i]]); printf "%-36s %10d %12.3f %14.0f\n", order[i], n[order[i]], w, n[order[i]] / w }
	print "(wall: the whole suite of the agent, its 18 fault scenarios included; median of 5)"
	print ""
	printf "%-44s %-30s %12s %10s %18s\n", "seeded order bug", "finding", "found at #", "explored", "6-schedule heur."
	for (i = 1; i <= bm; i++) { b = border[i]; printf "%-44s %-30s %12d %10d %18s\n", b, code[b], found[b], total[b], heur[b] }
}'
