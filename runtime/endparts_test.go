package runtime

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Repeats that overlapped with calls of other ops cannot be judged by
// their own snapshots. When the run's end state differs from the
// baseline's only in parts of the state an op never changed in the
// baseline, that op's repeats are absorbed; a part it did change makes them
// duplicates. (A concurrent delivery of the memory server: entities
// created twice change nothing, the journal appended twice does.)
func TestOverlappedRepeatsJudgedByThePartsTheEndChanged(t *testing.T) {
	op := func(id, name string, inv int) Operation {
		return Operation{ID: id, Name: name, Kind: KindWrite, Status: StatusSuccess, Identity: `"k"`, Invocation: inv, Overlapped: true,
			Args: Args{Names: []string{"v"}, Values: []any{"k"}}}
	}
	trace := func() *Trace {
		return &Trace{Ops: []Operation{op("1:create#1", "create", 1), op("2:append#1", "append", 2), op("2:create#2", "create", 2), op("1:append#2", "append", 1)}}
	}
	args := "\x00\"k\"\x00{\"v\":\"k\"}"
	baseWin := map[string][2]string{
		"create" + args: {`{"entities":[],"journal":[]}`, `{"entities":["a"],"journal":[]}`},
		"append" + args: {`{"entities":["a"],"journal":[]}`, `{"entities":["a"],"journal":["x"]}`},
	}
	baseEnd := `{"entities":["a"],"journal":["x"]}`

	tr := trace()
	fs := judgeRepeats(tr, `{"entities":["a"],"journal":["x","x"]}`, baseEnd, baseWin, false, false)
	require.Len(t, fs, 1, "%v", fs)
	assert.Equal(t, []string{"append"}, fs[0].Ops)
	assert.Equal(t, RepeatAbsorbed, tr.Ops[2].Repeat)
	assert.Equal(t, JudgedByEndState, tr.Ops[2].JudgedBy)

	// The entities doubled too: the create's repeat is a duplicate.
	tr = trace()
	fs = judgeRepeats(tr, `{"entities":["a","a"],"journal":["x","x"]}`, baseEnd, baseWin, false, false)
	require.Len(t, fs, 2, "%v", fs)
	assert.Equal(t, RepeatDuplicate, tr.Ops[2].Repeat)

	// A snapshot that is not an object says nothing about parts.
	tr = trace()
	fs = judgeRepeats(tr, `["a","x","x"]`, `["a","x"]`, map[string][2]string{
		"create" + args: {`[]`, `["a"]`}, "append" + args: {`["a"]`, `["a","x"]`},
	}, false, false)
	assert.Len(t, fs, 2, "%v", fs)
}

// Under a gate the first call of an op and identity is not always the first
// to run: the execution that began first (execOrder, where the State judge
// numbered them) is the first execution, and the others are its repeats. A
// call it did not number (0) compares with none, as sort.SliceStable had it.
func TestFirstExecutionIsTheFirstToRun(t *testing.T) {
	op := func(id string, order int) Operation {
		return Operation{ID: id, Name: "put", Kind: KindWrite, Status: StatusSuccess, Identity: `"k"`, more: judgedMore(&effectView{order: order}),
			Args: Args{Names: []string{"v"}, Values: []any{"k"}}}
	}
	tr := &Trace{Ops: []Operation{op("1:put#1", 3), op("1:put#2", 4), op("2:put#1", 2), op("2:put#2", 1)}}
	fs := judgeRepeats(tr, "", "", nil, false, false)
	require.Len(t, fs, 1, "%v", fs)
	assert.Equal(t, []string{"2:put#2", "2:put#1", "1:put#1", "1:put#2"}, fs[0].Calls)
	assert.Empty(t, tr.Ops[3].Repeat, "the first to run is the first execution")

	tr = &Trace{Ops: []Operation{op("1:put#1", 3), op("1:put#2", 0), op("2:put#1", 2), op("2:put#2", 1)}}
	fs = judgeRepeats(tr, "", "", nil, false, false)
	require.Len(t, fs, 1, "%v", fs)
	assert.Equal(t, []string{"1:put#1", "1:put#2", "2:put#2", "2:put#1"}, fs[0].Calls)
}

