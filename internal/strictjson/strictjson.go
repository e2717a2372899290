// Package strictjson is the module's one strict JSON decoder: every
// package that reads JSON from a party it does not trust (an agent, a
// provider, a signed artifact, a configuration file) decodes it here, so
// that the strictness is written once.
//
// Invariants, for [Unmarshal], [Parse] and [Valid] alike:
//
//   - Exactly one JSON value (RFC 8259), with nothing but white space
//     after it.
//   - The input is valid UTF-8, and no \u escape is an unpaired surrogate
//     (encoding/json would turn both into U+FFFD, so two different byte
//     strings would decode to one value).
//   - No object has two members with the same name after unescaping, at
//     any depth (encoding/json lets the last one win).
//   - Objects and arrays nest at most [Options.MaxDepth] deep, and the
//     input is at most [Options.MaxBytes] long when that is set.
//   - [Unmarshal] also refuses a member whose name is not, exactly and
//     case-sensitively, a field of the target struct (encoding/json matches
//     names case-insensitively), at every depth the target's type
//     describes. A type with its own UnmarshalJSON, a json.RawMessage or
//     an interface value is opaque: its members are checked for
//     duplicates but not against a type.
//
// Errors are [*Error] values with a [Kind]. Their text names the place
// (a path such as .rules[2].host) and quotes member names through
// checkfu.Quote; it never quotes a member's value.
package strictjson

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/checkfu/checkfu"
)

// DefaultMaxDepth is the nesting bound of the zero [Options].
const DefaultMaxDepth = 64

// Options bounds a decode. The zero value means [DefaultMaxDepth] and no
// size bound.
type Options struct {
	// MaxDepth is how deep objects and arrays may nest; a scalar at the
	// top level has depth 0, and {"a":[1]} has depth 2. Zero means
	// DefaultMaxDepth.
	MaxDepth int
	// MaxBytes bounds the length of the input. Zero means no bound.
	MaxBytes int
	// AllowUnknownMembers makes [Unmarshal] accept members the target
	// type does not declare (for protocols that let peers add members),
	// while still refusing a member that differs from a declared one only
	// in case: encoding/json would decode "SessionID" into a field named
	// "sessionId", so an exact reader and this one would disagree.
	AllowUnknownMembers bool
}

// A Kind says which rule an input broke.
type Kind uint8

// The kinds of [Error].
const (
	// KindSyntax: not JSON.
	KindSyntax Kind = iota + 1
	// KindTrailing: something other than white space follows the value.
	KindTrailing
	// KindUTF8: invalid UTF-8, or an unpaired surrogate escape.
	KindUTF8
	// KindDuplicate: an object repeats a member name.
	KindDuplicate
	// KindUnknownMember: a member the target type does not declare, or
	// declares with another case.
	KindUnknownMember
	// KindDepth: nesting deeper than MaxDepth.
	KindDepth
	// KindSize: longer than MaxBytes.
	KindSize
	// KindType: a value of the wrong JSON type for its field.
	KindType
)

var kindNames = [...]string{
	KindSyntax:        "syntax",
	KindTrailing:      "trailing",
	KindUTF8:          "utf8",
	KindDuplicate:     "duplicate",
	KindUnknownMember: "unknown_member",
	KindDepth:         "depth",
	KindSize:          "size",
	KindType:          "type",
}

// String returns the kind's name, such as "duplicate".
func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// An Error reports why an input was refused.
type Error struct {
	Kind Kind
	// Offset is the byte offset in the input where the problem was found.
	Offset int
	// Path locates the problem, such as ".rules[2].host"; empty for the
	// top level.
	Path string
	// Detail says what is wrong, for people.
	Detail string
	// Err is the error a target type's own UnmarshalJSON returned, if
	// that is what refused the input; Unwrap returns it, so that its
	// codes stay visible to errors.Is and errors.As.
	Err error
}

// Unwrap returns the error of a target type's own UnmarshalJSON, or nil.
func (e *Error) Unwrap() error { return e.Err }

