package agentidemeino

import (
	"context"
	"fmt"

	"github.com/cloudwego/eino/components/tool"
)

// Check returns an error naming each key of tools that misspells one of
// the node's tools (the key names none of them, while a tool no key names
// is spelt nearly like it: "bookRoom" for book_room), with the tool it
// misspells; nil when none does, or when a tool cannot say its name.
//
// Middleware cannot do it itself: Eino hands a tool middleware the calls,
// never the node's tools, and the call of a tool with no key looks the same
// whether the tool was left out on purpose or its key was misspelt. Left
// alone, a misspelt key leaves its tool untraced and never faulted, and the
// suite may pass an agent it never tested. Call Check where the node's
// config is built, with the tools it is given:
//
//	if err := agentidemeino.Check(ctx, tools, cfg.ToolsConfig.Tools); err != nil {
//		return err
//	}
//
// A key that names none of the node's tools and is near none of them is
// not an error: one Tools map may describe the tools of several nodes.
func Check(ctx context.Context, tools Tools, node []tool.BaseTool) error {
	names := make([]string, 0, len(node))
	for _, t := range node {
		if t == nil {
			continue
		}
		info, err := t.Info(ctx)
		if err != nil || info == nil {
			return nil // a name not known is not taken for a misspelling
		}
		names = append(names, info.Name)
	}
	if err := tools.Misspelt(names); err != nil {
		return fmt.Errorf("agentidemeino: %w", err)
	}
	return nil
}
