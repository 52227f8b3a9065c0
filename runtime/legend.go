package runtime

import (
	"fmt"
	"strconv"
	"strings"
)

// legend names the calls a schedule numbers, round by round:
// "s0 = createInvoice#1, s1 = attachInvoice#1", rounds after the first
// prefixed "round 2: " and separated by "; ". A schedule reads s<i> and f<i>
// as the start and the finish of call i of its round. It is "" for a run
// with no round of two calls or more.
func (s *scheduler) legend() string {
	if s == nil {
		return ""
	}
	s.mu.Lock()
	rounds := s.rounds
	s.mu.Unlock()
	var parts []string
	for r, calls := range rounds {
		names := make([]string, len(calls))
		for i, c := range calls {
			names[i] = fmt.Sprintf("s%d = %s", i, c.legendName())
		}
		part := strings.Join(names, ", ")
		if len(rounds) > 1 {
			part = fmt.Sprintf("round %d: %s", r+1, part)
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, "; ")
}

// legendName is how a legend names a call: op#k, with the delivery in
// front when it is not the first ("2:op#k", the call's trace id).
func (c *Call) legendName() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	name := c.op.Name + "#" + strconv.Itoa(int(c.rec.Occurrence))
	if c.inv.n > 1 {
		name = strconv.Itoa(c.inv.n) + ":" + name
	}
	return name
}

// withLegend is a schedule's printable form followed by its legend:
// "s0s1f0f1 (s0 = createInvoice#1, s1 = attachInvoice#1)".
func withLegend(schedule, legend string) string {
	if legend == "" {
		return schedule
	}
	return schedule + " (" + legend + ")"
}

// explainOrder tells, in each ordering finding of a schedule's result,
// the schedule with its legend and what the dependent call did in it: the
// error it returned, or that it returned none.
func explainOrder(res *Result, legend string) {
	byID := map[string]*Operation{}
	if res.Trace != nil {
		for i := range res.Trace.Ops {
			byID[res.Trace.Ops[i].ID] = &res.Trace.Ops[i]
		}
	}
	sched := withLegend(res.Schedule, legend)
	for i := range res.Findings {
		f := &res.Findings[i]
		switch f.Code {
		case CodeDependentCallsConcurrent:
			if len(f.Calls) != 2 || byID[f.Calls[1]] == nil {
				f.Message += fmt.Sprintf(". Schedule %s", sched)
				continue
			}
			dep, pre := byID[f.Calls[1]], byID[f.Calls[0]]
			did := fmt.Sprintf("%s started before %s had returned and returned no error", dep.Name, pre.Name)
			switch {
			case dep.Error != "":
				did = fmt.Sprintf("%s failed: %s", dep.Name, dep.Error)
			case dep.Status == StatusRunning:
				did = fmt.Sprintf("%s had not returned when the run ended", dep.Name)
			}
			f.Message += fmt.Sprintf(". In schedule %s, %s", sched, did)
		case CodeConcurrentWritesEntity:
			f.Message += fmt.Sprintf(". Schedule %s", sched)
		}
	}
}