// Error returns "json: DETAIL at PATH (offset N)".
func (e *Error) Error() string {
	where := e.Path
	if where == "" {
		where = "top level"
	}
	return fmt.Sprintf("json: %s at %s (offset %d)", e.Detail, where, e.Offset)
}

// Valid reports, as a nil error, whether data obeys every rule in the
// package doc except the check against a target type.
func Valid(data []byte, opts Options) error {
	return check(data, opts, nil)
}

// Parse decodes exactly one strict JSON value into map[string]any,
// []any, string, json.Number, bool and nil.
func Parse(data []byte, opts Options) (any, error) {
	if err := check(data, opts, nil); err != nil {
		return nil, err
	}
	// check has accepted data: the builder reads it once more, with no
	// reflection and no decoder, into what encoding/json's Decoder with
	// UseNumber would make of it (FuzzStrict holds the two equal).
	b := scanner{data: data}
	b.space()
	return b.build()
}

// build decodes the value at s.pos of data that check has accepted:
// objects as map[string]any (empty, not nil, when they have no member),
// arrays as []any (likewise), strings unescaped, numbers as json.Number
// of their literal text, true, false and nil. Its errors are only those
// of input check would have refused; Parse never calls it on one.
func (s *scanner) build() (any, error) {
	if s.pos >= len(s.data) {
		return nil, s.fail(KindSyntax, "unexpected end of JSON")
	}
	switch c := s.data[s.pos]; {
	case c == '{':
		s.pos++
		m := map[string]any{}
		for {
			s.space()
			if s.pos < len(s.data) && s.data[s.pos] == '}' && len(m) == 0 {
				s.pos++
				return m, nil
			}
			if s.pos >= len(s.data) || s.data[s.pos] != '"' {
				return nil, s.fail(KindSyntax, "expected a member name")
			}
			k, err := s.str(true)
			if err != nil {
				return nil, err
			}
			s.space()
			if s.pos >= len(s.data) || s.data[s.pos] != ':' {
				return nil, s.fail(KindSyntax, "expected ':' after a member name")
			}
			s.pos++
			s.space()
			if m[k], err = s.build(); err != nil {
				return nil, err
			}
			if done, err := s.next('}'); done || err != nil {
				return m, err
			}
		}
	case c == '[':
		s.pos++
		a := []any{}
		for {
			s.space()
			if s.pos < len(s.data) && s.data[s.pos] == ']' && len(a) == 0 {
				s.pos++
				return a, nil
			}
			v, err := s.build()
			if err != nil {
				return nil, err
			}
			a = append(a, v)
			if done, err := s.next(']'); done || err != nil {
				return a, err
			}
		}
	case c == '"':
		return s.str(true)
	case c == 't':
		return true, s.literal("true")
	case c == 'f':
		return false, s.literal("false")
	case c == 'n':
		return nil, s.literal("null")
	default:
		start := s.pos
		if err := s.number(); err != nil {
			return nil, err
		}
		return json.Number(s.data[start:s.pos]), nil
	}
}

// next reads past the ',' after a member or element, or the closing
// byte that ends its object or array, reporting which it was.
func (s *scanner) next(closing byte) (done bool, err error) {
	s.space()
	if s.pos >= len(s.data) {
		return false, s.fail(KindSyntax, "unexpected end of JSON")
	}
	switch s.data[s.pos] {
	case ',':
		s.pos++
		return false, nil
	case closing:
		s.pos++
		return true, nil
	}
	return false, s.fail(KindSyntax, "expected ',' or %q", closing)
}

// Unmarshal decodes data into v, which must be a non-nil pointer, under
// every rule in the package doc, including exact member names.
func Unmarshal(data []byte, v any, opts Options) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return errors.New("strictjson: Unmarshal needs a non-nil pointer")
	}
	if err := check(data, opts, rv.Type().Elem()); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if !opts.AllowUnknownMembers {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		return describe(err)
	}
	return nil
}

