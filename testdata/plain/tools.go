// Package plain holds plain annotated functions: with and without a
// context.Context, with and without an error result, variadic, with
// several and named results.
package plain

import (
	"context"
	"sort"
)

//go:generate go run github.com/agentidem/agentidem-go/cmd/agentidem-gen

// Store is the world the tools act on.
var Store = map[string]int{}

// get reads with a context and an error.
//
//agentidem:read
func get(ctx context.Context, id string) (int, error) {
	return Store[id], nil
}

// put writes with a context and an error.
//
//agentidem:write identity=id
func put(ctx context.Context, id string, n int) error {
	Store[id] = n
	return nil
}

// count reads without a context or an error.
//
//agentidem:read
func count() int { return len(Store) }

// bump writes without an error result: traced, but no fault can be injected.
//
//agentidem:write identity=id
func bump(id string) {
	Store[id]++
}

// putAll writes several ids at once.
//
//agentidem:write identity=ids
func putAll(ctx context.Context, n int, ids ...string) error {
	for _, id := range ids {
		Store[id] = n
	}
	return nil
}

// stats has several named results.
//
//agentidem:read
func stats(ctx context.Context, prefix string) (n, total int, keys []string, err error) {
	for k, v := range Store {
		n++
		total += v
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return n, total, keys, nil
}

// pair has two results and no error.
//
//agentidem:read
func pair(a, b string) (string, string) { return b, a }

// drain reads channels of channels.
//
//agentidem:read
func drain(in chan (<-chan int), out chan<- <-chan string) int { return len(in) }
