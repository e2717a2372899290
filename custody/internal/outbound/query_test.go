package outbound

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/url"
	"testing"

	"pgregory.net/rapid"

	"github.com/checkfu/checkfu/custody/authz"
)

// queryOfReference is the query builder as it was written first (a
// json.Decoder into map[string]any with UseNumber): queryOf must agree
// with it on every input.
func queryOfReference(body []byte) (string, bool) {
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return "", false
	}
	v := url.Values{}
	for k, x := range m {
		switch x := x.(type) {
		case string:
			v.Set(k, x)
		case json.Number:
			v.Set(k, x.String())
		case bool:
			if x {
				v.Set(k, "true")
			} else {
				v.Set(k, "false")
			}
		default:
			return "", false
		}
	}
	return v.Encode(), true
}

// queryOfUnmarshal is the query builder queryOf replaced (json.Unmarshal
// into a map of raw members, then each string unmarshalled): queryOf
// must accept and refuse exactly what it did, with the same query.
func queryOfUnmarshal(body []byte) (string, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return "", errNotObject
	}
	v := make(url.Values, len(m))
	for k, raw := range m {
		switch c := raw[0]; {
		case c == '"':
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return "", errNotObject
			}
			v.Set(k, s)
		case c == 't' || c == 'f' || c == '-' || '0' <= c && c <= '9':
			v.Set(k, string(raw))
		default:
			return "", errNotObject
		}
	}
	return v.Encode(), nil
}

// FuzzQueryOf: on any bytes, queryOf gives the query the json.Unmarshal
// version gave, or both refuse.
func FuzzQueryOf(f *testing.F) {
	for _, s := range []string{`{}`, `{"state":"open"}`, `{"a":"\u00e9","b":-1.5e3,"c":true}`, `{"a":{},"a":1}`, `{"a":1,"a":[]}`,
		` {"a" :"x"} `, `null`, `[1]`, `{"a":"x"} 1`, `{"\ud800":"\udc00x"}`, "{\"a\":\"\xff\"}", `{"a":null}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got, err := queryOf(body)
		want, werr := queryOfUnmarshal(body)
		if (err == nil) != (werr == nil) || got != want {
			t.Fatalf("queryOf(%q) = %q, %v; the json.Unmarshal version gives %q, %v", body, got, err, want, werr)
		}
		if err != nil && !errors.Is(err, authz.CodeArgumentsInvalid) {
			t.Fatalf("queryOf(%q): %v, want %s", body, err, authz.CodeArgumentsInvalid)
		}
	})
}

// BenchmarkQueryOf measures the query of the edge benchmark's arguments
// and of a larger object, against the json.Unmarshal version.
func BenchmarkQueryOf(b *testing.B) {
	bodies := map[string][]byte{"one": []byte(`{"state":"open"}`), "six": []byte(`{"a":"x y","b":1.5,"c":true,"d":"\u00e9","e":"open","f":-3}`)}
	for name, body := range bodies {
		b.Run(name+"/queryOf", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := queryOf(body); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/unmarshal", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := queryOfUnmarshal(body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestQueryOf(t *testing.T) {
	tests := []struct {
		body, want string
		ok         bool
	}{
		{`{}`, "", true},
		{`{"state":"open"}`, "state=open", true},
		{`{"b":"a&b=c","a":"\u00e9\"\\"}`, "a=%C3%A9%22%5C&b=a%26b%3Dc", true},
		{`{"n":-2.5e3,"m":0,"t":true,"f":false}`, "f=false&m=0&n=-2.5e3&t=true", true},
		{`{"x":null}`, "", false},
		{`{"x":{}}`, "", false},
		{`{"x":[1]}`, "", false},
		{`[1]`, "", false},
		{`"s"`, "", false},
		{`{"x":1`, "", false},
		{` { "a" : "x" , "b":1 } `, "a=x&b=1", true},
		{`{"a":{"}":"]"},"a":"last"}`, "a=last", true},
		{`{"a":"first","a":[1,{"b":"}"}]}`, "", false},
		{`{"\u0061\n":"\ud83d\ude00","b":"\/"}`, "a%0A=%F0%9F%98%80&b=%2F", true},
		{`{"a":"x"} {}`, "", false},
		{`{"a":1e5,"b":-0.5E-3,"c":null}`, "", false},
		{`null`, "", true},
		{``, "", false},
	}
	for _, tt := range tests {
		got, err := queryOf([]byte(tt.body))
		if tt.ok && (err != nil || got != tt.want) {
			t.Errorf("queryOf(%s) = %q, %v; want %q", tt.body, got, err, tt.want)
		}
		if !tt.ok && !errors.Is(err, authz.CodeArgumentsInvalid) {
			t.Errorf("queryOf(%s) = %q, %v; want %s", tt.body, got, err, authz.CodeArgumentsInvalid)
		}
		if ref, err := queryOfUnmarshal([]byte(tt.body)); (err == nil) != tt.ok || ref != tt.want {
			t.Errorf("queryOfUnmarshal(%s) = %q, %v; the table is wrong", tt.body, ref, err)
		}
	}
}

// TestQueryOfAgreesWithReference: on canonical JSON objects of any
// members, queryOf and the first implementation give the same query, or
// both refuse.
func TestQueryOfAgreesWithReference(t *testing.T) {
	value := rapid.OneOf(
		rapid.Map(rapid.String(), func(s string) any { return s }),
		rapid.Map(rapid.Float64(), func(f float64) any { return f }),
		rapid.Map(rapid.Int64(), func(n int64) any { return n }),
		rapid.Map(rapid.Bool(), func(b bool) any { return b }),
		rapid.Just[any](nil),
		rapid.Just[any](map[string]any{}),
		rapid.Just[any]([]any{1}),
	)
	rapid.Check(t, func(t *rapid.T) {
		m := rapid.MapOfN(rapid.String(), value, 0, 6).Draw(t, "args")
		body, err := json.Marshal(m)
		if err != nil {
			t.Skip("not JSON:", err)
		}
		got, err := queryOf(body)
		want, ok := queryOfReference(body)
		if ok != (err == nil) || got != want {
			t.Fatalf("queryOf(%s) = %q, %v; the reference gives %q, %v", body, got, err, want, ok)
		}
	})
}
