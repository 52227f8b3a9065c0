#!/usr/bin/env bash
# python-sdk.sh: the three agents of issue 15's comparison (naive refund with
# retries, keyed refund, ten distinct writes) under the AgentIdem Python SDK
# (test_agent_async) and under agentidem-go (testkit under go test, and
# runtime.Run), per suite and per scenario, with the ratio of wall time per
# suite. The SDK is not vendored here: point AGENTIDEM_PYTHON_SDK at its src/
# directory (a checkout of github.com/AgentIdem-Org/python-sdk; it needs
# pydantic 2). Without it, the script says so and prints the Go side only.
#
#   AGENTIDEM_PYTHON_SDK=~/python-sdk/src bash scripts/bench/python-sdk.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
suites=${SUITES:-200}
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown) on $(nproc 2>/dev/null || echo '?') CPUs"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
if [ -n "${AGENTIDEM_PYTHON_SDK:-}" ] && PYTHONPATH="$AGENTIDEM_PYTHON_SDK" python3 -c 'import agentidem' 2>/dev/null; then
	PYTHONPATH="$AGENTIDEM_PYTHON_SDK" python3 scripts/bench/python_sdk_agents.py "$suites" | grep -o 'measure:.*' >>"$out"
else
	echo "python-sdk.sh: the AgentIdem Python SDK is not importable (set AGENTIDEM_PYTHON_SDK to its src/ directory; it needs python3 >= 3.11 and pydantic 2): Go side only"
fi
# The test binary runs without -v, as a user's go test does (-v gives every
# scenario its subtest). TestMeasureSuite fails when it runs (its TestAgent
# rows fail on the agents with findings): its exit status says nothing.
# It runs twice over one report directory and the second run is measured:
# there, as in a user's second go test, the testkit and TestAgent rows write
# over the report files the first run left (each subtest's name is its own,
# so a single run in a fresh directory makes every file anew, and those rows
# were the "new report file" rows under other names); the rows of a new
# report file still make theirs anew.
bin=$(mktemp -d)
trap 'rm -rf "$out" "$bin"' EXIT
go test -c -o "$bin/testkit.test" ./testkit
for pass in warm measured; do
	(cd testkit && AGENTIDEM_MEASURE_SUITE=1 AGENTIDEM_MEASURE_SUITES="$suites" AGENTIDEM_MEASURE_REPORTS="$bin/reports" "$bin/testkit.test" -test.count 1 -test.run '^TestMeasureSuite$' || true) | grep -o 'measure:.*' >"$bin/$pass"
done
cat "$bin/measured" >>"$out"
awk -F'|' '
{ sub(/^measure: /, "", $1); k = $1 "|" $2; order[++n] = k; sc[k] = $3; med[k] = $4; agent[k] = $1; harness[k] = $2
  if ($2 ~ /python/) py[$1] = $4 }
END {
	printf "%-13s %-28s %9s %13s %12s %12s\n", "agent", "harness", "scenarios", "suite us", "us/scenario", "vs python"
	for (i = 1; i <= n; i++) {
		k = order[i]; r = (agent[k] in py) ? sprintf("%.2fx", med[k] / py[agent[k]]) : "-"
		printf "%-13s %-28s %9d %13.0f %12.1f %12s\n", agent[k], harness[k], sc[k], med[k], med[k] / sc[k], r
	}
	print "(median suite of SUITES; vs python: wall time per suite over the Python SDK'"'"'s; the SDK runs fewer scenarios)"
}' "$out"
