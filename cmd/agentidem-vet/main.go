// Command agentidem-vet reports agent tool calls that are unsafe to retry,
// redeliver or run in parallel. It runs standalone or under go vet:
//
//	agentidem-vet ./...
//	go vet -vettool=$(command -v agentidem-vet) ./...
//
// See package github.com/agentidem/agentidem-go/analyzer for the checks.
package main

import (
	"golang.org/x/tools/go/analysis/multichecker"

	"github.com/agentidem/agentidem-go/analyzer"
)

func main() { multichecker.Main(analyzer.All...) }
