package agentidemeino_test

import (
	"context"
	"strings"
	"testing"

	agentidemeino "github.com/agentidem/agentidem-go/adapters/eino"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"
)

type roomIn struct {
	Room string `json:"room"`
}

func TestCheckNamesAMisspeltKey(t *testing.T) {
	ctx := context.Background()
	room := func(context.Context, roomIn) (string, error) { return "ok", nil }
	find, err := utils.InferTool("find_booking", "find a booking", room)
	if err != nil {
		t.Fatal(err)
	}
	book, err := utils.InferTool("book_room", "book a room", room)
	if err != nil {
		t.Fatal(err)
	}
	node := []tool.BaseTool{find, book}

	err = agentidemeino.Check(ctx, agentidemeino.Tools{
		"find_booking": agentidemeino.Read(agentidemeino.Entity("room")),
		"bookRoom":     agentidemeino.Write(agentidemeino.Identity("room")),
	}, node)
	const want = `agentidemeino: Tools key "bookRoom" names no tool (did you mean "book_room"?)`
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Check = %v, want prefix %s", err, want)
	}

	for _, ok := range []agentidemeino.Tools{
		{"find_booking": agentidemeino.Read(), "book_room": agentidemeino.Write()},
		{"find_booking": agentidemeino.Read()},                                      // book_room not traced, on purpose
		{"book_room": agentidemeino.Write(), "cancel_order": agentidemeino.Write()}, // another node's tool
	} {
		if err := agentidemeino.Check(ctx, ok, node); err != nil {
			t.Errorf("Check(%v) = %v, want nil", ok, err)
		}
	}
}
