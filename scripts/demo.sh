#!/usr/bin/env bash
# The main job on the bundled examples: generate the wrappers, run the fault
# suite on every example agent (buggy and fixed), then print each report and
# write its HTML next to the JSON in .agentidem/reports/.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== 1. generate: agentidem-gen ./examples/..."
go run ./cmd/agentidem-gen ./examples/...

echo "== 2. fault suite: go test ./examples/..."
out=.agentidem/reports
rm -rf "$out"
mkdir -p "$out"
AGENTIDEM_REPORT_DIR="$PWD/$out" go test -count=1 ./examples/...

echo "== 3. reports ($out)"
go build -o .agentidem/agentidem-gen ./cmd/agentidem-gen
for f in "$out"/*.json; do
	echo
	if .agentidem/agentidem-gen report --help 2>/dev/null | grep -q -- '--html'; then
		.agentidem/agentidem-gen report --html "${f%.json}.html" "$f"
	else
		.agentidem/agentidem-gen report "$f"
	fi
done
echo
echo "reports: $out/*.json (and *.html)"
