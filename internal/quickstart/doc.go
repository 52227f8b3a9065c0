// Package quickstart holds no code: its test follows the README's
// walkthrough "From a module of your own" verbatim, in a fresh module in a
// temporary directory that requires this checkout, so the install lines,
// the go:generate line, the test, its failure text and the report commands
// that a newcomer copies from the README keep working.
package quickstart
