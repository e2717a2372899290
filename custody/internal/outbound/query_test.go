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
	}
	for _, tt := range tests {
		got, err := queryOf([]byte(tt.body))
		if tt.ok && (err != nil || got != tt.want) {
			t.Errorf("queryOf(%s) = %q, %v; want %q", tt.body, got, err, tt.want)
		}
		if !tt.ok && !errors.Is(err, authz.CodeArgumentsInvalid) {
			t.Errorf("queryOf(%s) = %q, %v; want %s", tt.body, got, err, authz.CodeArgumentsInvalid)
		}
		if ref, ok := queryOfReference([]byte(tt.body)); ok != tt.ok || ref != tt.want {
			t.Errorf("reference(%s) = %q, %v; the table is wrong", tt.body, ref, ok)
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
