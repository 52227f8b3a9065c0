package runtime

import "sync"

// callIDs holds the ids of calls a suite's traces made (Call.idIn): every
// scenario's calls have the same ids ("1:Ledger.Post#3"), and building
// each trace's afresh was an allocation per call, a ninth of the
// ten-write suite's. They are kept by op, by address (two ops of one name
// give the same id in two places), then by invocation and occurrence in
// slices: a map keyed by all three cost a hash of 16 bytes and a probe
// per call, 2% of the ten-write suite's CPU profile, where most calls
// follow one of the same op and find its table without a lookup. A suite
// reads its traces one at a time; the lock keeps the tables whole should
// two runs of one suite read theirs at once.
type callIDs struct {
	mu  sync.Mutex
	ops map[*Op]*opIDs
	// last and lastIDs are the op looked up last and its table.
	last    *Op
	lastIDs *opIDs
	slots   int // the slots of every table, up to maxKeptIDs
}

// opIDs holds one op's ids: byInv[n-1][k-1] is "n:Op#k", "" where none
// was made yet.
type opIDs struct {
	byInv [][]string
}

// maxKeptIDs bounds the ids a suite keeps, counted in slots: a table grows
// to the highest occurrence kept.
const maxKeptIDs = 4096

// of returns op's table, made if need be.
func (ids *callIDs) of(op *Op) *opIDs {
	if op == ids.last && ids.lastIDs != nil {
		return ids.lastIDs
	}
	t := ids.ops[op]
	if t == nil {
		if ids.ops == nil {
			ids.ops = map[*Op]*opIDs{}
		}
		t = &opIDs{}
		ids.ops[op] = t
	}
	ids.last, ids.lastIDs = op, t
	return t
}

// idIn is idLocked, taken from ids where an earlier trace of the suite
// made it, and kept there otherwise; the caller holds ids.mu. With ids
// nil (a run outside a suite), the id is built.
func (c *Call) idIn(ids *callIDs) string {
	if ids == nil || c.rec.Occurrence <= 0 || c.inv == nil || c.inv.n <= 0 {
		return c.idLocked()
	}
	n, k := c.inv.n, int(c.rec.Occurrence)
	t := ids.of(c.op)
	if n <= len(t.byInv) && k <= len(t.byInv[n-1]) {
		if id := t.byInv[n-1][k-1]; id != "" {
			return id
		}
	}
	id := c.idLocked()
	grow := 0
	if n > len(t.byInv) {
		grow = n - len(t.byInv)
	}
	if n <= len(t.byInv) && k > len(t.byInv[n-1]) {
		grow += k - len(t.byInv[n-1])
	} else if n > len(t.byInv) {
		grow += k
	}
	if ids.slots+grow > maxKeptIDs {
		return id
	}
	ids.slots += grow
	for len(t.byInv) < n {
		t.byInv = append(t.byInv, nil)
	}
	row := t.byInv[n-1]
	for len(row) < k {
		row = append(row, "")
	}
	row[k-1] = id
	t.byInv[n-1] = row
	return id
}
