package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/agentidem/agentidem-go/adapters/mcp/gosdk"
	"github.com/agentidem/agentidem-go/idem"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Agent is one turn of an assistant with memory, scripted as a model would
// play it: read what it knows about the user, remember the people and
// companies it just learnt about, the relation between them and a new fact,
// and note the turn in the journal. It retries a call once when the call
// fails, as agents do. Keyed sends the journal line with an idempotency key
// derived from the session and the turn; without it a retried or
// redelivered turn notes its line twice.
type Agent struct {
	Server  *mcp.Server
	Session string
	Keyed   bool
}

// Run plays the turn over a fresh client session to the server.
func (a *Agent) Run(ctx context.Context) error {
	cs, stop, err := connect(ctx, a.Server)
	if err != nil {
		return err
	}
	defer stop()
	call := func(tool string, args any) (json.RawMessage, error) {
		var out json.RawMessage
		var err error
		for range 2 {
			if out, err = callTool(ctx, cs, tool, args); err == nil || errors.Is(err, context.Canceled) {
				break
			}
		}
		return out, err
	}
	if _, err := call("search_nodes", SearchNodesIn{Query: "alice"}); err != nil {
		return err
	}
	if _, err := call("create_entities", CreateEntitiesIn{Entities: []Entity{
		{Name: "alice", EntityType: "person", Observations: []string{"speaks French"}},
		{Name: "acme", EntityType: "organization"},
	}}); err != nil {
		return err
	}
	if _, err := call("create_relations", CreateRelationsIn{Relations: []Relation{{From: "alice", To: "acme", RelationType: "works_at"}}}); err != nil {
		return err
	}
	if _, err := call("add_observations", AddObservationsIn{EntityName: "alice", Contents: []string{"likes green tea"}}); err != nil {
		return err
	}
	line := AppendJournalIn{Line: "turn 1: learnt where alice works"}
	if a.Keyed {
		line.Key = idem.Key("journal", a.Session, "turn-1")
	}
	_, err = call("append_journal", line)
	return err
}

// connect opens an in-memory client session to srv, inside the agent's
// invocation so that the server's handling belongs to it.
func connect(ctx context.Context, srv *mcp.Server) (*mcp.ClientSession, func(), error) {
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.WithoutCancel(ctx), st, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("server connect: %w", err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "assistant", Version: "1.0.0"}, nil)
	client.AddSendingMiddleware(gosdk.Propagate())
	cs, err := client.Connect(context.WithoutCancel(ctx), ct, nil)
	if err != nil {
		ss.Close()
		return nil, nil, fmt.Errorf("client connect: %w", err)
	}
	return cs, func() { cs.Close(); ss.Wait() }, nil
}

func callTool(ctx context.Context, cs *mcp.ClientSession, tool string, args any) (json.RawMessage, error) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return nil, err
	}
	if res.IsError {
		var msg []string
		for _, c := range res.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				msg = append(msg, t.Text)
			}
		}
		return nil, fmt.Errorf("%s: %s", tool, strings.Join(msg, "; "))
	}
	return json.Marshal(res.StructuredContent)
}
