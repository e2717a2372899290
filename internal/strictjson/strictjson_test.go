package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

type inner struct {
	Host string `json:"host"`
	Port int    `json:"port,omitempty"`
}

type Embedded struct {
	Shared string `json:"shared"`
}

type outer struct {
	Embedded
	Name    string            `json:"name"`
	Rules   []inner           `json:"rules"`
	ByName  map[string]inner  `json:"by_name"`
	Ptr     *inner            `json:"ptr"`
	Raw     json.RawMessage   `json:"raw"`
	Any     any               `json:"any"`
	Labels  map[string]string `json:"labels"`
	Skipped string            `json:"-"`
	NoTag   string
	//lint:ignore U1000 an unexported field must not be a member name
	private string
}

func TestUnmarshalRefuses(t *testing.T) {
	tests := []struct {
		in   string
		kind Kind
		text string
	}{
		{`{"name":"a","name":"b"}`, KindDuplicate, `json: member "name" appears twice at top level (offset 12)`},
		{`{"Name":"a"}`, KindUnknownMember, `json: unknown member "Name" (names are case-sensitive) at top level (offset 1)`},
		{`{"rules":[{"host":"a"},{"HOST":"b"}]}`, KindUnknownMember, `json: unknown member "HOST" (names are case-sensitive) at .rules[1] (offset 24)`},
		{`{"by_name":{"x":{"host":"a","hostx":1}}}`, KindUnknownMember, `json: unknown member "hostx" (names are case-sensitive) at .by_name.x (offset 28)`},
		{`{"ptr":{"Port":1}}`, KindUnknownMember, `json: unknown member "Port" (names are case-sensitive) at .ptr (offset 8)`},
		{`{"SHARED":"x"}`, KindUnknownMember, `json: unknown member "SHARED" (names are case-sensitive) at top level (offset 1)`},
		{`{"notag":"x"}`, KindUnknownMember, `json: unknown member "notag" (names are case-sensitive) at top level (offset 1)`},
		{`{"private":"x"}`, KindUnknownMember, `json: unknown member "private" (names are case-sensitive) at top level (offset 1)`},
		{`{"Skipped":"x"}`, KindUnknownMember, `json: unknown member "Skipped" (names are case-sensitive) at top level (offset 1)`},
		{`{"raw":{"a":1,"a":2}}`, KindDuplicate, `json: member "a" appears twice at .raw (offset 14)`},
		{`{"any":{"a":1,"\u0061":2}}`, KindDuplicate, `json: member "a" appears twice at .any (offset 14)`},
		{`{"name":"a"} {}`, KindTrailing, `json: data after the JSON value at top level (offset 13)`},
		{`{"name":"a"}x`, KindTrailing, `json: data after the JSON value at top level (offset 12)`},
		{"{\"name\":\"\xff\"}", KindUTF8, `json: invalid UTF-8 at top level (offset 9)`},
		{`{"name":"\ud800"}`, KindUTF8, `json: unpaired surrogate escape at .name (offset 15)`},
		{`{"name":"\udc00\ud800"}`, KindUTF8, `json: unpaired surrogate escape at .name (offset 15)`},
		{`{"name":"\ud800\u0041"}`, KindUTF8, `json: unpaired surrogate escape at .name (offset 21)`},
		{`{"name":1}`, KindType, `json: a JSON number where string belongs at .name (offset 9)`},
		{`{"name":"a",}`, KindSyntax, `json: expected a member name at top level (offset 12)`},
		{`{"name":01}`, KindSyntax, `json: expected ',' or '}' at top level (offset 9)`},
		{`{"name":"a\x"}`, KindSyntax, `json: invalid escape at .name (offset 10)`},
		{"{\"name\":\"a\tb\"}", KindSyntax, `json: control character in string at .name (offset 10)`},
		{``, KindSyntax, `json: unexpected end of JSON at top level (offset 0)`},
		{`nul`, KindSyntax, `json: invalid literal at top level (offset 0)`},
		{`{"any":` + strings.Repeat("[", 64) + strings.Repeat("]", 64) + `}`, KindDepth, `json: nested deeper than 64 at .any` + strings.Repeat("[0]", 63) + ` (offset 70)`},
	}
	for _, tt := range tests {
		var v outer
		err := Unmarshal([]byte(tt.in), &v, Options{})
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("Unmarshal(%q) = %v, want an *Error", tt.in, err)
			continue
		}
		if e.Kind != tt.kind || err.Error() != tt.text {
			t.Errorf("Unmarshal(%q) = %v (%v), want %s (%v)", tt.in, err, e.Kind, tt.text, tt.kind)
		}
	}
}

