package render

import (
	"regexp"
	"strings"
)

// scheduleAlt matches the tail that a schedule's replay line carries: the
// AGENTIDEM_SCHEDULE alternative, in parentheses, which bash cannot run.
var scheduleAlt = regexp.MustCompile(` \(or: (AGENTIDEM_SCHEDULE='[^']*')\)$`)

// shellCommand is what the copy button copies: the replay line as a command
// bash runs as it is. A schedule's line "go test -run ... (or:
// AGENTIDEM_SCHEDULE='s0s1f0f1')" becomes "AGENTIDEM_SCHEDULE='s0s1f0f1'
// go test -run ...", which runs that schedule alone; any other line is
// unchanged.
func shellCommand(replay string) string {
	m := scheduleAlt.FindStringSubmatchIndex(replay)
	if m == nil {
		return replay
	}
	return replay[m[2]:m[3]] + " " + strings.TrimSpace(replay[:m[0]])
}