// describe turns a decoding error into an *Error that quotes no value.
func describe(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return &Error{Kind: KindType, Offset: int(te.Offset), Path: fieldPath(te.Field),
			Detail: fmt.Sprintf("a JSON %s where %s belongs", te.Value, te.Type)}
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return &Error{Kind: KindSyntax, Offset: int(se.Offset), Detail: se.Error()}
	}
	// An UnmarshalJSON of the target's own: keep its text (it is the
	// target's to keep value-free) but give it a kind.
	return &Error{Kind: KindType, Detail: err.Error(), Err: err}
}

func fieldPath(f string) string {
	if f == "" {
		return ""
	}
	return "." + f
}

// check scans data once, enforcing the rules; t, when not nil, is the
// type member names are checked against.
func check(data []byte, opts Options, t reflect.Type) error {
	if opts.MaxBytes > 0 && len(data) > opts.MaxBytes {
		return &Error{Kind: KindSize, Detail: fmt.Sprintf("%d bytes, more than the %d allowed", len(data), opts.MaxBytes)}
	}
	if !utf8.Valid(data) {
		off := 0
		for off < len(data) {
			r, n := utf8.DecodeRune(data[off:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			off += n
		}
		return &Error{Kind: KindUTF8, Offset: off, Detail: "invalid UTF-8"}
	}
	s := scanner{data: data, maxDepth: opts.MaxDepth, allowUnknown: opts.AllowUnknownMembers}
	if s.maxDepth <= 0 {
		s.maxDepth = DefaultMaxDepth
	}
	s.space()
	if err := s.value(t, 0); err != nil {
		return err
	}
	s.space()
	if s.pos != len(s.data) {
		return s.fail(KindTrailing, "data after the JSON value")
	}
	return nil
}

type scanner struct {
	data     []byte
	pos      int
	maxDepth int
	// allowUnknown: members a struct does not declare are skipped, but
	// one that case-folds to a declared member is refused.
	allowUnknown bool
	path         []step // where the value being scanned is, outermost first
}

func (s *scanner) fail(k Kind, format string, args ...any) *Error {
	var path strings.Builder
	for _, st := range s.path {
		if st.member {
			path.WriteString("." + st.name)
		} else {
			path.WriteString("[" + strconv.Itoa(st.index) + "]")
		}
	}
	return &Error{Kind: k, Offset: s.pos, Path: path.String(), Detail: fmt.Sprintf(format, args...)}
}

// A step is one level of an Error's path: a member's name, or an
// element's index. It is spelled out only when the scan fails.
type step struct {
	member bool
	name   string
	index  int
}

func (s *scanner) space() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

func (s *scanner) value(t reflect.Type, depth int) error {
	if s.pos >= len(s.data) {
		return s.fail(KindSyntax, "unexpected end of JSON")
	}
	switch c := s.data[s.pos]; {
	case c == '{':
		return s.object(t, depth+1)
	case c == '[':
		return s.array(t, depth+1)
	case c == '"':
		_, err := s.str(false)
		return err
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		return s.number()
	default:
		return s.fail(KindSyntax, "unexpected character %s", strconv.QuoteRune(rune(c)))
	}
}

func (s *scanner) literal(word string) error {
	if !bytes.HasPrefix(s.data[s.pos:], []byte(word)) {
		return s.fail(KindSyntax, "invalid literal")
	}
	s.pos += len(word)
	return nil
}

func (s *scanner) number() error {
	start := s.pos
	if s.data[s.pos] == '-' {
		s.pos++
	}
	digits := func() int {
		n := 0
		for s.pos < len(s.data) && '0' <= s.data[s.pos] && s.data[s.pos] <= '9' {
			s.pos++
			n++
		}
		return n
	}
	if s.pos < len(s.data) && s.data[s.pos] == '0' {
		s.pos++
	} else if digits() == 0 {
		return s.fail(KindSyntax, "invalid number")
	}
	if s.pos < len(s.data) && s.data[s.pos] == '.' {
		s.pos++
		if digits() == 0 {
			return s.fail(KindSyntax, "invalid number")
		}
	}
	if s.pos < len(s.data) && (s.data[s.pos] == 'e' || s.data[s.pos] == 'E') {
		s.pos++
		if s.pos < len(s.data) && (s.data[s.pos] == '+' || s.data[s.pos] == '-') {
			s.pos++
		}
		if digits() == 0 {
			return s.fail(KindSyntax, "invalid number")
		}
	}
	if s.pos == start {
		return s.fail(KindSyntax, "invalid number")
	}
	return nil
}

// str scans a string starting at its opening quote. With decode, it
// returns the unescaped text (for member names).
func (s *scanner) str(decode bool) (string, error) {
	s.pos++ // opening quote
	start := s.pos
	var b []byte
	plain := true
	for {
		if s.pos >= len(s.data) {
			return "", s.fail(KindSyntax, "unterminated string")
		}
		c := s.data[s.pos]
		switch {
		case c == '"':
			var out string
			if decode {
				if plain {
					out = string(s.data[start:s.pos])
				} else {
					out = string(b)
				}
			}
			s.pos++
			return out, nil
		case c < 0x20:
			return "", s.fail(KindSyntax, "control character in string")
		case c == '\\':
			if plain && decode {
				b = append(b, s.data[start:s.pos]...)
				plain = false
			}
			if s.pos+1 >= len(s.data) {
				return "", s.fail(KindSyntax, "unterminated string")
			}
			e := s.data[s.pos+1]
			switch e {
			case '"', '\\', '/':
				b = append(b, e)
				s.pos += 2
			case 'b':
				b = append(b, '\b')
				s.pos += 2
			case 'f':
				b = append(b, '\f')
				s.pos += 2
			case 'n':
				b = append(b, '\n')
				s.pos += 2
			case 'r':
				b = append(b, '\r')
				s.pos += 2
			case 't':
				b = append(b, '\t')
				s.pos += 2
			case 'u':
				r, err := s.escape()
				if err != nil {
					return "", err
				}
				if utf16.IsSurrogate(r) {
					if r >= 0xdc00 || !bytes.HasPrefix(s.data[s.pos:], []byte(`\u`)) {
						return "", s.fail(KindUTF8, "unpaired surrogate escape")
					}
					r2, err := s.escape()
					if err != nil {
						return "", err
					}
					r = utf16.DecodeRune(r, r2)
					if r == utf8.RuneError {
						return "", s.fail(KindUTF8, "unpaired surrogate escape")
					}
				}
				b = utf8.AppendRune(b, r)
			default:
				return "", s.fail(KindSyntax, "invalid escape")
			}
		default:
			if !plain && decode {
				b = append(b, c)
			}
			s.pos++
		}
	}
}

// escape reads \uXXXX at s.pos.
func (s *scanner) escape() (rune, error) {
	if s.pos+6 > len(s.data) || s.data[s.pos] != '\\' || s.data[s.pos+1] != 'u' {
		return 0, s.fail(KindSyntax, "invalid escape")
	}
	v, err := strconv.ParseUint(string(s.data[s.pos+2:s.pos+6]), 16, 16)
	if err != nil {
		return 0, s.fail(KindSyntax, "invalid escape")
	}
	s.pos += 6
	return rune(v), nil
}

func (s *scanner) object(t reflect.Type, depth int) error {
	if depth > s.maxDepth {
		return s.fail(KindDepth, "nested deeper than %d", s.maxDepth)
	}
	t = concrete(t)
	var fields map[string]reflect.Type
	var elem reflect.Type
	switch {
	case t == nil:
	case t.Kind() == reflect.Struct:
		fields = fieldsOf(t)
	case t.Kind() == reflect.Map:
		elem = t.Elem()
	default:
		// A JSON object where the type wants something else: let the
		// decoder report the type error, and check no names.
		t = nil
	}
	s.pos++ // {
	seen := map[string]bool{}
	s.space()
	if s.pos < len(s.data) && s.data[s.pos] == '}' {
		s.pos++
		return nil
	}
	for {
		s.space()
		if s.pos >= len(s.data) || s.data[s.pos] != '"' {
			return s.fail(KindSyntax, "expected a member name")
		}
		keyAt := s.pos
		k, err := s.str(true)
		if err != nil {
			return err
		}
		if seen[k] {
			s.pos = keyAt
			return s.fail(KindDuplicate, "member %s appears twice", checkfu.Quote(k))
		}
		seen[k] = true
		ft := elem
		if fields != nil {
			var ok bool
			if ft, ok = fields[k]; !ok {
				if !s.allowUnknown {
					s.pos = keyAt
					return s.fail(KindUnknownMember, "unknown member %s (names are case-sensitive)", checkfu.Quote(k))
				}
				for name := range fields {
					if strings.EqualFold(name, k) {
						s.pos = keyAt
						return s.fail(KindUnknownMember, "member %s differs from %s only in case", checkfu.Quote(k), checkfu.Quote(name))
					}
				}
			}
		}
		s.space()
		if s.pos >= len(s.data) || s.data[s.pos] != ':' {
			return s.fail(KindSyntax, "expected ':' after a member name")
		}
		s.pos++
		s.space()
		s.path = append(s.path, step{member: true, name: k})
		if err := s.value(ft, depth); err != nil {
			return err
		}
		s.path = s.path[:len(s.path)-1]
		s.space()
		if s.pos >= len(s.data) {
			return s.fail(KindSyntax, "unexpected end of JSON")
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
		case '}':
			s.pos++
			return nil
		default:
			return s.fail(KindSyntax, "expected ',' or '}'")
		}
	}
}

func (s *scanner) array(t reflect.Type, depth int) error {
	if depth > s.maxDepth {
		return s.fail(KindDepth, "nested deeper than %d", s.maxDepth)
	}
	t = concrete(t)
	var elem reflect.Type
	if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
		elem = t.Elem()
	}
	s.pos++ // [
	s.space()
	if s.pos < len(s.data) && s.data[s.pos] == ']' {
		s.pos++
		return nil
	}
	for i := 0; ; i++ {
		s.space()
		s.path = append(s.path, step{index: i})
		if err := s.value(elem, depth); err != nil {
			return err
		}
		s.path = s.path[:len(s.path)-1]
		s.space()
		if s.pos >= len(s.data) {
			return s.fail(KindSyntax, "unexpected end of JSON")
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
		case ']':
			s.pos++
			return nil
		default:
			return s.fail(KindSyntax, "expected ',' or ']'")
		}
	}
}

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// concrete strips pointers from t, and returns nil for a type whose
// members are not checked: an interface, or a type that decodes itself.
func concrete(t reflect.Type) reflect.Type {
	for t != nil {
		if t.Kind() == reflect.Interface {
			return nil
		}
		if t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType) ||
			t.Implements(textUnmarshalerType) || reflect.PointerTo(t).Implements(textUnmarshalerType) {
			return nil
		}
		if t.Kind() != reflect.Pointer {
			return t
		}
		t = t.Elem()
	}
	return nil
}

