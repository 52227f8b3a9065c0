package runtime

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// add_line's first call ran alone and added its ledger line; the agent's
// retry was delivered twice at once and the sink let one of the two
// through (it coalesces calls in flight, nothing more): the cluster added
// the line again, exactly what one execution adds. The ledger ends with
// two equal lines: one effect done twice, whichever delivery made it.
func TestClusterAfterAVisibleFirstExecutionIsARepeat(t *testing.T) {
	row := `["k",10]`
	op := func(id string, order int, ev effectView) Operation {
		ev.order = order
		return Operation{ID: id, Name: "add_line", Kind: KindWrite, Status: StatusSuccess, Identity: `"k"`, Invocation: 1,
			Overlapped: ev.inCluster, more: judgedMore(&ev), Args: Args{Names: []string{"k"}, Values: []any{"k"}}}
	}
	cluster := effectView{inCluster: true, clusterKeys: 1, before: `{"L":[` + row + `]}`, after: `{"L":[` + row + `,` + row + `]}`}
	first := op("1:add_line#1", 1, effectView{seen: true, before: `{"L":null}`, after: `{"L":[` + row + `]}`})
	first.StateChange = DescribeChange(`{"L":null}`, `{"L":[`+row+`]}`)
	tr := &Trace{Ops: []Operation{first, op("1:add_line#2", 2, cluster), op("1:add_line#3", 3, cluster)}}
	baseWin := map[string][2]string{"add_line\x00\"k\"\x00{\"k\":\"k\"}": {`{"L":null}`, `{"L":[` + row + `]}`}}
	fs := judgeRepeats(tr, `{"L":[`+row+`,`+row+`]}`, `{"L":[`+row+`]}`, baseWin, false, false)
	require.Len(t, fs, 1, "two equal ledger lines: %v", fs)
	assert.Equal(t, CodeDuplicateWrite, fs[0].Code)
}
