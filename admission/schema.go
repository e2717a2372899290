package admission

import (
	"bytes"
	_ "embed"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/checkfu/checkfu"
)

// ProfileSchema returns the JSON Schema (draft 2020-12) of a
// SandboxProfile document, shipped in the package. [ParseProfile]
// validates every document against it before decoding. Each call
// returns a new copy; the schema ParseProfile uses was compiled from the
// shipped bytes once, and nothing a caller does to a copy reaches it.
func ProfileSchema() []byte { return bytes.Clone(profileSchemaJSON) }

//go:embed schema/sandbox_profile.v1.json
var profileSchemaJSON []byte

const profileSchemaURL = "https://schemas.checkfu.dev/sandbox-profile.v1.json"

// profileSchema is the shipped schema compiled once; a schema that does not
// compile is a build defect, caught by every test run.
var profileSchema = func() *jsonschema.Schema {
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	if err := c.AddResource(profileSchemaURL, bytes.NewReader(profileSchemaJSON)); err != nil {
		panic("admission: shipped profile schema: " + err.Error())
	}
	return c.MustCompile(profileSchemaURL)
}()

// schemaError returns the deepest, first schema violation of err as
// "at /path: message", without quoting values.
func schemaError(err error) string {
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return "does not match the schema"
	}
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	loc := ve.InstanceLocation
	if loc == "" {
		loc = "/"
	}
	msg, _, _ := strings.Cut(ve.Message, "\n")
	return fmt.Sprintf("at %s: %s", checkfu.Quote(loc), checkfu.Quote(msg))
}
