package runtime

// A Settle that says the world is quiet before it is. One that reads a
// queue's counters (a JetStream consumer's pending and unacknowledged
// counts) sees them fall to zero as the worker takes a job, before it
// writes what the job asks. A redelivered publish of the buggy agent,
// which sends a fresh message id each time, then queued a second ticket
// that landed after the Settle said quiet and after the end was read: the
// repeat's window, which the same Settle opened and closed, held no
// change, the end held the baseline's one ticket, and the repeat was
// absorbed as "state unchanged", with no note (red team rT #5,
// rtu/natspub TestNATSPublishRandomID, 49 runs in 1,080 had such a
// scenario; the suite stayed UNSAFE on its other scenarios).
//
// So in a run after the baseline, with a Settle given and Setup having
// left goroutines running in the baseline (judge.recheckSettle), where a
// write was repeated, the end is read once it held still after the Settle
// said quiet (for endStill, 25 ms, on the polls' clock, which a loaded
// machine's overrun sleeps do not shorten), as where no Settle is given
// and the state changed outside the traced writes; a change meanwhile is
// read to its end, and the rules for an effect that landed after the
// Settle said quiet (settledlate.go) judge it: the buggy agent's scenario
// is inconclusive, or caught, never a plain pass. Two deliveries at once,
// whose calls overlapped, are read so too: their cluster's window held
// the first ticket, and the second landed after the end (1 run in 10 of
// TestASettleThatSaysQuietBeforeTheWorkerWrites, three copies under
// -race, when only a repeat whose window changed nothing was read again).
// A single second look 25 ms after the Settle, on the wall's clock, missed
// the ticket of a restart now and then with a CI run beside three copies
// under -race. It costs such a run 25 ms at least; a run with no repeated
// write, or without a Settle, pays nothing.
