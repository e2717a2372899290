package admission

import (
	"bytes"
	"encoding/json"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/internal/strictjson"
)

// Bounds of every document this package decodes.
const (
	maxDocBytes = 256 << 10
	maxDocDepth = 16
)

// strictOptions bounds every document this package decodes.
var strictOptions = strictjson.Options{MaxDepth: maxDocDepth, MaxBytes: maxDocBytes}

// strictUnmarshal decodes untrusted JSON into v (a pointer to one of this
// package's document structs) with internal/strictjson: valid UTF-8, at
// most maxDocBytes and maxDocDepth, exactly one value with nothing after
// it, no duplicate member at any depth, member names spelt exactly as the
// json tags spell them, no unknown member. Failures are refused with
// code, the *strictjson.Error as cause.
func strictUnmarshal(data []byte, v any, code checkfu.Code, what string) error {
	if err := strictjson.Unmarshal(data, v, strictOptions); err != nil {
		return &checkfu.Refusal{Code: code, Message: "admission: " + what, Err: err}
	}
	return nil
}

// strictTree parses data into map[string]any, []any, string, json.Number,
// bool and nil under the same rules (except member names, which need a
// type).
func strictTree(data []byte) (any, error) { return strictjson.Parse(data, strictOptions) }

// canonicalJSON encodes v (one of this package's document structs, whose
// optional fields are omitempty or omitzero) as canonical JSON: members
// sorted by name, no insignificant white space, no HTML escaping, and an
// omitted optional field absent. Digests are computed over these bytes.
func canonicalJSON(v any) ([]byte, error) {
	raw, err := marshalNoEscape(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, err
	}
	return marshalNoEscape(tree) // maps marshal with sorted keys
}

func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
