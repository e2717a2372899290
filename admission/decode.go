package admission

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/checkfu/checkfu"
)

// Bounds of every document this package decodes.
const (
	maxDocBytes = 256 << 10
	maxDocDepth = 16
)

// strictUnmarshal decodes untrusted JSON into v (a pointer to one of this
// package's document structs): valid UTF-8, at most maxDocBytes and
// maxDocDepth, exactly one value with nothing after it, no duplicate
// member at any depth, member names spelt exactly as the json tags spell
// them, no unknown member. Failures are refused with code.
//
// It is the package's one strict decoder, written to be replaced by
// internal/strictjson (strictjson.Unmarshal) when that lands: callers
// depend only on this signature.
func strictUnmarshal(data []byte, v any, code checkfu.Code, what string) error {
	tree, err := strictTree(data)
	if err != nil {
		return checkfu.Refuse(code, "admission: %s: %v", what, err)
	}
	if err := exactKeys(tree, reflect.TypeOf(v).Elem(), "$"); err != nil {
		return checkfu.Refuse(code, "admission: %s: %v", what, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var r *checkfu.Refusal
		if errors.As(err, &r) {
			return &checkfu.Refusal{Code: code, Message: "admission: " + what, Err: r}
		}
		return checkfu.Refuse(code, "admission: %s: %s", what, describeJSON(err))
	}
	return nil
}

// strictTree parses data into map[string]any, []any, string, json.Number,
// bool and nil under the rules of strictUnmarshal (except key spelling,
// which needs a type).
func strictTree(data []byte) (any, error) {
	if len(data) > maxDocBytes {
		return nil, fmt.Errorf("document is %d bytes (at most %d)", len(data), maxDocBytes)
	}
	if !utf8.Valid(data) {
		return nil, errors.New("document is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := treeValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON value")
	}
	return v, nil
}

func treeValue(dec *json.Decoder, depth int) (any, error) {
	if depth > maxDocDepth {
		return nil, fmt.Errorf("nested deeper than %d", maxDocDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, errors.New("not a single JSON value")
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			obj := map[string]any{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, errors.New("malformed object")
				}
				k := kt.(string)
				if _, dup := obj[k]; dup {
					return nil, fmt.Errorf("member %s appears twice", quote(k))
				}
				if obj[k], err = treeValue(dec, depth+1); err != nil {
					return nil, err
				}
			}
			if _, err := dec.Token(); err != nil {
				return nil, errors.New("malformed object")
			}
			return obj, nil
		case '[':
			arr := []any{}
			for dec.More() {
				e, err := treeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				arr = append(arr, e)
			}
			if _, err := dec.Token(); err != nil {
				return nil, errors.New("malformed array")
			}
			return arr, nil
		}
		return nil, errors.New("malformed JSON")
	}
	return tok, nil
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
var textUnmarshalerType = reflect.TypeFor[interface{ UnmarshalText([]byte) error }]()

// exactKeys checks that every object member in tree is spelt exactly as a
// json tag of the struct type t spells it (encoding/json would fold case).
// Types with their own UnmarshalJSON check themselves.
func exactKeys(tree any, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) || reflect.PointerTo(t).Implements(textUnmarshalerType) {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := tree.(map[string]any)
		if !ok {
			return nil // a type error, which the typed decode reports
		}
		fields := map[string]reflect.Type{}
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name != "" && name != "-" {
				fields[name] = f.Type
			}
		}
		for k, v := range obj {
			ft, ok := fields[k]
			if !ok {
				return fmt.Errorf("unknown member %s at %s (names are case-sensitive)", quote(k), path)
			}
			if err := exactKeys(v, ft, path+"."+k); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		arr, _ := tree.([]any)
		for i, e := range arr {
			if err := exactKeys(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		obj, _ := tree.(map[string]any)
		for k, v := range obj {
			if err := exactKeys(v, t.Elem(), path+"."+k); err != nil {
				return err
			}
		}
	}
	return nil
}

// describeJSON drops the parts of a decoding error that could quote a
// value.
func describeJSON(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("member %s has the wrong type (want %s)", quote(te.Field), te.Type)
	}
	if strings.HasPrefix(err.Error(), "json: unknown field") {
		return "unknown member"
	}
	return "malformed JSON"
}

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
