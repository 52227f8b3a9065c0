// Package reportschema validates reports against runtime.ReportSchema, for
// the repository's own tests.
package reportschema

import (
	"bytes"
	"encoding/json"
	"fmt"

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

// ValidateJSON checks an encoded report against the schema.
func ValidateJSON(b []byte) error {
	schemaDoc, err := jsonschema.UnmarshalJSON(bytes.NewReader(runtime.ReportSchema))
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
		return fmt.Errorf("report does not match runtime/report.schema.json: %w", err)
	}
	var probe map[string]any
	return json.Unmarshal(b, &probe)
}
