package runtime

import "context"

// MarkReplayed records that the traced call carried by ctx was answered by an
// idempotent sink from a stored result instead of executing again: the trace
// marks the operation replayed, and the fault suite never counts it as a
// duplicate effect.
//
// Call it from inside a tool, with the context the tool received, when the
// sink said "already done" (a payment API answering with a replayed response,
// a unique-key conflict that returned the stored row). idem.Store does it by
// itself. Outside an active run, or with a context that no traced call
// carries, it does nothing.
func MarkReplayed(ctx context.Context) {
	if !Enabled() || ctx == nil {
		return
	}
	if c, ok := ctx.Value(callKey{}).(*Call); ok && c != nil {
		c.markReplayed()
	}
}
