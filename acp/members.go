package acp

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/internal/strictjson"
)

// maxMessageDepth bounds how deeply objects and arrays nest in one line
// (a batch's array counts as one level); it is internal/strictjson's
// default.
const maxMessageDepth = strictjson.DefaultMaxDepth

// strictOptions are the rules of the reference decoder, internal/strictjson.
var strictOptions = strictjson.Options{MaxDepth: maxMessageDepth}

// memberOptions are the rules for params and results: ACP lets a peer add
// members, so undeclared ones are allowed, but a member that differs from
// a declared one only in case is refused (encoding/json would decode
// "SessionID" into sessionId, and an exact reader would not).
var memberOptions = strictjson.Options{MaxDepth: maxMessageDepth, AllowUnknownMembers: true}

// decodeMembers decodes the params or result b into v under memberOptions.
func decodeMembers(b []byte, v any) error { return strictjson.Unmarshal(b, v, memberOptions) }

// The member names of a JSON-RPC 2.0 message and of its error object.
var (
	messageMembers = []string{"jsonrpc", "id", "method", "params", "result", "error"}
	errorMembers   = []string{"code", "message", "data"}
)

// The strict rules for a line are internal/strictjson's, applied to the
// line decoded into wireMessage (or []wireMessage for a batch): valid
// UTF-8, nothing after the value, no unpaired surrogate escape, no object
// at any depth repeating a member name, nesting at most maxMessageDepth,
// and the member names of a message and of its error object exactly, in
// case, those of wireMessage and wireError. strictjson is the reference
// (the slow path); this file's byte scanner, run after encoding/json has
// decoded the line, is the fast path that decides, and
// FuzzParseLineAgainstStrictJSON checks that the two accept exactly the
// same lines and decode them to the same messages. When the fast path
// refuses, the reference is asked why, so that the refusal names the
// place and rule in strictjson's words.

// strictRefusal is the refusal of a line the fast path found breaking a
// strict rule. Its cause is the reference's error; were the reference to
// accept the line (the two would disagree, which the fuzz target rules
// out), it is the fast path's own.
func strictRefusal(line []byte, fast error) error {
	cause := referenceError(line)
	if cause == nil {
		cause = fast
	}
	return &checkfu.Refusal{Code: CodeMessageInvalid, Message: "acp: not a strict JSON-RPC 2.0 message", Err: cause}
}

// referenceError decodes line with internal/strictjson into the shape
// ParseLine reads and returns its error, nil when it obeys every rule.
func referenceError(line []byte) error {
	if t := trimSpace(line); len(t) > 0 && t[0] == '[' {
		var ws []wireMessage
		return strictjson.Unmarshal(line, &ws, strictOptions)
	}
	var w wireMessage
	return strictjson.Unmarshal(line, &w, strictOptions)
}

// decodeOne decodes the one JSON value b holds into v with encoding/json,
// refusing unknown members (without regard to case, as encoding/json
// matches them) and anything but white space after the value.
func decodeOne(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if len(trimSpace(b[dec.InputOffset():])) != 0 {
		return errTrailing
	}
	return nil
}

var errTrailing = errors.New("acp: data after the JSON value")

