// Package strictjson decodes JSON the way a signed-artifact verifier must:
// one value and nothing after it, no duplicate object keys at any depth, no
// unknown fields, and object keys spelled exactly as the struct tags spell
// them (encoding/json alone matches keys case-insensitively and lets the
// last duplicate win).
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
)

// Unmarshal decodes data into v (a pointer to a struct of plain fields
// with json tags) under the rules in the package doc. The error names the
// offending key; it never echoes values.
func Unmarshal(data []byte, v any) error {
	orig, err := parseTree(data)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%v", describe(err))
	}
	again, err := json.Marshal(v)
	if err != nil {
		return err
	}
	canon, err := parseTree(again)
	if err != nil {
		return err
	}
	return sameKeys("", orig, canon)
}

// Parse decodes exactly one JSON value into map[string]any, []any,
// string, json.Number, bool and nil, refusing duplicate object keys at any
// depth and anything after the value.
func Parse(data []byte) (any, error) { return parseTree(data) }

// Object returns v as an object whose keys are exactly want (each must be
// present, no other may be), or an error naming what is wrong at path.
func Object(v any, path string, want ...string) (map[string]any, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s is not a JSON object", where(path))
	}
	for _, k := range want {
		if _, ok := obj[k]; !ok {
			return nil, fmt.Errorf("%s lacks key %q", where(path), k)
		}
	}
	if len(obj) != len(want) {
		for k := range obj {
			if !slices.Contains(want, k) {
				return nil, fmt.Errorf("unknown key %q at %s (keys are case-sensitive)", k, where(path))
			}
		}
	}
	return obj, nil
}

// String returns obj[key] as a string.
func String(obj map[string]any, path, key string) (string, error) {
	s, ok := obj[key].(string)
	if !ok {
		return "", fmt.Errorf("%s.%s is not a JSON string", path, key)
	}
	return s, nil
}

// describe drops the parts of a decoding error that could quote a value.
func describe(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("field %q has the wrong JSON type (got %s, want %s)", te.Field, te.Value, te.Type)
	}
	return err.Error()
}

// parseTree decodes exactly one JSON value into maps, slices and scalars,
// refusing duplicate keys and anything after the value.
func parseTree(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := value(dec, "")
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, errors.New("unexpected end of JSON")
	}
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data follows the JSON value")
	}
	return v, nil
}

func value(dec *json.Decoder, path string) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			return nil, errors.New("unexpected end of JSON")
		}
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		obj := map[string]any{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			k := kt.(string)
			if _, dup := obj[k]; dup {
				return nil, fmt.Errorf("duplicate key %q at %s", k, where(path))
			}
			if obj[k], err = value(dec, path+"."+k); err != nil {
				return nil, err
			}
		}
		if _, err := dec.Token(); err != nil {
			return nil, err
		}
		return obj, nil
	case json.Delim('['):
		var arr []any
		for i := 0; dec.More(); i++ {
			v, err := value(dec, fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		if _, err := dec.Token(); err != nil {
			return nil, err
		}
		return arr, nil
	}
	return tok, nil
}

func where(path string) string {
	if path == "" {
		return "top level"
	}
	return path
}

// sameKeys refuses any key of orig that the re-marshalled form does not
// spell exactly the same way.
func sameKeys(path string, orig, canon any) error {
	switch o := orig.(type) {
	case map[string]any:
		c, _ := canon.(map[string]any)
		keys := make([]string, 0, len(o))
		for k := range o {
			keys = append(keys, k)
		}
		slices.Sort(keys) // deterministic error for several bad keys
		for _, k := range keys {
			v := o[k]
			cv, ok := c[k]
			if !ok {
				return fmt.Errorf("unknown key %q at %s (keys are case-sensitive)", k, where(path))
			}
			if err := sameKeys(path+"."+k, v, cv); err != nil {
				return err
			}
		}
	case []any:
		c, _ := canon.([]any)
		for i, v := range o {
			if i >= len(c) {
				return fmt.Errorf("array %s changed length when decoded", where(path))
			}
			if err := sameKeys(fmt.Sprintf("%s[%d]", path, i), v, c[i]); err != nil {
				return err
			}
		}
	}
	return nil
}
