package admission

import (
	"bytes"
	"encoding/json"
	"errors"

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
//
// A string that is not valid UTF-8 is refused: encoding/json would write
// each invalid byte as U+FFFD, so values differing only in invalid bytes
// would share one encoding (and one digest or signature).
func canonicalJSON(v any) ([]byte, error) {
	raw, err := marshalNoEscape(v)
	if err != nil {
		return nil, err
	}
	if replacedInvalidUTF8(raw) {
		return nil, errInvalidUTF8
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

var errInvalidUTF8 = errors.New("admission: a string is not valid UTF-8")

// replacedInvalidUTF8 reports whether encoding/json output b holds the
// escape \ufffd, which the encoder writes only for an invalid byte (a
// valid U+FFFD is written as itself). Backslashes occur in JSON only
// inside strings, each starting an escape, so skipping the escaped
// character keeps the scan aligned.
func replacedInvalidUTF8(b []byte) bool {
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		if bytes.HasPrefix(b[i+1:], []byte("ufffd")) {
			return true
		}
		i++
	}
	return false
}
