module github.com/agentidem/agentidem-go/analyzer/golangci

go 1.26.0

replace github.com/agentidem/agentidem-go => ../..

require (
	github.com/agentidem/agentidem-go v0.0.0-00010101000000-000000000000
	github.com/golangci/plugin-module-register v0.1.2
	github.com/stretchr/testify v1.12.1
	golang.org/x/tools v0.52.0
)

require (
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/mod v0.42.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
)
