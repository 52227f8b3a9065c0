#!/usr/bin/env bash
# wakeups.sh: why a suite takes longer with GOMAXPROCS above 1 on a small
# machine. The ten-write agent's suite under runtime.Run (TestMeasureWakeups,
# SUITES of them, default 300), under each GOMAXPROCS of PROCS ("1
# default" unless given; default: GOMAXPROCS unset, as in a user's go test):
#
# 1. untraced: the wall time of each suite, its 10th, 50th and 90th
#    percentiles;
# 2. traced (go test -trace, which slows every suite by about a tenth): the
#    suites grouped by how many times, while each ran, the Go scheduler
#    started an idle processor (a P going from idle to running: a thread
#    woken with a system call, to look for work to steal), with the median
#    suite of each group and the share of its suites in which the
#    goroutine running them changed processor; and how long a processor
#    started for nothing (no goroutine ran on it) by a thread woken from
#    sleep stayed up: the time that thread took to be scheduled, find no
#    work and give up;
# 3. traced: per suite, the time during which no goroutine ran at all, and
#    the time goroutines made ready waited for a processor, summed. What
#    the suite takes with two processors beyond these, against one, is
#    not spent waiting for the scheduler: the same code runs slower (the
#    futex calls of the wake-ups themselves, the woken thread taking the
#    scheduler's lock, a goroutine moved to a processor whose cache is
#    cold).
#
# Every goroutine the harness starts or wakes (an invocation's, a Setup's, a
# gated call's) makes the Go runtime wake an idle processor's thread if one
# is idle and none is already spinning; on a virtual machine that thread
# runs tens of microseconds later, finds nothing, and sleeps again, and the
# next hand-off wakes it again. A suite during which it was never started
# takes as long as with GOMAXPROCS=1.
#
#   bash scripts/bench/wakeups.sh
#   PROCS="1 2 4" SUITES=500 bash scripts/bench/wakeups.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
suites=${SUITES:-300}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go test -c -o "$tmp/testkit.test" ./testkit
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown) on $(nproc 2>/dev/null || echo '?') CPUs"
echo "the ten-write suite under runtime.Run, $suites suites per line"
printf "%-8s %-22s %8s %8s %10s %10s %10s %9s\n" "procs" "run" "suites" "share" "p10 us" "median us" "p90 us" "moved"
for p in ${PROCS:-1 default}; do
	env=(-u GOMAXPROCS)
	if [ "$p" != default ]; then env=(GOMAXPROCS="$p"); fi
	(cd testkit && env "${env[@]}" AGENTIDEM_MEASURE_WAKEUPS=1 AGENTIDEM_MEASURE_SUITES="$suites" \
		"$tmp/testkit.test" -test.run '^TestMeasureWakeups$') >"$tmp/plain.txt"
	(cd testkit && env "${env[@]}" AGENTIDEM_MEASURE_WAKEUPS=1 AGENTIDEM_MEASURE_SUITES="$suites" \
		"$tmp/testkit.test" -test.run '^TestMeasureWakeups$' -test.trace "$tmp/trace.out") >/dev/null
	go tool trace -d=parsed "$tmp/trace.out" 2>/dev/null | grep -E '^M=.* (Log|StateTransition) ' >"$tmp/events.txt" || true
	awk -v p="$p" -v plain="$tmp/plain.txt" '
	function pct(a, n, q,   i) { i = int(n * q); if (i >= n) i = n - 1; return a[i + 1] }
	function sortn(a, n,   i, j, t) { for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t } }
	BEGIN {
		while ((getline line < plain) > 0) if (line ~ /^wakeups: suite-us /) { split(line, f, " "); u[++nu] = f[3] + 0 }
		sortn(u, nu)
		if (nu > 0) printf "%-8s %-22s %8d %8s %10.0f %10.0f %10.0f\n", p, "untraced", nu, "", pct(u, nu, 0.1), pct(u, nu, 0.5), pct(u, nu, 0.9)
	}
	{
		t = ""
		for (i = 1; i <= NF; i++) if ($i ~ /^Time=/) { t = substr($i, 6) + 0; break }
	}
	/ Log / && /Category="agentidem-suite"/ {
		if (/Message="start"/) {
			in_suite = 1; start = t; starts = 0; moves = 0; split($3, f, "="); harness = f[2]
			still = 0; waited = 0; since = nrun == 0 ? t : -1
		} else if (/Message="end"/ && in_suite) {
			in_suite = 0
			d = (t - start) / 1000
			if (since >= 0) still += t - since
			stills[++nsuites] = still / 1000; waits[nsuites] = waited / 1000
			b = starts == 0 ? "0" : (starts < 5 ? "1-4" : (starts < 20 ? "5-19" : "20+"))
			n[b]++; all++
			times[b, n[b]] = d
			if (moves > 0) moved[b]++
		}
		next
	}
	/ StateTransition / && /ProcID=/ {
		match($0, /ProcID=[0-9]+/); id = substr($0, RSTART + 7, RLENGTH - 7)
		if (/Idle->Running/) { if (in_suite) starts++; up[id] = t; ran[id] = 0 }
		else if (/Running->Idle/ && (id in up)) {
			# A start that ran no goroutine: the woken thread found
			# nothing; its time up is how long it took to get there.
			if (!ran[id]) idle[++nidle] = (t - up[id]) / 1000
			delete up[id]
		}
		next
	}
	/ StateTransition / && /GoID=/ {
		# The goroutines running: while none runs, the suite waits on
		# nothing but the scheduler and the machine (still); a goroutine
		# made ready waits until a processor runs it (waited).
		match($0, /GoID=[0-9]+ [A-Za-z]+->[A-Za-z]+/)
		split(substr($0, RSTART + 5, RLENGTH - 5), tr, /[ >-]+/)
		g = tr[1]; before = nrun
		if (tr[3] == "Running") { if (!(g in running)) { running[g] = 1; nrun++ } }
		else if (tr[2] == "Running" && (g in running)) { delete running[g]; nrun-- }
		if (tr[3] == "Runnable") ready[g] = t
		else if (tr[3] == "Running" && (g in ready)) { if (in_suite) waited += t - ready[g]; delete ready[g] }
		if (in_suite && before > 0 && nrun == 0) since = t
		else if (in_suite && before == 0 && nrun > 0 && since >= 0) { still += t - since; since = -1 }
	}
	/ StateTransition / && /GoID=/ && /->Running/ {
		split($2, f, "="); ran[f[2]] = 1
		# The harness goroutine (the one logging the suites) running
		# on another processor than last time: it moved.
		match($0, /GoID=[0-9]+/)
		if (substr($0, RSTART + 5, RLENGTH - 5) == harness) {
			if (in_suite && last != "" && last != f[2]) moves++
			last = f[2]
		}
	}
	END {
		split("0 1-4 5-19 20+", order, " ")
		for (k = 1; k <= 4; k++) {
			b = order[k]
			if (!(b in n)) continue
			delete a
			for (i = 1; i <= n[b]; i++) a[i] = times[b, i]
			sortn(a, n[b])
			printf "%-8s %-22s %8d %7.0f%% %10.0f %10.0f %10.0f %8.0f%%\n", p, "traced, " b " P starts", n[b], 100 * n[b] / all, pct(a, n[b], 0.1), pct(a, n[b], 0.5), pct(a, n[b], 0.9), 100 * moved[b] / n[b]
		}
		if (nsuites > 0) {
			sortn(stills, nsuites); sortn(waits, nsuites)
			printf "%-8s %-22s %8d %8s %10.0f %10.0f %10.0f\n", p, "no goroutine running", nsuites, "", pct(stills, nsuites, 0.1), pct(stills, nsuites, 0.5), pct(stills, nsuites, 0.9)
			printf "%-8s %-22s %8d %8s %10.0f %10.0f %10.0f\n", p, "ready, not yet running", nsuites, "", pct(waits, nsuites, 0.1), pct(waits, nsuites, 0.5), pct(waits, nsuites, 0.9)
		}
		# Up for 10 us or less: a thread that was running already took
		# the processor; longer: one woken from sleep.
		delete a; nslow = 0
		for (i = 1; i <= nidle; i++) if (idle[i] > 10) a[++nslow] = idle[i]
		if (nslow > 0) {
			sortn(a, nslow)
			printf "%-8s %-22s %8d %7.0f%% %10.0f %10.0f %10.0f\n", p, "P up >10us for nothing", nslow, 100 * nslow / nidle, pct(a, nslow, 0.1), pct(a, nslow, 0.5), pct(a, nslow, 0.9)
		}
	}' "$tmp/events.txt"
done
echo "(P starts: times the Go scheduler started an idle processor (P idle to running in the execution trace) while"
echo " the suite ran; with one processor there is none to start. Traced suites take about a tenth longer. P up >10us"
echo " for nothing: of the starts during the whole run after which no goroutine ran on that processor before it was"
echo " idle again, those up for more than 10 us (the share: of all such starts), and how long: the time a thread woken"
echo " from sleep took to run, find no work and give up. The others were taken by a thread already running."
echo " no goroutine running: of each traced suite, the time during which no goroutine ran on any processor;"
echo " ready, not yet running: the sum over the suite of the time each goroutine made ready waited for a processor"
echo " (on a harness that runs one thing at a time, most of it is the suite waiting too).)"
echo "(moved: the share of the group's suites in which the goroutine running them (go test's) ran on another"
echo " processor than the one before at least once.)"
