package runtime

// realTimeNote returns the report's note when virtual time was asked for
// (testkit.VirtualTime) and no scenario ran on it: only the schedules of
// parallel tool calls run in a bubble, and an agent that makes its calls one
// at a time has none. Its fault scenarios ran on real time as every fault
// scenario does, and a retry's back-off cost its wall time, up to the stall
// bound; the option was silently of no use, and the README's "staggers,
// timeouts and polling cost no wall time" read as if the agent's own waits
// would be virtual (red team rtW #10). Where the baseline showed what a
// bubble cannot host, its note says why already, and this one is not added.
func (s *Suite) realTimeNote(r *Report) string {
	if s.cfg.bubble == nil || s.impure != "" || r.Baseline == nil || !r.BaselineSucceeded {
		return ""
	}
	for _, res := range r.Results {
		if res != nil && res.Clock == ClockVirtual {
			return ""
		}
	}
	return "virtual time was asked for, but no scenario ran on it: only the interleavings of parallel tool calls run in a testing/synctest bubble, and this agent made none; every fault scenario runs on real time, so a back-off, a timeout or a sleep of the agent costs its wall time (a wait longer than StallTimeout stalls its scenario)"
}
