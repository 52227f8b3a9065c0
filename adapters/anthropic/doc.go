// Package agentidemanthropic runs the tools of an agent built on the
// official Anthropic Go SDK (github.com/anthropics/anthropic-sdk-go/v2)
// through agentidem, so that the fault suite and the schedule explorer of
// package testkit test the SDK's own tool runner, parallel dispatch
// included.
//
// Say what each tool is, by the name the model calls it, and give the
// runner the wrapped tools:
//
//	specs := agentidemanthropic.Tools{
//		"createInvoice": agentidemanthropic.Write(agentidemanthropic.Identity("invoice_id")),
//		"attachInvoice": agentidemanthropic.Write(agentidemanthropic.Identity("invoice_id", "order_id"),
//			agentidemanthropic.Entity("invoice_id"), agentidemanthropic.After("createInvoice")),
//	}
//	runner := client.Beta.Messages.NewToolRunner(agentidemanthropic.Wrap(specs, tools), params)
//
// Identity, Entity and Redact name fields of the tool's JSON input;
// IdentityFunc and EntityFunc compute them. After declares a happens-before
// between ops: the tool runner executes the tool calls of one assistant
// turn concurrently, so a model that asks for a call and the call that
// depends on it in one turn is a dependent_calls_concurrent finding.
//
// An error returned by a tool, an injected fault included, becomes a
// tool_result block with is_error set, as the runner does for any tool
// error: the conversation goes on and the model sees the error. The run
// travels in the context.Context given to RunToCompletion (or NextMessage,
// All); the runner hands it to every tool. When no run is active, a wrapped
// tool calls the tool directly.
package agentidemanthropic
