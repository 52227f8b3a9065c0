package memory

import (
	"context"
	"strings"

	agentidemmcp "github.com/agentidem/agentidem-go/adapters/mcp"
	"github.com/agentidem/agentidem-go/adapters/mcp/gosdk"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The inputs and outputs of the tools.
type (
	// CreateEntitiesIn is the input of create_entities.
	CreateEntitiesIn struct {
		Entities []Entity `json:"entities" jsonschema:"the entities to create"`
	}
	// CreateEntitiesOut lists the entities that were new.
	CreateEntitiesOut struct {
		Created []Entity `json:"created"`
	}
	// CreateRelationsIn is the input of create_relations.
	CreateRelationsIn struct {
		Relations []Relation `json:"relations" jsonschema:"the relations to create"`
	}
	// CreateRelationsOut lists the relations that were new.
	CreateRelationsOut struct {
		Created []Relation `json:"created"`
	}
	// AddObservationsIn is the input of add_observations.
	AddObservationsIn struct {
		EntityName string   `json:"entityName" jsonschema:"the entity to add to"`
		Contents   []string `json:"contents" jsonschema:"the observations to add"`
	}
	// AddObservationsOut lists the observations that were new.
	AddObservationsOut struct {
		Added []string `json:"added"`
	}
	// AppendJournalIn is the input of append_journal.
	AppendJournalIn struct {
		Line string `json:"line" jsonschema:"what to note in the session journal"`
		Key  string `json:"idempotency_key,omitempty" jsonschema:"a repeat of the key notes nothing"`
	}
	// AppendJournalOut is the journal's length after the call.
	AppendJournalOut struct {
		Lines int `json:"lines"`
	}
	// ReadGraphIn is the (empty) input of read_graph.
	ReadGraphIn struct{}
	// ReadGraphOut is the whole graph.
	ReadGraphOut struct {
		Entities  []Entity   `json:"entities"`
		Relations []Relation `json:"relations"`
	}
	// SearchNodesIn is the input of search_nodes.
	SearchNodesIn struct {
		Query string `json:"query" jsonschema:"text to look for in names, types and observations"`
	}
)

// Annotations says which MCP annotations NewServer puts on the tools: the
// server's own declarations of what each tool does.
type Annotations int

const (
	// NoAnnotations leaves them off, as a server written without them.
	NoAnnotations Annotations = iota
	// Honest: the reads are read-only, the creates and add_observations
	// idempotent, append_journal neither.
	Honest
	// Wrong is Honest, except that append_journal claims to be idempotent.
	Wrong
)

// NewServer serves g as MCP tools, with the agentidem middleware for tools
// (which may be nil: then only the tools' annotations tell it anything).
func NewServer(g func() *Graph, annotated Annotations, tools agentidemmcp.Tools) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "memory", Version: "1.0.0"}, nil)
	ann := func(readOnly, idempotent bool) *mcp.ToolAnnotations {
		if annotated == NoAnnotations {
			return nil
		}
		return &mcp.ToolAnnotations{ReadOnlyHint: readOnly, IdempotentHint: idempotent}
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "create_entities", Description: "create entities; names that exist are skipped", Annotations: ann(false, true)},
		func(_ context.Context, _ *mcp.CallToolRequest, in CreateEntitiesIn) (*mcp.CallToolResult, CreateEntitiesOut, error) {
			return nil, CreateEntitiesOut{Created: g().CreateEntities(in.Entities)}, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "create_relations", Description: "create relations; relations that exist are skipped", Annotations: ann(false, true)},
		func(_ context.Context, _ *mcp.CallToolRequest, in CreateRelationsIn) (*mcp.CallToolResult, CreateRelationsOut, error) {
			return nil, CreateRelationsOut{Created: g().CreateRelations(in.Relations)}, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "add_observations", Description: "add observations to an entity; ones it has are skipped", Annotations: ann(false, true)},
		func(_ context.Context, _ *mcp.CallToolRequest, in AddObservationsIn) (*mcp.CallToolResult, AddObservationsOut, error) {
			added, err := g().AddObservations(in.EntityName, in.Contents)
			return nil, AddObservationsOut{Added: added}, err
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "append_journal", Description: "note a line in the session journal", Annotations: ann(false, annotated == Wrong)},
		func(ctx context.Context, _ *mcp.CallToolRequest, in AppendJournalIn) (*mcp.CallToolResult, AppendJournalOut, error) {
			n, err := g().AppendJournal(ctx, in.Line, in.Key)
			return nil, AppendJournalOut{Lines: n}, err
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "read_graph", Description: "read the whole graph", Annotations: ann(true, false)},
		func(_ context.Context, _ *mcp.CallToolRequest, _ ReadGraphIn) (*mcp.CallToolResult, ReadGraphOut, error) {
			es, rs := g().Read()
			return nil, ReadGraphOut{Entities: es, Relations: rs}, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "search_nodes", Description: "find entities by text", Annotations: ann(true, false)},
		func(_ context.Context, _ *mcp.CallToolRequest, in SearchNodesIn) (*mcp.CallToolResult, ReadGraphOut, error) {
			es, _ := g().Read()
			var found []Entity
			for _, e := range es {
				if strings.Contains(e.Name+" "+e.EntityType+" "+strings.Join(e.Observations, " "), in.Query) {
					found = append(found, e)
				}
			}
			return nil, ReadGraphOut{Entities: found}, nil
		})
	srv.AddReceivingMiddleware(gosdk.Middleware(tools))
	return srv
}

// JournalOnly is all the user writes for an annotated server: the one tool
// whose annotations say nothing of its identity. The creates and reads are
// taken from the annotations.
var JournalOnly = agentidemmcp.Tools{
	"append_journal": agentidemmcp.Write(agentidemmcp.Identity("line")),
}

// EveryTool is what a user lists without annotations: every tool, every
// write by its arguments.
var EveryTool = agentidemmcp.Tools{
	"create_entities":  agentidemmcp.Write(),
	"create_relations": agentidemmcp.Write(),
	"add_observations": agentidemmcp.Write(),
	"append_journal":   agentidemmcp.Write(agentidemmcp.Identity("line")),
	"read_graph":       agentidemmcp.Read(),
	"search_nodes":     agentidemmcp.Read(),
}