var fieldCache sync.Map // reflect.Type -> map[string]reflect.Type

// fieldsOf returns the JSON member names of struct type t, as
// encoding/json spells them, with each field's type. Fields of embedded
// structs without a name of their own are promoted; a name that two
// fields at the same depth claim belongs to neither, as in encoding/json.
func fieldsOf(t reflect.Type) map[string]reflect.Type {
	if f, ok := fieldCache.Load(t); ok {
		return f.(map[string]reflect.Type)
	}
	out := map[string]reflect.Type{}
	depthOf := map[string]int{}
	var walk func(t reflect.Type, depth int, visited map[reflect.Type]bool)
	walk = func(t reflect.Type, depth int, visited map[reflect.Type]bool) {
		if visited[t] {
			return
		}
		visited[t] = true
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			if f.Anonymous && name == "" {
				ft := f.Type
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if ft.Kind() == reflect.Struct {
					walk(ft, depth+1, visited)
					continue
				}
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if d, ok := depthOf[name]; ok {
				if d == depth {
					delete(out, name) // ambiguous: encoding/json drops it
				}
				if d <= depth {
					continue
				}
			}
			depthOf[name] = depth
			out[name] = f.Type
		}
	}
	walk(t, 0, map[reflect.Type]bool{})
	fieldCache.Store(t, out)
	return out
}
