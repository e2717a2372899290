package signing

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"unicode/utf8"

	"github.com/checkfu/checkfu/internal/strictjson"
)

// decodeEnvelopeJSON reads the envelope's JSON with exactly its keys,
// no duplicates, and strings where strings belong, on encoding/json. It is
// the reference that the hot-path scanEnvelopeJSON is fuzzed against.
func decodeEnvelopeJSON(data []byte) (*envelopeJSON, error) {
	tree, err := strictjson.Parse(data, strictjson.Options{})
	if err != nil {
		return nil, err
	}
	top, err := refObject(tree, "", "payloadType", "payload", "signatures")
	if err != nil {
		return nil, err
	}
	ej := envelopeJSON{Signatures: []signatureJSON{}}
	if ej.PayloadType, err = refString(top, "", "payloadType"); err != nil {
		return nil, err
	}
	if ej.Payload, err = refString(top, "", "payload"); err != nil {
		return nil, err
	}
	sigs, ok := top["signatures"].([]any)
	if !ok {
		return nil, errors.New(".signatures is not a JSON array")
	}
	for i, sv := range sigs {
		path := fmt.Sprintf(".signatures[%d]", i)
		so, err := refObject(sv, path, "keyid", "sig")
		if err != nil {
			return nil, err
		}
		var sj signatureJSON
		if sj.KeyID, err = refString(so, path, "keyid"); err != nil {
			return nil, err
		}
		if sj.Sig, err = refString(so, path, "sig"); err != nil {
			return nil, err
		}
		ej.Signatures = append(ej.Signatures, sj)
	}
	return &ej, nil
}

// FuzzEnvelopeScan checks the hot-path envelope reader against the
// encoding/json-based reference: whatever the scanner accepts, the
// reference accepts with the same values; on valid UTF-8 input, whatever
// the reference accepts, the scanner accepts. It also runs the whole
// verifier on the input, which must never panic.
func FuzzEnvelopeScan(f *testing.F) {
	a := testSigner(1)
	env := mustSign(f, a, []byte("hello"))
	f.Add(env)
	f.Add([]byte(`{"payloadType":"x","payload":"","signatures":[]}`))
	f.Add([]byte(`{"payloadType":"x","payload":"","signatures":[{"keyid":"a","sig":"b"},{"keyid":"\u0061","sig":"b"}]}`))
	f.Add([]byte(`{"payloadType":"x","payloadType":"x","payload":"","signatures":[]}`))
	f.Add([]byte(` {"PayloadType":"x"} `))
	f.Add([]byte(`{"payloadType":1}`))
	set := testSet(f, a)
	f.Fuzz(func(t *testing.T, data []byte) {
		fast, ferr := scanEnvelopeJSON(data)
		ref, rerr := decodeEnvelopeJSON(data)
		if ferr == nil {
			if rerr != nil {
				t.Fatalf("scanner accepted what the reference refuses (%v): %q", rerr, data)
			}
			if !reflect.DeepEqual(fast, ref) {
				t.Fatalf("scanner read %+v, reference %+v", fast, ref)
			}
		} else if rerr == nil && utf8.Valid(data) && !hasReplacement(ref) {
			t.Fatalf("scanner refused (%v) what the reference accepts: %q", ferr, data)
		}
		_, _, _ = set.VerifyPayload(data, testType)
	})
}

func hasReplacement(ej *envelopeJSON) bool {
	ss := []string{ej.PayloadType, ej.Payload}
	for _, s := range ej.Signatures {
		ss = append(ss, s.KeyID, s.Sig)
	}
	for _, s := range ss {
		for _, r := range s {
			if r == utf8.RuneError {
				return true
			}
		}
	}
	return false
}

// refObject returns v as an object whose keys are exactly want.
func refObject(v any, path string, want ...string) (map[string]any, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s is not a JSON object", refWhere(path))
	}
	for _, k := range want {
		if _, ok := obj[k]; !ok {
			return nil, fmt.Errorf("%s lacks key %q", refWhere(path), k)
		}
	}
	for k := range obj {
		if !slices.Contains(want, k) {
			return nil, fmt.Errorf("unknown key %q at %s", k, refWhere(path))
		}
	}
	return obj, nil
}

// refString returns obj[key] as a string.
func refString(obj map[string]any, path, key string) (string, error) {
	s, ok := obj[key].(string)
	if !ok {
		return "", fmt.Errorf("%s.%s is not a JSON string", path, key)
	}
	return s, nil
}

func refWhere(path string) string {
	if path == "" {
		return "top level"
	}
	return path
}
