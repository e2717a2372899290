package authz

import (
	"encoding/json"
	"fmt"
	"testing"

	"pgregory.net/rapid"
)

// quickNames and quickStrings are the small pools the generators draw
// names and strings from, so that drawn values often meet drawn schemas.
var (
	quickNames   = []string{"a", "b", "state", "State", "é"}
	quickStrings = []string{"", "a", "open", "closed", "Open"}
	quickNumbers = []string{"0", "-0", "1", "-1", "1.0", "1.5", "1e2", "2E-1", "0.0", "10e-1", "12345678901234567890"}
)

// drawQuickSchema draws a schema of quickSchema's subset (with
// outside, possibly a keyword outside it), as a JSON value.
func drawQuickSchema(t *rapid.T, depth int, outside bool, label string) map[string]any {
	s := map[string]any{}
	if rapid.Float64Range(0, 1).Draw(t, label+"type?") < 0.6 {
		s["type"] = rapid.SampledFrom(quickTypes).Draw(t, label+"type")
	}
	if rapid.Float64Range(0, 1).Draw(t, label+"enum?") < 0.3 {
		n := rapid.IntRange(1, 3).Draw(t, label+"enum n")
		var enum []any
		for i := range n {
			enum = append(enum, rapid.SampledFrom(quickStrings).Draw(t, fmt.Sprintf("%senum%d", label, i)))
		}
		s["enum"] = enum
	}
	if depth > 0 && rapid.Float64Range(0, 1).Draw(t, label+"properties?") < 0.7 {
		props := map[string]any{}
		for _, name := range quickNames {
			if rapid.Float64Range(0, 1).Draw(t, label+"has "+name) < 0.4 {
				props[name] = drawQuickSchema(t, depth-1, outside, label+name+"/")
			}
		}
		s["properties"] = props
	}
	if rapid.Float64Range(0, 1).Draw(t, label+"required?") < 0.4 {
		req := []any{}
		for _, name := range quickNames {
			if rapid.Float64Range(0, 1).Draw(t, label+"requires "+name) < 0.3 {
				req = append(req, name)
			}
		}
		s["required"] = req
	}
	if rapid.Float64Range(0, 1).Draw(t, label+"additional?") < 0.5 {
		s["additionalProperties"] = rapid.Bool().Draw(t, label+"additional")
	}
	if rapid.Float64Range(0, 1).Draw(t, label+"description?") < 0.2 {
		s["description"] = "what it is"
	}
	if outside && rapid.Float64Range(0, 1).Draw(t, label+"outside?") < 0.2 {
		switch rapid.IntRange(0, 5).Draw(t, label+"outside") {
		case 0:
			s["minLength"] = 2
		case 1:
			s["maximum"] = 3
		case 2:
			s["format"] = "date"
		case 3:
			s["type"] = []any{"string", "null"}
		case 4:
			s["additionalProperties"] = map[string]any{"type": "string"}
		case 5:
			s["enum"] = []any{1, "a"}
		}
	}
	return s
}

// drawQuickValue draws a JSON value as parseStrictJSON decodes one.
func drawQuickValue(t *rapid.T, depth int, label string) any {
	kinds := 6
	if depth > 0 {
		kinds = 8
	}
	switch rapid.IntRange(0, kinds-1).Draw(t, label+"kind") {
	case 0:
		return nil
	case 1:
		return rapid.Bool().Draw(t, label+"bool")
	case 2, 3:
		return rapid.SampledFrom(quickStrings).Draw(t, label+"string")
	case 4, 5:
		return json.Number(rapid.SampledFrom(quickNumbers).Draw(t, label+"number"))
	case 6:
		n := rapid.IntRange(0, 2).Draw(t, label+"len")
		a := make([]any, n)
		for i := range a {
			a[i] = drawQuickValue(t, depth-1, fmt.Sprintf("%s%d/", label, i))
		}
		return a
	default:
		m := map[string]any{}
		for _, name := range quickNames {
			if rapid.Float64Range(0, 1).Draw(t, label+"member "+name) < 0.5 {
				m[name] = drawQuickValue(t, depth-1, label+name+"/")
			}
		}
		return m
	}
}

// quickOf compiles raw both ways: the schema validator, and quickSchema
// (nil when raw is outside its subset). ok is false when the validator
// does not compile raw.
func quickOf(raw []byte) (validate func(any) bool, quick *quickSchema, ok bool) {
	bad := func(format string, args ...any) error { return fmt.Errorf(format, args...) }
	s, err := compileSchema("quick", raw, bad)
	if err != nil {
		return nil, nil, false
	}
	tree, err := parseStrictJSON(raw)
	if err != nil {
		return nil, nil, false
	}
	quick, _ = quickSchemaOf(tree)
	return func(v any) bool { return s.Validate(v) == nil }, quick, true
}

