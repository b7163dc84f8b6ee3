package gotype

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// compile compiles the schema with the JSON Schema library (draft 2020-12, formats
// asserted), so that an invalid schema fails here, with a diagnostic, and not when the
// generated package initialises. The runtime validates with its own code
// (runtime/internal/schema), whose tests hold it to this library's verdicts for every
// golden case and example.
func (c *conv) compile() {
	canon, err := c.schema.Canonical()
	if err != nil {
		c.errorf(c.root, "cannot encode the schema as JSON: %v", err)
		return
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(canon))
	if err != nil {
		c.errorf(c.root, "cannot encode the schema as JSON: %v", err)
		return
	}
	comp := jsonschema.NewCompiler()
	comp.DefaultDraft(jsonschema.Draft2020)
	comp.AssertFormat()
	const url = "jobc:///payload.json"
	if err := comp.AddResource(url, doc); err != nil {
		c.errorf(c.root, "not a valid JSON Schema: %s", compileError(err))
		return
	}
	if _, err := comp.Compile(url); err != nil {
		c.errorf(c.root, "not a valid JSON Schema: %s", compileError(err))
	}
}

func compileError(err error) string {
	msg := strings.ReplaceAll(err.Error(), "jobc:///payload.json", "")
	return strings.Join(strings.Fields(fmt.Sprint(msg)), " ")
}
