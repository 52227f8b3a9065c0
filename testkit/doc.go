// Package testkit runs an agent under every fault and delivery scenario that
// production gives it, inside go test, and fails the test with what it finds.
//
//	func TestRefund(t *testing.T) {
//		var bank *refund.Bank
//		testkit.TestAgent(t, func(ctx context.Context) error {
//			_, err := (&refund.Agent{Bank: bank}).Run(ctx, "payment-123")
//			return err
//		},
//			testkit.Setup(func(ctx context.Context) error { bank = refund.NewBank(100, "payment-123"); return nil }),
//			testkit.Invariant("at most one refund", func(*runtime.Trace) error {
//				if n := len(bank.Refunds()); n > 1 {
//					return fmt.Errorf("%d refunds", n)
//				}
//				return nil
//			}),
//		)
//	}
//
// TestAgent runs a baseline without faults, then, for every write call of the
// baseline, a lost acknowledgement (the write runs, the agent sees a
// timeout), a lost request (the write does not run, the agent sees the same
// timeout), a failure before the write and a crash right after it (the
// invocation is cancelled and delivered again), and then the whole
// invocation delivered twice, one after the other and at once (in lockstep:
// each delivery's k-th call waits for the other's, so both read before
// either writes). Each scenario
// starts from a fresh world (Setup) and is a subtest:
//
//	go test -run 'TestRefund/lost_acknowledgement/refund#1'
//
// reruns exactly one; every finding prints that line. Findings are
// duplicate_write, missing_write (with ExactlyOnce), invariant_failed,
// fault_not_triggered (a planned fault that never fired makes its scenario
// inconclusive, never silently safe), baseline_failed, agent_panic and
// identity_unstable. Whether the agent returned an error (execution outcome)
// is kept apart from the findings (safety outcome).
//
// Run does the same without failing the test, for tests that prove a buggy
// agent is caught. Both return the *runtime.Report; AGENTIDEM_REPORT_DIR=dir
// (or the ReportDir option) writes it as dir/<Test>.json.
//
// testkit takes a small TB interface, so it can be driven by a fake in its
// own tests; *testing.T and *testing.B satisfy it.
package testkit
