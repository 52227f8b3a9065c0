// Package todo is a to-do assistant built on Eino's ReAct agent, in the
// shape of the Eino quickstart's todo agent: add_todo appends an item,
// update_todo sets the fields of one, list_todo reads them. Its tools run
// through Eino's ToolsNode with the agentidem middleware.
//
// update_todo is idempotent by nature (setting done=true twice leaves one
// item done); add_todo is not (two calls, two items). The tests show what
// agentidem makes of it: without a declaration every repeat of update_todo
// is reported as a duplicate (false alarms); declared Idempotent in the
// tool's Spec, or judged by a State snapshot of the list, it is absorbed,
// and add_todo appended twice after a crash is still caught.
package todo

import (
	"context"
	"fmt"
	"sync"
)

// Item is one to-do.
type Item struct {
	ID      int    `json:"id"`
	Content string `json:"content"`
	Done    bool   `json:"done"`
}

// List is the to-do list. Safe for concurrent use.
type List struct {
	mu    sync.Mutex
	items []Item
}

// NewList returns a list holding the given contents, not done, numbered
// from 1.
func NewList(contents ...string) *List {
	l := &List{}
	for _, c := range contents {
		l.items = append(l.items, Item{ID: len(l.items) + 1, Content: c})
	}
	return l
}

// AddIn is the input of add_todo.
type AddIn struct {
	Content string `json:"content" jsonschema:"description=what to do"`
}

// UpdateIn is the input of update_todo: the fields given are set.
type UpdateIn struct {
	ID      int     `json:"id" jsonschema:"description=id of the item"`
	Content *string `json:"content,omitempty" jsonschema:"description=new text"`
	Done    *bool   `json:"done,omitempty" jsonschema:"description=whether it is done"`
}

// ListIn is the input of list_todo.
type ListIn struct {
	Done *bool `json:"done,omitempty" jsonschema:"description=only items with this state"`
}

// Add appends an item (add_todo): every call adds one.
func (l *List) Add(_ context.Context, in AddIn) (Item, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	it := Item{ID: len(l.items) + 1, Content: in.Content}
	l.items = append(l.items, it)
	return it, nil
}

// Update sets the given fields of an item (update_todo): a repeat with the
// same arguments changes nothing.
func (l *List) Update(_ context.Context, in UpdateIn) (Item, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range l.items {
		if l.items[i].ID != in.ID {
			continue
		}
		if in.Content != nil {
			l.items[i].Content = *in.Content
		}
		if in.Done != nil {
			l.items[i].Done = *in.Done
		}
		return l.items[i], nil
	}
	return Item{}, fmt.Errorf("no to-do with id %d", in.ID)
}

// Items lists the items (list_todo), all or those with the given state.
func (l *List) Items(_ context.Context, in ListIn) ([]Item, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := []Item{}
	for _, it := range l.items {
		if in.Done == nil || it.Done == *in.Done {
			out = append(out, it)
		}
	}
	return out, nil
}

// Snapshot is the list's observable state, for testkit.State.
func (l *List) Snapshot() any {
	l.mu.Lock()
	defer l.mu.Unlock()
	return map[string]any{"todos": append([]Item{}, l.items...)}
}