// String says in plain words what Interleavings explored, for the test log.
func (e *Exploration) String() string {
	if e == nil {
		return "no schedule explored"
	}
	rounds := countNoun(e.Rounds, "round")
	if e.Shard != nil && e.Hazard == "" && e.Explored > 0 {
		whole := *e
		whole.Shard, whole.Explored, whole.eager = nil, e.Shard.Planned, 0
		s := "Sharded, " + e.Shard.String() + ". All shards together: " + whole.String()
		if e.eager > 0 {
			s += strings.Replace(e.eagerWords(), " Besides,", " Besides, in this shard,", 1)
		}
		return s
	}
	switch {
	case e.Hazard != "":
		return fmt.Sprintf("Scheduling stopped after %s: %s", countNoun(e.Explored, "schedule"), e.Hazard)
	case e.Explored == 0:
		return "No two calls were ever in flight together: there is no order to explore."
	case e.Strategy == "replay":
		return "Ran the one schedule asked for (testkit.Replay or AGENTIDEM_SCHEDULE)."
	case e.Exhaustive:
		// The count is of the orders that ran: it was the space's, which
		// the listed schedule's rounds give, and the reverse, run second,
		// went untold where it is no order of the space (calls that
		// commute, whose answers it returns in the other order): "Ran
		// every order ...: 1 order" after 2 schedules (red team rtK,
		// rtk/shape).
		orders := e.Explored - e.beside - e.eager
		s := fmt.Sprintf("Ran every order of the agent's parallel calls that may change the outcome: %s (%s of calls in flight together",
			countNoun(orders, "order"), rounds)
		if orders != e.Space {
			s += fmt.Sprintf("; the listed schedule's rounds have %s, and the rounds after the first changed with the order of the calls before them", countNoun(e.Space, "order"))
		}
		s += ")"
		if e.beside > 0 {
			s += fmt.Sprintf(", and the reverse of the listed order, which reverses calls that commute too (the agent sees their answers in the other order): %s in all", countNoun(e.Explored-e.eager, "schedule"))
		}
		s += "."
		s += e.eagerWords()
		if e.Unreduced > e.Space {
			others := "The other " + bigCount(e.Unreduced-e.Space)
			if e.Unreduced >= countCap {
				// Capped: the difference of a cap and a count is no count.
				others = "The others"
			}
			s += fmt.Sprintf(" %s of the %s possible only swap calls on different entities, which commute, so they were not run",
				others, bigCount(e.Unreduced))
			if e.beside > 0 {
				s += ", but for that reverse"
			}
			s += "."
		}
		return s
	case e.Strategy == "exhaustive":
		// Stopped by a schedule that could not run to its end, whose
		// result and the test's log say why.
		return fmt.Sprintf("Ran %s of the %s orders of the agent's parallel calls that may change the outcome (%s of calls in flight together), and stopped: not every order.%s",
			countNoun(e.Explored-e.eager, "schedule"), bigCount(e.Space), rounds, e.eagerWords())
	}
	return fmt.Sprintf("Ran %s of the %s orders of the agent's parallel calls that may change the outcome (%s of calls in flight together), sampled by PCT: not every order.%s testkit.Schedules raises the budget; AGENTIDEM_SEED draws another sample.",
		countNoun(e.Explored-e.eager, "schedule"), bigCount(e.Space), rounds, e.eagerWords())
}

// eagerWords says, after a sentence, how many of the schedules run were
// eager twins (Schedule.Eager), or nothing when none was.
func (e *Exploration) eagerWords() string {
	if e.eager == 0 {
		return ""
	}
	return fmt.Sprintf(" Besides, %s ran, each the twin of one of those, in which a call that became ready while a round was played (a worker freed by a finish, a branch's next call) started at once, before the calls of the round still held had finished, as in production it may.", countNoun(e.eager, "eager schedule"))
}

func countNoun(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return bigCount(n) + " " + noun + "s"
}

// bigCount prints a count, saying "more than a trillion" for the capped
// products of large rounds.
func bigCount(n int) string {
	if n >= countCap {
		if countCap == 1<<40 {
			return "more than a trillion"
		}
		return "more than " + strconv.Itoa(countCap) // int has 32 bits
	}
	return strconv.Itoa(n)
}

// explainOrderAcross completes the ordering findings of the schedules run
// so far: a dependent call that returned no error in a schedule that
// reported the finding may have failed in another; the first such
// schedule and the error are added, so that the finding says what the
// order does to the agent.
func (s *Suite) explainOrderAcross() {
	for _, res := range s.scheduledResults {
		for i := range res.Findings {
			f := &res.Findings[i]
			if f.Code != CodeDependentCallsConcurrent || len(f.Ops) != 2 || len(f.Calls) != 2 || res.Trace == nil {
				continue
			}
			if dep := traceOp(res.Trace, f.Calls[1]); dep == nil || dep.Error != "" {
				continue
			}
			for _, other := range s.scheduledResults {
				if other == res || other.Trace == nil {
					continue
				}
				if dep := concurrentFailure(other.Trace, f.Ops[0], f.Ops[1]); dep != nil {
					f.Message += fmt.Sprintf(". In schedule %s, %s failed: %s", withLegend(other.Schedule, other.Legend), dep.Name, dep.Error)
					break
				}
			}
		}
	}
}

func traceOp(tr *Trace, id string) *Operation {
	for i := range tr.Ops {
		if tr.Ops[i].ID == id {
			return &tr.Ops[i]
		}
	}
	return nil
}

// concurrentFailure finds a call of dep that failed while in flight
// together with a call of pre.
func concurrentFailure(tr *Trace, pre, dep string) *Operation {
	nest := nestingOf(tr.Ops)
	for i := range tr.Ops {
		d := &tr.Ops[i]
		if d.Name != dep || d.Error == "" || d.Batch == 0 || d.Fault != FaultNone {
			continue
		}
		for j := range tr.Ops {
			if p := &tr.Ops[j]; p.Name == pre && nest.together(p, d) {
				return d
			}
		}
	}
	return nil
}
