package runtime

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A write whose effect is an order: bump moves a job one place up the
// queue. Delivered twice at once beside another op's call (a cluster of
// two keys, judged by the end state), it moved the job two places: the end
// state differs from the baseline's only in order, and that order is the
// bug.
func TestOrderOnlyRepeatIsADuplicate(t *testing.T) {
	op := func(id, name, key string, inv int) Operation {
		return Operation{ID: id, Name: name, Kind: KindWrite, Status: StatusSuccess, Identity: `"` + key + `"`, Invocation: inv, Overlapped: true,
			Args: Args{Names: []string{"job"}, Values: []any{key}}}
	}
	tr := &Trace{Ops: []Operation{op("1:bump#1", "bump", "c", 1), op("2:note#1", "note", "n", 2), op("1:bump#2", "bump", "c", 1)}}
	baseWin := map[string][2]string{
		"bump\x00\"c\"\x00{\"job\":\"c\"}": {`{"notes":[],"queue":["a","b","c"]}`, `{"notes":[],"queue":["a","c","b"]}`},
		"note\x00\"n\"\x00{\"job\":\"n\"}": {`{"notes":[],"queue":["a","c","b"]}`, `{"notes":["n"],"queue":["a","c","b"]}`},
	}
	fs := judgeRepeats(tr, `{"notes":["n"],"queue":["c","a","b"]}`, `{"notes":["n"],"queue":["a","c","b"]}`, baseWin, false, false)
	require.Len(t, fs, 1, "c was bumped twice: %v", fs)
	assert.Equal(t, RepeatDuplicate, tr.Ops[2].Repeat)
}

// Columns are a list too: swap_roles swaps a ticket's assignee and
// reviewer and marks it; delivered twice at once it swapped them back,
// which is no order of rows that concurrency explains.
func TestColumnsSwappedBackIsADuplicate(t *testing.T) {
	op := func(id, name, key string, inv int) Operation {
		return Operation{ID: id, Name: name, Kind: KindWrite, Status: StatusSuccess, Identity: `"` + key + `"`, Invocation: inv, Overlapped: true,
			Args: Args{Names: []string{"t"}, Values: []any{key}}}
	}
	tr := &Trace{Ops: []Operation{op("1:swap#1", "swap_roles", "t1", 1), op("2:note#1", "note", "n", 2), op("1:swap#2", "swap_roles", "t1", 1)}}
	baseWin := map[string][2]string{
		"swap_roles\x00\"t1\"\x00{\"t\":\"t1\"}": {`{"notes":[],"T":[["t1","alice","bob"]],"swapped":0}`, `{"notes":[],"T":[["t1","bob","alice"]],"swapped":1}`},
		"note\x00\"n\"\x00{\"t\":\"n\"}":         {`{"notes":[],"T":[["t1","bob","alice"]],"swapped":1}`, `{"notes":["n"],"T":[["t1","bob","alice"]],"swapped":1}`},
	}
	fs := judgeRepeats(tr, `{"notes":["n"],"T":[["t1","alice","bob"]],"swapped":1}`, `{"notes":["n"],"T":[["t1","bob","alice"]],"swapped":1}`, baseWin, false, false)
	require.Len(t, fs, 1, "the roles were swapped twice: %v", fs)
	assert.Equal(t, RepeatDuplicate, tr.Ops[2].Repeat)

	// An op that only adds rows, delivered twice at once beside another:
	// its rows in another order are still the same end state.
	tr = &Trace{Ops: []Operation{op("1:add#1", "add", "t2", 1), op("2:note#1", "note", "n", 2), op("1:add#2", "add", "t2", 1)}}
	baseWin = map[string][2]string{
		"add\x00\"t2\"\x00{\"t\":\"t2\"}": {`{"notes":[],"T":[["t1","a","b"]]}`, `{"notes":[],"T":[["t1","a","b"],["t2","a","b"]]}`},
		"note\x00\"n\"\x00{\"t\":\"n\"}":  {`{"notes":[],"T":[["t1","a","b"],["t2","a","b"]]}`, `{"notes":["n"],"T":[["t1","a","b"],["t2","a","b"]]}`},
	}
	fs = judgeRepeats(tr, `{"notes":["n"],"T":[["t2","a","b"],["t1","a","b"]]}`, `{"notes":["n"],"T":[["t1","a","b"],["t2","a","b"]]}`, baseWin, false, false)
	assert.Empty(t, fs)
	assert.Equal(t, RepeatAbsorbed, tr.Ops[2].Repeat)
}
