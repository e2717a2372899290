package signing

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/checkfu/checkfu"
)

// scanEnvelopeJSON is the hot-path reader of the envelope JSON. It accepts
// exactly one object with the keys payloadType, payload and signatures
// (an array of objects with the keys keyid and sig), every value a string,
// each key once, keys spelled exactly, JSON whitespace anywhere JSON
// allows it, and nothing after the object. Strings must be valid UTF-8.
//
// FuzzEnvelopeScan checks that it agrees with decodeEnvelopeJSON, the
// slower reader built on encoding/json.
func scanEnvelopeJSON(data []byte) (*envelopeJSON, error) {
	s := &scanner{b: data}
	var ej envelopeJSON
	var seen [3]bool
	err := s.object("", func(key string) error {
		switch key {
		case "payloadType":
			return s.once(&seen[0], key, func() (err error) { ej.PayloadType, err = s.str(); return })
		case "payload":
			return s.once(&seen[1], key, func() (err error) { ej.Payload, err = s.str(); return })
		case "signatures":
			return s.once(&seen[2], key, func() error { return s.signatures(&ej) })
		}
		return fmt.Errorf("unknown key %s at top level (keys are case-sensitive)", checkfu.Quote(key))
	})
	if err != nil {
		return nil, err
	}
	for i, k := range [...]string{"payloadType", "payload", "signatures"} {
		if !seen[i] {
			return nil, fmt.Errorf("top level lacks key %q", k)
		}
	}
	s.ws()
	if s.i != len(s.b) {
		return nil, errors.New("data follows the JSON value")
	}
	return &ej, nil
}

type scanner struct {
	b []byte
	i int
}

var errSyntax = errors.New("invalid JSON")

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// next skips whitespace and consumes c.
func (s *scanner) next(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

func (s *scanner) once(seen *bool, key string, read func() error) error {
	if *seen {
		return fmt.Errorf("duplicate key %q", key)
	}
	*seen = true
	return read()
}

// object reads {"k": v, ...}, calling member for each key with the
// scanner positioned at the value.
func (s *scanner) object(path string, member func(key string) error) error {
	if !s.next('{') {
		return fmt.Errorf("%s is not a JSON object", where(path))
	}
	if s.next('}') {
		return nil
	}
	for {
		key, err := s.str()
		if err != nil {
			return err
		}
		if !s.next(':') {
			return errSyntax
		}
		if err := member(key); err != nil {
			return err
		}
		if s.next(',') {
			continue
		}
		if s.next('}') {
			return nil
		}
		return errSyntax
	}
}

func where(path string) string {
	if path == "" {
		return "top level"
	}
	return path
}

func (s *scanner) signatures(ej *envelopeJSON) error {
	if !s.next('[') {
		return errors.New(".signatures is not a JSON array")
	}
	ej.Signatures = []signatureJSON{}
	if s.next(']') {
		return nil
	}
	for {
		path := fmt.Sprintf(".signatures[%d]", len(ej.Signatures))
		var sj signatureJSON
		var seen [2]bool
		err := s.object(path, func(key string) error {
			switch key {
			case "keyid":
				return s.once(&seen[0], key, func() (err error) { sj.KeyID, err = s.str(); return })
			case "sig":
				return s.once(&seen[1], key, func() (err error) { sj.Sig, err = s.str(); return })
			}
			return fmt.Errorf("unknown key %s at %s (keys are case-sensitive)", checkfu.Quote(key), path)
		})
		if err != nil {
			return err
		}
		if !seen[0] || !seen[1] {
			return fmt.Errorf("%s lacks key \"keyid\" or \"sig\"", path)
		}
		ej.Signatures = append(ej.Signatures, sj)
		if s.next(',') {
			continue
		}
		if s.next(']') {
			return nil
		}
		return errSyntax
	}
}

// str reads a JSON string. Strings without escapes are sliced directly;
// strings with escapes are handed to encoding/json.
func (s *scanner) str() (string, error) {
	if !s.next('"') {
		return "", errors.New("want a JSON string")
	}
	start, escaped := s.i, false
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			raw := s.b[start:s.i]
			s.i++
			if !utf8.Valid(raw) {
				return "", errors.New("string is not valid UTF-8")
			}
			if !escaped {
				return string(raw), nil
			}
			var out string
			if err := json.Unmarshal(s.b[start-1:s.i], &out); err != nil {
				return "", errSyntax
			}
			if !utf8.ValidString(out) || bytes.ContainsRune([]byte(out), utf8.RuneError) {
				return "", errors.New("string escapes to invalid UTF-8")
			}
			return out, nil
		case c == '\\':
			escaped = true
			s.i += 2
		case c < 0x20:
			return "", errSyntax
		default:
			s.i++
		}
	}
	return "", errSyntax
}
