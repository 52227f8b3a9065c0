package runtime

// Point is where a gated call waits: before the tool runs, or after it
// returned and before the agent sees the answer.
type Point uint8

const (
	// PointStart is before the tool runs.
	PointStart Point = iota + 1
	// PointFinish is after the tool returned.
	PointFinish
)

// Gate decides when gated calls proceed. A scheduler implements it; Wait
// blocks the calling goroutine until the scheduler releases c at point p.
type Gate interface {
	Wait(c *Call, p Point)
}
