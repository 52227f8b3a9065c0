package writestags

import (
	"context"
	"errors"
	"sync"
)

// The turns of a loop that starts a goroutine each run at once, as calls
// written out do: the same verdict either way.

func TagsLoop(ctx context.Context, post string) error {
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, tag := range []string{"go", "sql"} {
		wg.Go(func() { errs[i] = AddTagTraced(ctx, post, tag) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

func TitlesLoop(ctx context.Context, post string, titles []string) {
	var wg sync.WaitGroup
	for _, t := range titles {
		wg.Go(func() { SetTitleTraced(ctx, post, t) }) // want `SetTitle writes on the same entity \(post\) start at each turn of a loop \(line 24\)`
	}
	wg.Wait()
}

func MainTagsLoop(ctx context.Context, post string, tags []string) {
	var wg sync.WaitGroup
	for _, t := range tags {
		wg.Go(func() { SetMainTagTraced(ctx, post, t) }) // want `SetMainTag writes on the same entity \(post\) start at each turn`
	}
	wg.Wait()
}

// The note differs between turns: two equal tags are one row whose note
// is the first to land.
func NotedLoop(ctx context.Context, post string, tags, notes []string) {
	var wg sync.WaitGroup
	for i, t := range tags {
		wg.Go(func() { AddTagNotedTraced(ctx, post, t, notes[i]) }) // want `AddTagNoted writes on the same entity \(post\) start at each turn`
	}
	wg.Wait()
}

// One post per turn: no two turns write one entity.
func PostsLoop(ctx context.Context, posts []string) {
	var wg sync.WaitGroup
	for _, p := range posts {
		wg.Go(func() { SetTitleTraced(ctx, p, "draft") })
	}
	wg.Wait()
}

func PostsIndexLoop(ctx context.Context, posts []string) {
	var wg sync.WaitGroup
	for i := 0; i < len(posts); i++ {
		post := posts[i]
		wg.Go(func() { SetTitleTraced(ctx, post, "draft") })
	}
	wg.Wait()
}

func PostsAssignedLoop(ctx context.Context, posts []string) {
	var wg sync.WaitGroup
	var post string
	for i := range posts {
		post = posts[i]
		go SetTitleTraced(ctx, post, "draft")
	}
	wg.Wait()
}

// Each turn waits for its goroutine: one after the other.
func WaitEachTurn(ctx context.Context, post string, titles []string) {
	var wg sync.WaitGroup
	for _, t := range titles {
		wg.Go(func() { SetTitleTraced(ctx, post, t) })
		wg.Wait()
	}
}

// A semaphore with room for one runs the turns one after the other.
func SemaphoreLoop(ctx context.Context, post string, titles []string) {
	sem := make(chan struct{}, 1)
	for _, t := range titles {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			SetTitleTraced(ctx, post, t)
		}()
	}
}

// A lock around each write keeps them apart, not in order: the last to
// take it wins.
func LockedLoop(ctx context.Context, post string, titles []string) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, t := range titles {
		wg.Go(func() {
			mu.Lock()
			defer mu.Unlock()
			SetTitleTraced(ctx, post, t) // want `SetTitle writes on the same entity \(post\) start at each turn`
		})
	}
	wg.Wait()
}

// A loop inside one goroutine runs its turns one after the other.
func LoopInGoroutine(ctx context.Context, post string, titles []string) {
	var wg sync.WaitGroup
	wg.Go(func() {
		for _, t := range titles {
			SetTitleTraced(ctx, post, t)
		}
	})
	wg.Wait()
}

// Turns paced by a ticker, one title per tick.
func TickerLoop(ctx context.Context, post string, ticks <-chan string) {
	for t := range ticks {
		go SetTitleTraced(ctx, post, t)
	}
}
