#!/usr/bin/env bash
# The main job on the bundled examples: generate the wrappers, run the fault
# suite on every example agent (buggy and fixed), render each report as HTML
# next to its JSON in .agentidem/reports/examples/<example>/, and end with one table:
# example, agent, expected (buggy/fixed), verdict, findings, report file.
#
#   bash scripts/demo.sh      # short: one line per step, then the table
#   bash scripts/demo.sh -v   # full detail: go test -v and every report's summary
set -euo pipefail
cd "$(dirname "$0")/.."

verbose=0
case "${1:-}" in
-v) verbose=1 ;;
"") ;;
*)
	echo "usage: bash scripts/demo.sh [-v]" >&2
	exit 2
	;;
esac

echo "== 1. generate the wrappers: agentidem-gen ./examples/..."
go run ./cmd/agentidem-gen ./examples/...

out=.agentidem/reports
rm -rf "$out"
mkdir -p "$out"
echo "== 2. run the fault suite of each example (reports in $out/examples/<example>/)"
for pkg in $(go list ./examples/...); do
	name=$(basename "$pkg")
	# Each example's reports land in $out/examples/<example>/: testkit
	# keeps every package's reports in its own directory.
	if [ "$verbose" = 1 ]; then
		AGENTIDEM_REPORT_DIR="$PWD/$out" go test -count=1 -v "./examples/$name"
	elif ! log=$(AGENTIDEM_REPORT_DIR="$PWD/$out" go test -count=1 "./examples/$name" 2>&1); then
		echo "$log"
		exit 1
	else
		echo "   $log"
	fi
done

echo "== 3. render the reports: agentidem-gen report --html"
go build -o .agentidem/agentidem-gen ./cmd/agentidem-gen
pages=0
for f in $(find "$out" -name '*.json' | sort); do
	if [ "$verbose" = 1 ]; then
		echo
		.agentidem/agentidem-gen report --html "${f%.json}.html" "$f"
	elif ! msg=$(.agentidem/agentidem-gen report -q --html "${f%.json}.html" "$f" 2>&1); then
		echo "$msg"
		exit 1
	fi
	pages=$((pages + 1))
done
echo "   $pages HTML pages, one per report"

echo
go run ./internal/demotable "$out"
