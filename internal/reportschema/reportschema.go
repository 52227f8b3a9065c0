// Package reportschema validates reports against runtime.ReportSchema (and
// reports of schema_version "1" against the schema of that version), for
// the repository's own tests and for agentidem-gen report, which refuses a
// file that is not a report instead of rendering it.
package reportschema

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Validate encodes rep as WriteJSON does and checks it against the schema.
func Validate(rep *runtime.Report) error {
	var buf bytes.Buffer
	if err := rep.WriteJSON(&buf); err != nil {
		return err
	}
	return ValidateJSON(buf.Bytes())
}

// v1Schema is runtime/report.schema.json as it was for schema_version "1",
// which runtime.ReadReport still reads.
//
//go:embed report.v1.schema.json
var v1Schema []byte

// ValidateJSON checks an encoded report against the schema of its
// schema_version. The error names what is missing or wrong, with the JSON
// path of each place ("at '/results/0': missing property 'scenario'").
func ValidateJSON(b []byte) error {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(b, &probe); err != nil {
		return fmt.Errorf("not a report: a report is a JSON object (%w)", err)
	}
	schema, name := runtime.ReportSchema, "runtime/report.schema.json"
	if string(probe["schema_version"]) == `"1"` {
		schema, name = v1Schema, "the schema_version 1 report schema"
	}
	schemaDoc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return fmt.Errorf("reading the schema: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("report.schema.json", schemaDoc); err != nil {
		return err
	}
	sch, err := c.Compile("report.schema.json")
	if err != nil {
		return fmt.Errorf("compiling the schema: %w", err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return err
	}
	if err := sch.Validate(doc); err != nil {
		return fmt.Errorf("report does not match %s: %s", name, describe(err))
	}
	return nil
}

// describe lists the leaf problems of a validation error on one line each,
// without the schema's internal URL.
func describe(err error) string {
	msg := err.Error()
	lines := strings.Split(msg, "\n")
	var out []string
	for _, l := range lines[1:] {
		if l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "- ")); l != "" {
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		return msg
	}
	return strings.Join(out, "; ")
}
