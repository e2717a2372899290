package authz

import (
	"encoding/json"
	"math/big"
	"slices"
	"strings"
)

// A quickSchema is a tool's input schema written in the small subset of
// JSON Schema most tool descriptors use, checked directly: the schema
// validator allocates some fifteen times for even the smallest schema
// on every call. It only ever accepts: arguments it does not accept go
// to the schema validator, whose answer (and error) stands. A rapid
// property and a fuzz target hold its acceptance to the validator's.
//
// The subset: an object of the keywords type (one of the seven JSON
// types, a string), enum (a non-empty array of strings), properties
// (each a schema of the subset), required (an array of strings) and
// additionalProperties (a boolean), and the annotations title,
// description, $comment, default and examples. A schema with any other
// keyword, or any of these in another form, has no quickSchema.
type quickSchema struct {
	typ        string // "" when the schema names no type
	enum       []string
	properties map[string]*quickSchema
	required   []string
	closed     bool // additionalProperties is false
}

// quickAnnotations are the keywords that assert nothing.
var quickAnnotations = []string{"title", "description", "$comment", "default", "examples"}

// quickTypes are the values of type the subset takes.
var quickTypes = []string{"object", "array", "string", "number", "integer", "boolean", "null"}

// quickSchemaOf returns the quickSchema of raw, a schema decoded by
// parseStrictJSON, and false when it is not in the subset.
func quickSchemaOf(raw any) (*quickSchema, bool) {
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, false
	}
	q := &quickSchema{}
	for k, v := range m {
		switch k {
		case "type":
			t, ok := v.(string)
			if !ok || !slices.Contains(quickTypes, t) {
				return nil, false
			}
			q.typ = t
		case "enum":
			items, ok := v.([]any)
			if !ok || len(items) == 0 {
				return nil, false
			}
			q.enum = make([]string, 0, len(items))
			for _, it := range items {
				s, ok := it.(string)
				if !ok {
					return nil, false
				}
				q.enum = append(q.enum, s)
			}
		case "properties":
			props, ok := v.(map[string]any)
			if !ok {
				return nil, false
			}
			q.properties = make(map[string]*quickSchema, len(props))
			for name, p := range props {
				sub, ok := quickSchemaOf(p)
				if !ok {
					return nil, false
				}
				q.properties[name] = sub
			}
		case "required":
			names, ok := v.([]any)
			if !ok {
				return nil, false
			}
			for _, n := range names {
				s, ok := n.(string)
				if !ok {
					return nil, false
				}
				q.required = append(q.required, s)
			}
		case "additionalProperties":
			b, ok := v.(bool)
			if !ok {
				return nil, false
			}
			q.closed = !b
		default:
			if !slices.Contains(quickAnnotations, k) {
				return nil, false
			}
		}
	}
	return q, true
}

// accepts reports whether v, a value decoded by parseStrictJSON,
// satisfies q. False means only that the schema validator decides.
func (q *quickSchema) accepts(v any) bool {
	switch v.(type) {
	case nil, bool, string, json.Number, []any, map[string]any:
	default:
		return false // not a JSON value: the validator refuses it
	}
	if q.typ != "" && !quickType(q.typ, v) {
		return false
	}
	if q.enum != nil {
		s, ok := v.(string)
		if !ok || !slices.Contains(q.enum, s) {
			return false
		}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return true
	}
	for _, name := range q.required {
		if _, ok := m[name]; !ok {
			return false
		}
	}
	for name, e := range m {
		sub, ok := q.properties[name]
		if !ok {
			if q.closed {
				return false
			}
			continue
		}
		if !sub.accepts(e) {
			return false
		}
	}
	return true
}

// quickType reports whether v is of the JSON Schema type t, as the
// schema validator decides it: an integer is a number whose value is
// whole, however it is written (1.0 and 1e2 are integers).
func quickType(t string, v any) bool {
	switch v := v.(type) {
	case nil:
		return t == "null"
	case bool:
		return t == "boolean"
	case string:
		return t == "string"
	case []any:
		return t == "array"
	case map[string]any:
		return t == "object"
	case json.Number:
		switch t {
		case "number":
			return true
		case "integer":
			if !strings.ContainsAny(string(v), ".eE") {
				return true
			}
			r, ok := new(big.Rat).SetString(string(v))
			return ok && r.IsInt()
		}
	}
	return false
}
