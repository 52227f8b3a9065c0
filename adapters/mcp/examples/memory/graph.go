// Package memory is a knowledge-graph memory for an assistant, served as MCP
// tools through the official Go SDK (github.com/modelcontextprotocol/go-sdk),
// in the shape of the SDK's memory server: entities with observations, and
// relations between them.
//
// Most of its writes are idempotent by nature, and the tools say so in their
// MCP annotations: create_entities and create_relations skip what already
// exists, add_observations skips observations the entity has. One is not:
// append_journal adds a line to the session journal every time it is
// called, unless the call carries an idempotency key.
//
// The tests show what agentidem makes of it: without the annotations every
// repeat of a create is reported as a duplicate (false alarms); with them,
// or with a State snapshot of the graph, only the journal's real duplicate
// is, and the agent that keys its journal lines passes.
package memory

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/agentidem/agentidem-go/idem"
)

// Entity is a node of the graph.
type Entity struct {
	Name         string   `json:"name" jsonschema:"unique name of the entity"`
	EntityType   string   `json:"entityType" jsonschema:"kind of entity (person, organization, ...)"`
	Observations []string `json:"observations" jsonschema:"facts about the entity"`
}

// Relation is a directed edge, in the active voice: From RelationType To.
type Relation struct {
	From         string `json:"from" jsonschema:"entity the relation starts at"`
	To           string `json:"to" jsonschema:"entity the relation ends at"`
	RelationType string `json:"relationType" jsonschema:"what the relation says, in the active voice"`
}

// Graph is the memory: entities, relations, and the journal of what the
// assistant noted, one line per append_journal call. Safe for concurrent
// use.
type Graph struct {
	mu        sync.Mutex
	entities  []Entity
	relations []Relation
	journal   []string
	keys      *idem.Store
}

// NewGraph returns an empty memory.
func NewGraph() *Graph { return &Graph{keys: idem.NewMemory()} }

// CreateEntities adds the entities whose names are new and returns them;
// an entity whose name exists is skipped, so a repeat adds nothing.
func (g *Graph) CreateEntities(es []Entity) []Entity {
	g.mu.Lock()
	defer g.mu.Unlock()
	var created []Entity
	for _, e := range es {
		if g.find(e.Name) >= 0 {
			continue
		}
		e.Observations = append([]string{}, e.Observations...)
		g.entities = append(g.entities, e)
		created = append(created, e)
	}
	return created
}

// CreateRelations adds the relations that are new and returns them.
func (g *Graph) CreateRelations(rs []Relation) []Relation {
	g.mu.Lock()
	defer g.mu.Unlock()
	var created []Relation
	for _, r := range rs {
		exists := false
		for _, x := range g.relations {
			if x == r {
				exists = true
				break
			}
		}
		if !exists {
			g.relations = append(g.relations, r)
			created = append(created, r)
		}
	}
	return created
}

// AddObservations adds to the named entity the observations it does not
// have yet and returns them; an unknown entity is an error.
func (g *Graph) AddObservations(entity string, contents []string) ([]string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	i := g.find(entity)
	if i < 0 {
		return nil, fmt.Errorf("no entity named %q", entity)
	}
	var added []string
	for _, c := range contents {
		has := false
		for _, o := range g.entities[i].Observations {
			if o == c {
				has = true
				break
			}
		}
		if !has {
			g.entities[i].Observations = append(g.entities[i].Observations, c)
			added = append(added, c)
		}
	}
	return added, nil
}

// AppendJournal adds a line to the journal and returns the number of
// lines. With a key, a repeat of the key adds nothing and answers with the
// first answer (idem.Store), which tells the trace it was replayed.
func (g *Graph) AppendJournal(ctx context.Context, line, key string) (int, error) {
	add := func(context.Context) (int, error) {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.journal = append(g.journal, line)
		return len(g.journal), nil
	}
	if key == "" {
		return add(ctx)
	}
	n, _, err := idem.Do(ctx, g.keys, key, line, add)
	return n, err
}

// Snapshot is the graph's observable state, for testkit.State: entities
// and relations in name order, the journal in order.
func (g *Graph) Snapshot() any {
	g.mu.Lock()
	defer g.mu.Unlock()
	es := append([]Entity{}, g.entities...)
	sort.Slice(es, func(i, j int) bool { return es[i].Name < es[j].Name })
	rs := append([]Relation{}, g.relations...)
	sort.Slice(rs, func(i, j int) bool {
		return rs[i].From+"\x00"+rs[i].RelationType+"\x00"+rs[i].To < rs[j].From+"\x00"+rs[j].RelationType+"\x00"+rs[j].To
	})
	return map[string]any{"entities": es, "relations": rs, "journal": append([]string{}, g.journal...)}
}

// Read returns the whole graph.
func (g *Graph) Read() ([]Entity, []Relation) {
	g.mu.Lock()
	defer g.mu.Unlock()
	es := make([]Entity, len(g.entities))
	for i, e := range g.entities {
		e.Observations = append([]string{}, e.Observations...)
		es[i] = e
	}
	return es, append([]Relation{}, g.relations...)
}

// Journal returns the journal's lines.
func (g *Graph) Journal() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string{}, g.journal...)
}

func (g *Graph) find(name string) int {
	for i, e := range g.entities {
		if e.Name == name {
			return i
		}
	}
	return -1
}