// trimSpace removes JSON white space (not Unicode's) from both ends of b.
func trimSpace(b []byte) []byte {
	i, j := 0, len(b)
	for i < j && isSpace(b[i]) {
		i++
	}
	for j > i && isSpace(b[j-1]) {
		j--
	}
	return b[i:j]
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// checkStrict is the fast path of the strict rules that encoding/json
// does not enforce: it refuses an object at any depth that repeats a
// member name (after unescaping), an unpaired surrogate escape, nesting
// deeper than maxMessageDepth, and a message object (the line, or an
// object element of a batch) or its error object with a member name not
// exactly among messageMembers or errorMembers. b must be one valid JSON
// value (encoding/json has decoded it); the scan is one pass over its
// bytes and allocates only for escaped or very many member names.
func checkStrict(b []byte) error {
	var names [2 * smallObject][]byte
	s := scanner{b: b, names: names[:0]}
	s.space()
	if s.i >= len(s.b) {
		return errors.New("acp: no JSON value")
	}
	return s.value(0, rootMessage)
}

// shape says which member names an object may have.
type shape uint8

const (
	anyShape    shape = iota // any names (the schema's business)
	rootMessage              // the line: a message, or a batch of them
	message                  // messageMembers
	errorObject              // errorMembers
)

type scanner struct {
	b     []byte
	i     int
	names [][]byte // member names of the objects being scanned, innermost last
}

var errScan = errors.New("acp: malformed JSON")

func (s *scanner) space() {
	for s.i < len(s.b) && isSpace(s.b[s.i]) {
		s.i++
	}
}

// value scans the value at s.i, which sits inside depth containers.
func (s *scanner) value(depth int, sh shape) error {
	if s.i >= len(s.b) {
		return errScan
	}
	switch s.b[s.i] {
	case '{':
		if sh == rootMessage {
			sh = message
		}
		return s.object(depth+1, sh)
	case '[':
		return s.array(depth+1, sh == rootMessage)
	case '"':
		_, err := s.str()
		return err
	default: // a number or a literal, which encoding/json has checked
		for s.i < len(s.b) && !isSpace(s.b[s.i]) && s.b[s.i] != ',' && s.b[s.i] != '}' && s.b[s.i] != ']' {
			s.i++
		}
		return nil
	}
}

func (s *scanner) array(depth int, batch bool) error {
	if depth > maxMessageDepth {
		return errors.New("acp: nested too deeply")
	}
	sh := anyShape
	if batch {
		sh = message
	}
	s.i++ // [
	for {
		s.space()
		if s.i >= len(s.b) {
			return errScan
		}
		switch s.b[s.i] {
		case ']':
			s.i++
			return nil
		case ',':
			s.i++
			s.space()
		}
		if err := s.value(depth, sh); err != nil {
			return err
		}
	}
}

// smallObject is the number of member names compared pairwise; an object
// with more is checked through a map.
const smallObject = 16

func (s *scanner) object(depth int, sh shape) error {
	if depth > maxMessageDepth {
		return errors.New("acp: nested too deeply")
	}
	base := len(s.names)
	defer func() { s.names = s.names[:base] }()
	var many map[string]struct{}
	s.i++ // {
	for {
		s.space()
		if s.i >= len(s.b) {
			return errScan
		}
		switch s.b[s.i] {
		case '}':
			s.i++
			return nil
		case ',':
			s.i++
			s.space()
		}
		if s.i >= len(s.b) || s.b[s.i] != '"' {
			return errScan
		}
		start := s.i
		escaped, err := s.str()
		if err != nil {
			return err
		}
		name := s.b[start+1 : s.i-1]
		if escaped {
			var n string
			if json.Unmarshal(s.b[start:s.i], &n) != nil {
				return errScan
			}
			name = []byte(n)
		}
		if err := checkName(name, sh); err != nil {
			return err
		}
		switch {
		case many != nil:
			if _, dup := many[string(name)]; dup {
				return errors.New("acp: a member name appears twice")
			}
			many[string(name)] = struct{}{}
		default:
			for _, prev := range s.names[base:] {
				if bytes.Equal(prev, name) {
					return errors.New("acp: a member name appears twice")
				}
			}
			s.names = append(s.names, name)
			if len(s.names)-base > smallObject {
				many = make(map[string]struct{}, 2*smallObject)
				for _, n := range s.names[base:] {
					many[string(n)] = struct{}{}
				}
			}
		}
		s.space()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return errScan
		}
		s.i++
		s.space()
		sub := anyShape
		if sh == message && string(name) == "error" {
			sub = errorObject
		}
		if err := s.value(depth, sub); err != nil {
			return err
		}
	}
}

// checkName refuses a member name an object of shape sh may not have.
func checkName(name []byte, sh shape) error {
	var names []string
	switch sh {
	case message:
		names = messageMembers
	case errorObject:
		names = errorMembers
	default:
		return nil
	}
	for _, n := range names {
		if string(name) == n {
			return nil
		}
	}
	return errors.New("acp: an unknown member (member names are case-sensitive)")
}

// str scans the string at s.i and reports whether it holds an escape. It
// refuses an escape that is an unpaired UTF-16 surrogate, which
// encoding/json would turn into U+FFFD (so two different lines would
// decode to one message).
func (s *scanner) str() (escaped bool, err error) {
	s.i++ // opening quote
	for {
		j := bytes.IndexByte(s.b[s.i:], '"')
		if j < 0 {
			return escaped, errScan
		}
		k := bytes.IndexByte(s.b[s.i:s.i+j], '\\')
		if k < 0 {
			s.i += j + 1
			return escaped, nil
		}
		escaped = true
		s.i += k
		if s.i+1 >= len(s.b) {
			return escaped, errScan
		}
		if s.b[s.i+1] != 'u' {
			s.i += 2 // \" among them: the closing quote is searched again
			continue
		}
		r, ok := hex4(s.b, s.i+2)
		if !ok {
			return escaped, errScan
		}
		s.i += 6
		switch {
		case 0xdc00 <= r && r <= 0xdfff:
			return escaped, errors.New("acp: an unpaired surrogate escape")
		case 0xd800 <= r && r <= 0xdbff:
			r2, ok := hex4(s.b, s.i+2)
			if !ok || s.b[s.i] != '\\' || s.b[s.i+1] != 'u' || r2 < 0xdc00 || r2 > 0xdfff {
				return escaped, errors.New("acp: an unpaired surrogate escape")
			}
			s.i += 6
		}
	}
}

// hex4 decodes the four hex digits at b[i:i+4].
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(b[i:i+4]), 16, 16)
	return rune(v), err == nil
}
