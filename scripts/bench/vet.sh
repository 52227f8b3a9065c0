#!/usr/bin/env bash
# Speed of agentidem-vet under go vet, against the default go vet suite, on
# one real module (default miniflux.app/v2, fetched into the module cache
# with go mod download and copied to a temp dir; nothing is committed).
#
# go vet caches clean results, so every timed run starts from a copy of the
# same build cache, warmed by go build (compiled packages) but not by vet:
# both sides analyze every package and its dependencies.
#
#   VET_BENCH_MODULE=module@version VET_BENCH_RUNS=5 scripts/bench/vet.sh
#
# VET_BENCH_EXCLUDE is an extended regexp of package paths to leave out on
# both sides (packages that need C headers absent here), e.g. for the
# largest module of analyzer/PRECISION.md:
#
#   VET_BENCH_MODULE=github.com/matrix-org/dendrite@v0.13.8 \
#   VET_BENCH_EXCLUDE='/build/gobind|/clientapi$' scripts/bench/vet.sh
#
# VET_BENCH_MODULE=examples vets this repository's bundled examples
# (./examples/..., in place, nothing fetched): agents that declare ops, so
# every analyzer runs, and the standard library beneath them, summarised
# for facts as under any go vet. BEFORE=<git revision> adds agentidem-vet
# built at that revision, alternated with the others in each run:
#
#   VET_BENCH_MODULE=examples BEFORE=67af968 VET_BENCH_RUNS=5 scripts/bench/vet.sh
set -euo pipefail
module=${VET_BENCH_MODULE:-miniflux.app/v2@v2.3.5}
runs=${VET_BENCH_RUNS:-3}
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
cleanup() {
	if [ -n "${BEFORE:-}" ]; then git -C "$repo" worktree remove --force "$work/before" >/dev/null 2>&1 || true; fi
	chmod -R u+w "$work" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

(cd "$repo" && go build -o "$work/agentidem-vet" ./cmd/agentidem-vet)
if [ -n "${BEFORE:-}" ]; then
	git -C "$repo" worktree add --detach "$work/before" "$BEFORE" >/dev/null 2>&1
	(cd "$work/before" && go build -o "$work/agentidem-vet-before" ./cmd/agentidem-vet)
fi
export GOWORK=off GOFLAGS=-buildvcs=false
if [ "$module" = examples ]; then
	cd "$repo"
	mapfile -t pkgs < <(go list ./examples/... | grep -Ev "${VET_BENCH_EXCLUDE:-^$}")
else
	dir=$(go mod download -json "$module" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
	cp -r "$dir" "$work/src"
	chmod -R u+w "$work/src"
	cd "$work/src"
	go mod download
	mapfile -t pkgs < <(go list ./... | grep -Ev "${VET_BENCH_EXCLUDE:-^$}")
fi
GOCACHE="$work/base" go build "${pkgs[@]}" >/dev/null
# Compile the test variants too (go vet checks them); run nothing.
GOCACHE="$work/base" go test -vet=off -exec=true -run='^$' "${pkgs[@]}" >/dev/null

# run ARGS...: time one go vet from a fresh copy of the warm cache; its
# output is kept in $work/out.txt (VET_BENCH_OUT=file keeps agentidem-vet's).
run() {
	rm -rf "$work/run"
	cp -a "$work/base" "$work/run"
	local start end
	start=$(date +%s.%N)
	GOCACHE="$work/run" go vet "$@" "${pkgs[@]}" >"$work/out.txt" 2>&1 || true
	end=$(date +%s.%N)
	echo "$end - $start" | bc
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

default=()
ours=()
before=()
for _ in $(seq "$runs"); do
	default+=("$(run)")
	ours+=("$(run -vettool="$work/agentidem-vet")")
	if [ -n "${VET_BENCH_OUT:-}" ]; then cp "$work/out.txt" "$VET_BENCH_OUT"; fi
	if [ -n "${BEFORE:-}" ]; then before+=("$(run -vettool="$work/agentidem-vet-before")"); fi
done
d=$(printf '%s\n' "${default[@]}" | median)
o=$(printf '%s\n' "${ours[@]}" | median)
npkg=${#pkgs[@]}

echo "go vet on $module ($npkg packages), median of $runs runs, compile-warm vet-cold cache"
echo
printf '| %-40s | %10s |\n' "tool" "seconds"
printf '|%s|%s|\n' "------------------------------------------" "------------"
printf '| %-40s | %10.2f |\n' "go vet (default suite)" "$d"
printf '| %-40s | %10.2f |\n' "go vet -vettool=agentidem-vet" "$o"
if [ -n "${BEFORE:-}" ]; then
	printf '| %-40s | %10.2f |\n' "go vet -vettool=agentidem-vet ($BEFORE)" "$(printf '%s\n' "${before[@]}" | median)"
fi
echo
printf 'ratio agentidem-vet / default: %.2f (target <= 1.00)\n' "$(echo "$o / $d" | bc -l)"
