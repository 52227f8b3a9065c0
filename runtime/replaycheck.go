package runtime

import (
	"fmt"
	"strconv"
	"strings"
)

// replayMismatch says how a replayed schedule does not fit the rounds of
// parallel calls the agent made, naming both shapes, or "" when it fits.
// (A schedule with fewer rounds, or another number of calls in a round, is
// refused while it runs, by fixedChooser; one with more rounds than the
// agent made is found here, after the run.)
func replayMismatch(sched Schedule, made []roundShape) string {
	if len(sched.Rounds) == len(made) {
		return ""
	}
	return fmt.Sprintf("schedule %s does not fit this agent: it has %s, the agent made %s; the agent changed since the schedule was printed: run without AGENTIDEM_SCHEDULE (or testkit.Replay) to explore its schedules again",
		sched, scheduleShape(sched), madeShape(made))
}

// scheduleShape describes a schedule's rounds: "4 rounds of 2, 3, 2 and 2
// calls".
func scheduleShape(s Schedule) string {
	sizes := make([]int, len(s.Rounds))
	for i, r := range s.Rounds {
		sizes[i] = len(r) / 2
	}
	return roundsWords(sizes)
}

func madeShape(made []roundShape) string {
	sizes := make([]int, len(made))
	for i, r := range made {
		sizes[i] = len(r.labels)
	}
	return roundsWords(sizes)
}

func roundsWords(sizes []int) string {
	if len(sizes) == 0 {
		return "no round of parallel calls"
	}
	parts := make([]string, len(sizes))
	for i, n := range sizes {
		parts[i] = strconv.Itoa(n)
	}
	list := parts[0]
	if len(parts) > 1 {
		list = strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
	}
	return fmt.Sprintf("%s of %s calls", countNoun(len(sizes), "round"), list)
}