// A write that inserts rows keyed by ids the sink hands out adds a new
// top-level key on every execution: repeated when the calls overlapped, its
// second row is under a key it never changed in the baseline. Such added
// keys are its doing as much as another op's: never disjoint from it.
// (Two issues opened in parallel, each numbered per repository, delivered
// twice at once: four issues, which passed as SAFE on every run.)
func TestOverlappedInsertsUnderNewIDsAreDuplicates(t *testing.T) {
	op := func(id, name, key string, inv int) Operation {
		return Operation{ID: id, Name: name, Kind: KindWrite, Status: StatusSuccess, Identity: `"` + key + `"`, Invocation: inv, Overlapped: true,
			Args: Args{Names: []string{"repo"}, Values: []any{key}}}
	}
	tr := &Trace{Ops: []Operation{op("1:open#1", "open", "api", 1), op("2:open#2", "open", "web", 2), op("2:open#3", "open", "api", 2), op("1:open#4", "open", "web", 1)}}
	baseWin := map[string][2]string{
		"open\x00\"api\"\x00{\"repo\":\"api\"}": {`{}`, `{"api#1":"x"}`},
		"open\x00\"web\"\x00{\"repo\":\"web\"}": {`{"api#1":"x"}`, `{"api#1":"x","web#1":"x"}`},
	}
	fs := judgeRepeats(tr, `{"api#1":"x","api#2":"x","web#1":"x","web#2":"x"}`, `{"api#1":"x","web#1":"x"}`, baseWin, false, false)
	require.Len(t, fs, 2, "%v", fs)
	assert.Equal(t, RepeatDuplicate, tr.Ops[2].Repeat)
	assert.Equal(t, RepeatDuplicate, tr.Ops[3].Repeat)
}

// A repeat State saw change the world and a later one it saw change
// nothing: the finding tells the change, without "the state changed in
// neither call" beside it.
func TestSeenChangeIsNotContradictedByAnUnseenRepeat(t *testing.T) {
	op := func(id string, change string) Operation {
		return Operation{ID: id, Name: "put", Kind: KindWrite, Status: StatusSuccess, Identity: `"k"`, Invocation: 1,
			StateChange: change, more: judgedMore(&effectView{seen: true})}
	}
	tr := &Trace{Ops: []Operation{op("1:put#1", ""), op("1:put#2", `k: 1 → 2`), op("1:put#3", "")}}
	fs := judgeRepeats(tr, "", "", nil, false, false)
	require.Len(t, fs, 1, "%v", fs)
	assert.Contains(t, fs[0].Message, "the repeat changed the state: k: 1 → 2")
	assert.NotContains(t, fs[0].Message, unseenNote)
}

// The same inserts under one top-level key, as a State that reads the
// database into one value returns them, keyed by object key or as rows
// under the next AUTOINCREMENT id: the repeats added members to the
// collection each op added one to in the baseline, at any depth, and
// are duplicates.
func TestNestedOverlappedInsertsUnderNewIDsAreDuplicates(t *testing.T) {
	op := func(id, name, key string, inv int) Operation {
		return Operation{ID: id, Name: name, Kind: KindWrite, Status: StatusSuccess, Identity: `"` + key + `"`, Invocation: inv, Overlapped: true,
			Args: Args{Names: []string{"repo"}, Values: []any{key}}}
	}
	for _, c := range []struct {
		name                       string
		start, api, web, end, base string
	}{
		{"keys", `{"db":{"issues":{}}}`, `{"db":{"issues":{"api#1":"x"}}}`, `{"db":{"issues":{"api#1":"x","web#1":"x"}}}`,
			`{"db":{"issues":{"api#1":"x","api#2":"x","web#1":"x","web#2":"x"}}}`, `{"db":{"issues":{"api#1":"x","web#1":"x"}}}`},
		{"rows", `{"db":{"issues":[]}}`, `{"db":{"issues":[[1,"api"]]}}`, `{"db":{"issues":[[1,"api"],[2,"web"]]}}`,
			`{"db":{"issues":[[1,"api"],[2,"web"],[3,"api"],[4,"web"]]}}`, `{"db":{"issues":[[1,"api"],[2,"web"]]}}`},
	} {
		tr := &Trace{Ops: []Operation{op("1:open#1", "open", "api", 1), op("2:open#2", "open", "web", 2), op("2:open#3", "open", "api", 2), op("1:open#4", "open", "web", 1)}}
		baseWin := map[string][2]string{
			"open\x00\"api\"\x00{\"repo\":\"api\"}": {c.start, c.api},
			"open\x00\"web\"\x00{\"repo\":\"web\"}": {c.api, c.web},
		}
		fs := judgeRepeats(tr, c.end, c.base, baseWin, false, false)
		require.Len(t, fs, 2, "%s: %v", c.name, fs)
		assert.Equal(t, RepeatDuplicate, tr.Ops[2].Repeat, c.name)
		assert.Equal(t, RepeatDuplicate, tr.Ops[3].Repeat, c.name)
	}
}