// TestQuickSchemaIsTheValidator holds the quick check to the schema
// validator it stands in for: on any schema of its subset and any
// value, it accepts exactly what the validator accepts; and a schema
// with a keyword outside the subset has no quick check.
func TestQuickSchemaIsTheValidator(t *testing.T) {
	var accepted, refused int
	rapid.Check(t, func(t *rapid.T) {
		outside := rapid.Bool().Draw(t, "outside")
		raw, err := json.Marshal(drawQuickSchema(t, 2, outside, ""))
		if err != nil {
			t.Fatal(err)
		}
		validate, quick, ok := quickOf(raw)
		if !ok {
			t.Fatalf("the validator does not compile the drawn schema %s", raw)
		}
		if quick == nil {
			if !outside {
				t.Fatalf("schema %s is in the subset, and has no quick check", raw)
			}
			return
		}
		for i := range 8 {
			v := drawQuickValue(t, 2, fmt.Sprintf("v%d/", i))
			got, want := quick.accepts(v), validate(v)
			if got != want {
				doc, _ := json.Marshal(v)
				t.Fatalf("schema %s, arguments %s: the quick check accepts = %v, the validator %v", raw, doc, got, want)
			}
			if got {
				accepted++
			} else {
				refused++
			}
		}
	})
	if accepted == 0 || refused == 0 {
		t.Fatalf("the draws were one-sided: %d accepted, %d refused", accepted, refused)
	}
}

// TestQuickSchemaSubset: the schemas of the registrations the gateway's
// examples use are in the subset, and a few near misses are not.
func TestQuickSchemaSubset(t *testing.T) {
	for raw, want := range map[string]bool{
		`{"type":"object","properties":{"state":{"enum":["open","closed"]}},"additionalProperties":false}`:          true,
		`{"type":"object","properties":{"title":{"type":"string","description":"the title"}},"required":["title"]}`: true,
		`{"type":"object"}`: true,
		`{}`:                true,
		`{"type":"object","properties":{"n":{"type":"integer","minimum":1}}}`:                false,
		`{"type":"object","properties":{"s":{"type":"string","format":"email"}}}`:            false,
		`{"type":"object","$ref":"#/$defs/x","$defs":{"x":{}}}`:                              false,
		`{"type":"object","patternProperties":{"^a":{"type":"string"}}}`:                     false,
		`{"type":["object","null"]}`:                                                         false,
		`{"type":"object","properties":{"a":true}}`:                                          false,
		`{"type":"object","additionalProperties":{"type":"string"}}`:                         false,
		`{"type":"object","enum":[]}`:                                                        false,
		`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object"}`:         false,
		`{"type":"object","unevaluatedProperties":false,"properties":{"a":{}}}`:              false,
		`{"type":"object","properties":{"a":{"enum":["x",1]}},"additionalProperties":false}`: false,
	} {
		_, quick, ok := quickOf([]byte(raw))
		if !ok {
			t.Fatalf("the validator does not compile %s", raw)
		}
		if got := quick != nil; got != want {
			t.Errorf("quickSchemaOf(%s) in the subset = %v, want %v", raw, got, want)
		}
	}
}

// FuzzQuickSchema: for any schema the validator compiles and the quick
// check covers, and any strict arguments, the two agree.
func FuzzQuickSchema(f *testing.F) {
	for _, seed := range [][2]string{
		{`{"type":"object","properties":{"state":{"enum":["open","closed"]}},"additionalProperties":false}`, `{"state":"open"}`},
		{`{"type":"object","properties":{"state":{"enum":["open","closed"]}},"additionalProperties":false}`, `{"state":"OPEN"}`},
		{`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`, `{"n":1.0}`},
		{`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`, `{"n":1.5e0}`},
		{`{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"null"}},"additionalProperties":false}}}`, `{"a":{"b":null}}`},
		{`{"type":"array"}`, `[1,"a",{}]`},
		{`{"type":"string","enum":["é"]}`, `"\u00e9"`},
	} {
		f.Add([]byte(seed[0]), []byte(seed[1]))
	}
	f.Fuzz(func(t *testing.T, schema, args []byte) {
		// Only schemas of the subset matter, and the validator's compiler
		// (which checks a schema against the meta-schema) is slow on
		// deep documents: the subset is asked first, and schemas are
		// kept to the size of a tool descriptor's.
		if len(schema) > 1024 {
			return
		}
		if tree, err := parseStrictJSON(schema); err != nil {
			return
		} else if _, ok := quickSchemaOf(tree); !ok {
			return
		}
		validate, quick, ok := quickOf(schema)
		if !ok || quick == nil {
			return
		}
		v, err := parseStrictJSON(args)
		if err != nil {
			return
		}
		if got, want := quick.accepts(v), validate(v); got != want {
			t.Fatalf("schema %s, arguments %s: the quick check accepts = %v, the validator %v", schema, args, got, want)
		}
	})
}