func TestUnmarshalAccepts(t *testing.T) {
	in := `{"shared":"s","name":"n","rules":[{"host":"a","port":1}],"by_name":{"X":{"host":"b"}},
		"ptr":{"host":"c"},"raw":{"Any":"thing"},"any":{"B":[1,2.5e3,-0.1]},"labels":{"K":"V"},"NoTag":"t"}`
	var v outer
	if err := Unmarshal([]byte(in), &v, Options{}); err != nil {
		t.Fatal(err)
	}
	if v.Shared != "s" || v.Rules[0].Port != 1 || v.ByName["X"].Host != "b" || v.Ptr.Host != "c" || v.NoTag != "t" || string(v.Raw) != `{"Any":"thing"}` {
		t.Errorf("decoded %+v", v)
	}
	if err := Unmarshal([]byte(`{"any":`+strings.Repeat("[", 63)+strings.Repeat("]", 63)+`}`), &v, Options{}); err != nil {
		t.Errorf("depth 64 refused: %v", err)
	}
}

func TestOptions(t *testing.T) {
	if err := Valid([]byte(`[[1]]`), Options{MaxDepth: 1}); !isKind(err, KindDepth) {
		t.Errorf("MaxDepth 1: %v", err)
	}
	if err := Valid([]byte(`{"a":{"b":1}}`), Options{MaxDepth: 1}); !isKind(err, KindDepth) {
		t.Errorf("MaxDepth 1, nested objects: %v", err)
	}
	if err := Valid([]byte(`[1]`), Options{MaxDepth: 1}); err != nil {
		t.Errorf("MaxDepth 1 on depth 1: %v", err)
	}
	if err := Valid([]byte(`"abcdef"`), Options{MaxBytes: 7}); !isKind(err, KindSize) {
		t.Errorf("MaxBytes: %v", err)
	}
	if err := Valid([]byte(` "abcde" `), Options{MaxBytes: 9}); err != nil {
		t.Errorf("MaxBytes at the bound: %v", err)
	}
}

