package strictjson

import (
	"strings"
	"testing"
)

type inner struct {
	B string `json:"b"`
}

type outer struct {
	A     string  `json:"a"`
	Inner inner   `json:"inner"`
	List  []inner `json:"list"`
}

// Mutants: deleting the duplicate check in value, the sameKeys call in
// Unmarshal, or the trailing-data check in parseTree makes the matching
// rows fail.
func TestUnmarshal(t *testing.T) {
	tests := []struct{ in, err string }{
		{`{"a":"x","inner":{"b":"y"},"list":[{"b":"z"}]}`, ""},
		{` {"a":"x"} `, ""},
		{`{"a":"x","a":"y"}`, `duplicate key "a" at top level`},
		{`{"inner":{"b":"y","b":"z"}}`, `duplicate key "b" at .inner`},
		{`{"list":[{"b":"y"},{"b":"y","b":"z"}]}`, `duplicate key "b" at .list[1]`},
		{`{"A":"x"}`, `unknown key "A" at top level (keys are case-sensitive)`},
		{`{"inner":{"B":"y"}}`, `unknown key "B" at .inner`},
		{`{"list":[{"B":"y"}]}`, `unknown key "B" at .list[0]`},
		{`{"c":"x"}`, `unknown field "c"`},
		{`{"a":"x"} {}`, "data follows the JSON value"},
		{`{"a":"x"}x`, "data follows the JSON value"},
		{`{"a":1}`, `field "a" has the wrong JSON type`},
		{`{"a":"x"`, "unexpected end of JSON"},
		{``, "unexpected end of JSON"},
	}
	for _, tt := range tests {
		var v outer
		err := Unmarshal([]byte(tt.in), &v)
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("Unmarshal(%s) = %v", tt.in, err)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("Unmarshal(%s) = %v, want error containing %q", tt.in, err, tt.err)
		}
	}
}

func TestObject(t *testing.T) {
	tree, err := Parse([]byte(`{"x":"1","y":"2"}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Object(tree, "", "x", "y"); err != nil {
		t.Fatal(err)
	}
	if _, err := Object(tree, "", "x"); err == nil || !strings.Contains(err.Error(), `unknown key "y"`) {
		t.Fatalf("Object with an extra key = %v", err)
	}
	if _, err := Object(tree, "", "x", "y", "z"); err == nil || !strings.Contains(err.Error(), `lacks key "z"`) {
		t.Fatalf("Object with a missing key = %v", err)
	}
	obj, _ := Object(tree, "", "x", "y")
	if s, err := String(obj, "", "x"); s != "1" || err != nil {
		t.Fatalf("String = %q, %v", s, err)
	}
}
