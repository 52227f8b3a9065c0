// Package agentidemeino runs the tool calls of an Eino agent
// (github.com/cloudwego/eino) through agentidem, so that the fault suite and
// the schedule explorer of package testkit test an agent built on Eino's
// own ToolsNode, parallel dispatch included.
//
// Map each tool name to what it is, and put the middleware in the tools
// node config:
//
//	tools := agentidemeino.Tools{
//		"createInvoice": agentidemeino.Write(agentidemeino.Identity("invoice_id")),
//		"attachInvoice": agentidemeino.Write(agentidemeino.Identity("invoice_id", "order_id"),
//			agentidemeino.Entity("invoice_id"), agentidemeino.After("createInvoice")),
//	}
//	cfg.ToolsConfig.ToolCallMiddlewares = append(cfg.ToolsConfig.ToolCallMiddlewares, agentidemeino.Middleware(tools))
//
// Identity, Entity and Redact name fields of the call's JSON arguments;
// IdentityFunc and EntityFunc compute them. After declares a happens-before
// between ops: Eino runs the tool calls of one model turn in parallel by
// default, so a model that emits a call and the call that depends on it in
// one turn is a dependent_calls_concurrent finding.
//
// The run travels in the context.Context that the agent's Generate gets;
// Eino hands it down to every tool call, including those it runs on
// goroutines of its own. When no run is active, the middleware calls the
// tool directly.
package agentidemeino
