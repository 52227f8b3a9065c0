// Package agentidemmcp runs the tool calls of an MCP server through
// agentidem, so that the fault suite and the schedule explorer of package
// testkit test an agent whose tools are served over the Model Context
// Protocol, through the real server and client.
//
// Tools maps each tool name to a Spec, built with Read or Write:
//
//	tools := agentidemmcp.Tools{
//		"get_payment": agentidemmcp.Read(agentidemmcp.Entity("payment_id")),
//		"refund":      agentidemmcp.Write(agentidemmcp.Identity("payment_id"), agentidemmcp.Redact("card_token")),
//	}
//
// and the SDK packages turn it into middleware: package mcpgo for
// github.com/mark3labs/mcp-go (server.WithToolHandlerMiddleware), package
// gosdk for github.com/modelcontextprotocol/go-sdk
// (AddReceivingMiddleware on the server, AddSendingMiddleware on the
// client). New and Call do the same for any other server.
//
// For every call of a listed tool the middleware does what a generated
// wrapper does for an annotated function: it records the call with its
// arguments (redacted), identity and entity, waits at the scheduler's
// gates, lets the runtime inject a fault instead of running the tool or
// instead of its answer, and records the outcome. A result with isError set
// is a failed call. When no run is active, the tool is called directly.
//
// The middlewares also read the server's own tool annotations: readOnlyHint
// makes a tool a read and idempotentHint an idempotent write (a repeat with
// equal arguments is absorbed, never a duplicate), whether or not Tools
// lists it; see Registry.SetHints and toolspec.Hints.
package agentidemmcp