func TestParse(t *testing.T) {
	v, err := Parse([]byte(`{"a":[1,"x",true,null,{"B":2}]}`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if v.(map[string]any)["a"].([]any)[0] != json.Number("1") {
		t.Errorf("Parse = %#v", v)
	}
	if _, err := Parse([]byte(`{"a":1,"a":1}`), Options{}); !isKind(err, KindDuplicate) {
		t.Errorf("Parse dup: %v", err)
	}
	var nilPtr *outer
	if err := Unmarshal([]byte(`{}`), nilPtr, Options{}); err == nil {
		t.Error("Unmarshal into a nil pointer succeeded")
	}
}

func isKind(err error, k Kind) bool {
	var e *Error
	return errors.As(err, &e) && e.Kind == k
}

// reference decides strict validity with encoding/json's own reading:
// std validity, UTF-8, no duplicate names (after unescaping), depth, and
// no escape that encoding/json would replace with U+FFFD.
func reference(data []byte, maxDepth int) bool {
	if !json.Valid(data) || !bytesValidUTF8(data) {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	type frame struct {
		obj  bool
		seen map[string]bool
		key  bool
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return true // io.EOF: json.Valid already vouched for the syntax
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{', '[':
				if len(stack) > 0 && stack[len(stack)-1].obj {
					stack[len(stack)-1].key = true
				}
				stack = append(stack, &frame{obj: d == '{', seen: map[string]bool{}, key: true})
				if len(stack) > maxDepth {
					return false
				}
			default:
				stack = stack[:len(stack)-1]
			}
			continue
		}
		if s, ok := tok.(string); ok && strings.ContainsRune(s, '\uFFFD') && !bytes.Contains(data, []byte("\uFFFD")) {
			return false // an escape that decoded lossily
		}
		if len(stack) > 0 && stack[len(stack)-1].obj {
			f := stack[len(stack)-1]
			if f.key {
				k := tok.(string)
				if f.seen[k] {
					return false
				}
				f.seen[k] = true
				f.key = false
			} else {
				f.key = true
			}
		}
	}
}

func bytesValidUTF8(b []byte) bool { return strings.ToValidUTF8(string(b), "\x00\x01") == string(b) }

// FuzzStrict checks the decoder against encoding/json's reading of the
// same bytes, as netip fuzzes against a slow reference.
func FuzzStrict(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1,"a":2}`, `[1,[2,[3]]]`, `"\ud83d\ude00"`, `"\ud800"`, "\"\xff\"", `{"a":{"b":null}} `, `1e5`, `-0.0`, `{"A":1,"a":2}`, `"\u00e9"`, `[` + strings.Repeat("[", 70) + strings.Repeat("]", 71)} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		err := Valid(data, Options{MaxDepth: 8})
		want := reference(data, 8)
		if (err == nil) != want {
			t.Fatalf("Valid(%q) = %v, reference says valid=%v", data, err, want)
		}
		if err != nil {
			return
		}
		v, err := Parse(data, Options{MaxDepth: 8})
		if err != nil {
			t.Fatalf("Parse(%q) = %v after Valid accepted", data, err)
		}
		std, err := decoderParse(data)
		if err != nil {
			t.Fatalf("encoding/json refuses %q: %v", data, err)
		}
		if !reflect.DeepEqual(v, std) {
			t.Fatalf("Parse(%q) = %#v, encoding/json = %#v", data, v, std)
		}
	})
}

// decoderParse is what Parse decoded with before it built its values
// itself: encoding/json's Decoder with UseNumber.
func decoderParse(data []byte) (any, error) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	err := dec.Decode(&v)
	return v, err
}

// parseCorpus are inputs Parse accepts, covering every kind of value,
// empty and nested containers, escapes of each kind, surrogate pairs and
// white space everywhere it may stand.
var parseCorpus = []string{
	`{}`, `[]`, `null`, `true`, `false`, `0`, `-0.0`, `1e5`, `-12.5E-3`, `""`,
	` { "a" : [ 1 , "x" , true , null , { "B" : 2 } ] , "c" : { } , "d" : [ ] } `,
	`[[],[[]],{},{"a":{}}]`, `"\ud83d\ude00"`, `"\u00e9\n\t\r\b\f\/\\\""`, `"plain é ☃ 😀"`,
	`{"k\u0041y":"v\u0000","":""}`, `[1,2.0,3e1,-4]`, `{"a":[{"b":[null]}]}`,
}

// TestParseAgreesWithDecoder holds Parse to encoding/json's Decoder on
// parseCorpus: the same values, of the same types (FuzzStrict does the
// same on any input).
func TestParseAgreesWithDecoder(t *testing.T) {
	for _, in := range parseCorpus {
		got, err := Parse([]byte(in), Options{})
		if err != nil {
			t.Errorf("Parse(%s) = %v", in, err)
			continue
		}
		want, err := decoderParse([]byte(in))
		if err != nil {
			t.Fatalf("encoding/json refuses %s: %v", in, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Parse(%s) = %#v, encoding/json = %#v", in, got, want)
		}
	}
}

// BenchmarkParse decodes a tool call's arguments.
func BenchmarkParse(b *testing.B) {
	data := []byte(`{"state":"open","labels":["bug","p1"],"limit":20,"title":"a \"quoted\" title\n"}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(data, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

type selfDecoding struct{}

var errSelf = errors.New("self: refused")

func (*selfDecoding) UnmarshalJSON([]byte) error { return errSelf }

// TestUnmarshalKeepsTypeErrors: a refusal by a target type's own
// UnmarshalJSON stays in the chain, so a caller's code is not lost.
func TestUnmarshalKeepsTypeErrors(t *testing.T) {
	var v struct {
		S selfDecoding `json:"s"`
	}
	err := Unmarshal([]byte(`{"s":{"X":1}}`), &v, Options{})
	if !errors.Is(err, errSelf) || !isKind(err, KindType) {
		t.Errorf("Unmarshal = %v, want errSelf in the chain with KindType", err)
	}
}

// TestAllowUnknownMembers: unknown members pass, a case variant of a
// declared one does not (encoding/json would decode it into the field).
func TestAllowUnknownMembers(t *testing.T) {
	opts := Options{AllowUnknownMembers: true}
	var v outer
	if err := Unmarshal([]byte(`{"name":"a","extra":{"x":[1]},"rules":[{"host":"h","more":1}]}`), &v, opts); err != nil || v.Name != "a" || v.Rules[0].Host != "h" {
		t.Errorf("Unmarshal with unknown members = %v, %+v", err, v)
	}
	err := Unmarshal([]byte(`{"name":"a","Name":"b"}`), &v, opts)
	if !isKind(err, KindUnknownMember) || err.Error() != `json: member "Name" differs from "name" only in case at top level (offset 12)` {
		t.Errorf("case variant: %v", err)
	}
	if err := Unmarshal([]byte(`{"rules":[{"HOST":"b"}]}`), &v, opts); !isKind(err, KindUnknownMember) {
		t.Errorf("nested case variant: %v", err)
	}
	if err := Unmarshal([]byte(`{"extra":1,"extra":2}`), &v, opts); !isKind(err, KindDuplicate) {
		t.Errorf("duplicate unknown member: %v", err)
	}
}
