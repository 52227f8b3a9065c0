// Package writesleave holds loops that start a write and then end (red
// team fF): the first match is started and the loop breaks, returns, or
// continues an outer loop. The write runs at one turn, not at each.
package writesleave

import "sync"

//agentidem:write identity=to,subject
func sendEmail(to, subject, body string) error { return nil }

//agentidem:write identity=orderID
func refund(orderID string, cents int) error { return nil }

type candidate struct{ OK bool }

func breaksAfterFirst(user string, cs []candidate) {
	var wg sync.WaitGroup
	for _, c := range cs {
		if c.OK {
			wg.Go(func() { sendEmail(user, "found", "") })
			break
		}
	}
	wg.Wait()
}

func returnsAfterFirst(order string, parts []int) {
	var wg sync.WaitGroup
	defer wg.Wait()
	for _, p := range parts {
		if p > 0 {
			wg.Go(func() { refund(order, p) })
			return
		}
	}
}

func breaksItsOwnLabel(order string, parts []int) {
	var wg sync.WaitGroup
loop:
	for _, p := range parts {
		switch {
		case p > 0:
			wg.Go(func() { refund(order, p) })
			break loop
		}
	}
	wg.Wait()
}

// The twins that start at many turns: still reported.

// A break out of a switch, not of the loop.
func breaksTheSwitch(order string, parts []int) {
	var wg sync.WaitGroup
	for _, p := range parts {
		switch {
		case p > 0:
			wg.Go(func() { refund(order, p) }) // want `refund writes on the same entity \(order\) start at each turn of a loop`
			break
		}
	}
	wg.Wait()
}

// A continue of the loop itself starts the next turn.
func continuesItself(user string, cs []candidate) {
	var wg sync.WaitGroup
loop:
	for _, c := range cs {
		if c.OK {
			wg.Go(func() { sendEmail(user, "found", "") }) // want `sendEmail writes on the same entity \(to, subject\) start at each turn of a loop`
			continue loop
		}
	}
	wg.Wait()
}

// A continue of the outer loop ends the inner loop's turns, not the
// outer's: each of its turns starts one refund.
func continuesOuter(order string, rows [][]int) {
	var wg sync.WaitGroup
outer:
	for _, row := range rows {
		for _, p := range row {
			if p > 0 {
				wg.Go(func() { refund(order, p) }) // want `refund writes on the same entity \(order\) start at each turn of a loop \(line 84\)`
				continue outer
			}
		}
	}
	wg.Wait()
}

// The inner loop's turns: a break of the inner loop ends them, but the
// outer loop starts it again at each of its turns.
func breaksInner(order string, rows [][]int) {
	var wg sync.WaitGroup
	for range rows {
		for _, p := range []int{1, 2} {
			wg.Go(func() { refund(order, p) }) // want `refund writes on the same entity \(order\) start at each turn of a loop`
			break
		}
	}
	wg.Wait()
}

// A break only under a condition after the start.
func breaksSometimes(user string, cs []candidate) {
	var wg sync.WaitGroup
	for _, c := range cs {
		wg.Go(func() { sendEmail(user, "found", "") }) // want `sendEmail writes on the same entity \(to, subject\) start at each turn of a loop`
		if c.OK {
			break
		}
	}
	wg.Wait()
}
