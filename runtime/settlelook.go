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
// write was repeated, the end is read again lateLook after the first
// read; a change there is read to its end, as any change outside the
// traced writes is, and the rules for an effect that landed after the
// Settle said quiet (settledlate.go) judge it: the buggy agent's scenario
// is inconclusive, or caught, never a plain pass. Two deliveries at once,
// whose calls overlapped, are read again too: their cluster's window held
// the first ticket, and the second landed after the end (1 run in 10 of
// TestASettleThatSaysQuietBeforeTheWorkerWrites, three copies under
// -race, when only a repeat whose window changed nothing was read again).
// It costs such a run lateLook (25 ms); a run with no repeated write, or
// without a Settle, pays nothing.
