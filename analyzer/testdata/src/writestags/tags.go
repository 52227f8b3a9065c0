// Package writestags holds writes that add rows of one entity (red team
// rtM, L5): two tags of one post commute; two titles of one post race.
package writestags

import (
	"context"
	"database/sql"
	"errors"
	"sync"
)

var DB *sql.DB

// AddTag adds a row per tag, skipping one already there: two tags of one
// post commute.
//
//agentidem:write identity="post, tag" entity=post
func AddTag(ctx context.Context, post, tag string) error {
	_, err := DB.ExecContext(ctx, `INSERT INTO tags (post, tag) VALUES ($1, $2) ON CONFLICT (post, tag) DO NOTHING`, post, tag)
	return err
}

// SetTitle overwrites the title: two at once on one post race.
//
//agentidem:write identity=post entity=post
func SetTitle(ctx context.Context, post, title string) error {
	_, err := DB.ExecContext(ctx, `UPDATE posts SET title = $2 WHERE id = $1`, post, title)
	return err
}

// SetMainTag keeps the first tag of a post: the conflict is on the post,
// so two tags are one row and the first to land wins.
//
//agentidem:write identity="post, tag" entity=post
func SetMainTag(ctx context.Context, post, tag string) error {
	_, err := DB.ExecContext(ctx, `INSERT INTO main_tags (post, tag) VALUES ($1, $2) ON CONFLICT (post) DO NOTHING`, post, tag)
	return err
}

// TagColor upserts: the color of one tag is the last to land.
//
//agentidem:write identity="post, tag" entity=post
func TagColor(ctx context.Context, post, tag, color string) error {
	_, err := DB.ExecContext(ctx, `INSERT INTO tags (post, tag, color) VALUES ($1, $2, $3) ON CONFLICT (post, tag) DO UPDATE SET color = EXCLUDED.color`, post, tag, color)
	return err
}

// AddTagNoted keeps the first note of a tag.
//
//agentidem:write identity="post, tag" entity=post
func AddTagNoted(ctx context.Context, post, tag, note string) error {
	_, err := DB.ExecContext(ctx, `INSERT INTO tags (post, tag, note) VALUES ($1, $2, $3) ON CONFLICT (post, tag) DO NOTHING`, post, tag, note)
	return err
}

// AddTagCounted adds the tag and counts it on the post: the count is a
// write the conflict does not skip.
//
//agentidem:write identity="post, tag" entity=post
func AddTagCounted(ctx context.Context, post, tag string) error {
	if _, err := DB.ExecContext(ctx, `INSERT INTO tags (post, tag) VALUES ($1, $2) ON CONFLICT (post, tag) DO NOTHING`, post, tag); err != nil {
		return err
	}
	_, err := DB.ExecContext(ctx, `UPDATE posts SET tags = tags + 1 WHERE id = $1`, post)
	return err
}

func TwoTagsLiteral(ctx context.Context, post string) error {
	var wg sync.WaitGroup
	var e1, e2 error
	wg.Go(func() { e1 = AddTagTraced(ctx, post, "go") })
	wg.Go(func() { e2 = AddTagTraced(ctx, post, "sql") })
	wg.Wait()
	return errors.Join(e1, e2)
}

// Two variables may hold one tag: then both add one row, as one call does.
func TwoTagsVars(ctx context.Context, post, a, b string) error {
	var wg sync.WaitGroup
	var e1, e2 error
	wg.Go(func() { e1 = AddTagTraced(ctx, post, a) })
	wg.Go(func() { e2 = AddTagTraced(ctx, post, b) })
	wg.Wait()
	return errors.Join(e1, e2)
}

func TwoTitles(ctx context.Context, post string) error {
	var wg sync.WaitGroup
	var e1, e2 error
	wg.Go(func() { e1 = SetTitleTraced(ctx, post, "A") })
	wg.Go(func() { e2 = SetTitleTraced(ctx, post, "B") }) // want `two SetTitle writes on the same entity \(post\) start in one concurrent batch`
	wg.Wait()
	return errors.Join(e1, e2)
}

func TwoMainTags(ctx context.Context, post string) error {
	var wg sync.WaitGroup
	var e1, e2 error
	wg.Go(func() { e1 = SetMainTagTraced(ctx, post, "go") })
	wg.Go(func() { e2 = SetMainTagTraced(ctx, post, "sql") }) // want `two SetMainTag writes on the same entity \(post\)`
	wg.Wait()
	return errors.Join(e1, e2)
}

func TwoColors(ctx context.Context, post string) error {
	var wg sync.WaitGroup
	var e1, e2 error
	wg.Go(func() { e1 = TagColorTraced(ctx, post, "go", "red") })
	wg.Go(func() { e2 = TagColorTraced(ctx, post, "go", "blue") }) // want `two TagColor writes on the same entity \(post\)`
	wg.Wait()
	return errors.Join(e1, e2)
}

// Two tags that differ as constants are two rows, whatever their notes.
func TwoNotedTags(ctx context.Context, post string) error {
	var wg sync.WaitGroup
	var e1, e2 error
	wg.Go(func() { e1 = AddTagNotedTraced(ctx, post, "go", "first") })
	wg.Go(func() { e2 = AddTagNotedTraced(ctx, post, "sql", "second") })
	wg.Wait()
	return errors.Join(e1, e2)
}

// Two variables may hold one tag, whose note is then the first to land.
func TwoNotedVars(ctx context.Context, post, a, b string) error {
	var wg sync.WaitGroup
	var e1, e2 error
	wg.Go(func() { e1 = AddTagNotedTraced(ctx, post, a, "first") })
	wg.Go(func() { e2 = AddTagNotedTraced(ctx, post, b, "second") }) // want `two AddTagNoted writes on the same entity \(post\)`
	wg.Wait()
	return errors.Join(e1, e2)
}

func TwoCountedTags(ctx context.Context, post string) error {
	var wg sync.WaitGroup
	var e1, e2 error
	wg.Go(func() { e1 = AddTagCountedTraced(ctx, post, "go") })
	wg.Go(func() { e2 = AddTagCountedTraced(ctx, post, "sql") }) // want `two AddTagCounted writes on the same entity \(post\)`
	wg.Wait()
	return errors.Join(e1, e2)
}
