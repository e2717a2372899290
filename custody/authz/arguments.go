package authz

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/internal/strictjson"
)

// Limits on tool arguments, applied before any schema validation.
const (
	// MaxArgumentBytes is the largest tool-argument document accepted.
	MaxArgumentBytes = 1 << 20
	// MaxArgumentDepth is the deepest nesting of arrays and objects.
	MaxArgumentDepth = 64
	// MaxArgumentNumberBytes is the longest number literal accepted; its
	// decimal exponent, if any, must also lie within ±maxNumberExponent.
	// The schema validator turns every number into an exact big.Rat, so
	// without these bounds one literal such as 1e999999 costs a
	// million-digit computation, and 1e1000001 (which big.Rat refuses)
	// crashes the validator.
	MaxArgumentNumberBytes = 100
)

// maxNumberExponent bounds the decimal exponent of a number literal:
// comfortably beyond float64's range, small enough to be cheap exactly.
const maxNumberExponent = 1000

// parseStrictJSON decodes exactly one JSON value from data with
// internal/strictjson (no duplicate or case-folded member names, valid
// UTF-8, nothing after the value, at most MaxArgumentBytes and
// MaxArgumentDepth), then bounds every number literal (checkNumber).
// Numbers are kept as json.Number so that no precision is lost.
func parseStrictJSON(data []byte) (any, error) {
	if len(data) == 0 {
		return nil, errors.New("empty document")
	}
	v, err := strictjson.Parse(data, strictjson.Options{MaxDepth: MaxArgumentDepth, MaxBytes: MaxArgumentBytes})
	if err != nil {
		return nil, err
	}
	if err := checkNumbers(v); err != nil {
		return nil, err
	}
	return v, nil
}

// checkNumbers applies checkNumber to every number in v, a tree from
// strictjson.Parse.
func checkNumbers(v any) error {
	switch t := v.(type) {
	case json.Number:
		return checkNumber(string(t))
	case map[string]any:
		for _, e := range t {
			if err := checkNumbers(e); err != nil {
				return err
			}
		}
	case []any:
		for _, e := range t {
			if err := checkNumbers(e); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkFoldedMembers refuses an object, at any depth of v (a tree from
// strictjson.Parse), with two members whose names are equal under
// Unicode case folding (strings.EqualFold), such as "state" and
// "STATE". The schema checks each by its exact name, but a provider
// that reads names case-insensitively (many decoders of JSON and of
// query strings do) would take one for the other: the member the
// schema checked and the approval shows may not be the one it acts on.
// The names are quoted: they are the arguments' structure, not values.
func checkFoldedMembers(v any) error {
	switch t := v.(type) {
	case map[string]any:
		if len(t) > 1 {
			seen := make(map[string]string, len(t))
			for k := range t {
				f := foldName(k)
				if other, dup := seen[f]; dup {
					a, b := min(k, other), max(k, other)
					return fmt.Errorf("members %s and %s differ only in case", checkfu.Quote(a), checkfu.Quote(b))
				}
				seen[f] = k
			}
		}
		for _, e := range t {
			if err := checkFoldedMembers(e); err != nil {
				return err
			}
		}
	case []any:
		for _, e := range t {
			if err := checkFoldedMembers(e); err != nil {
				return err
			}
		}
	}
	return nil
}

// foldName returns s with every rune replaced by the least rune of its
// case-folding orbit (unicode.SimpleFold), so that two names are equal
// under strings.EqualFold exactly when their foldName is equal.
func foldName(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		b.WriteRune(least)
	}
	return b.String()
}

// checkNumber refuses a number literal (already valid JSON) that is longer
// than MaxArgumentNumberBytes or whose exponent exceeds maxNumberExponent
// in magnitude. The literal itself is not quoted: arguments are content.
func checkNumber(s string) error {
	if len(s) > MaxArgumentNumberBytes {
		return fmt.Errorf("a number literal of %d bytes is longer than %d", len(s), MaxArgumentNumberBytes)
	}
	i := strings.IndexAny(s, "eE")
	if i < 0 {
		return nil
	}
	exp := strings.TrimLeft(strings.TrimLeft(s[i+1:], "+-"), "0")
	if n, err := strconv.Atoi(exp); exp != "" && (len(exp) > 4 || err != nil || n > maxNumberExponent) {
		return fmt.Errorf("a number's exponent is beyond ±%d", maxNumberExponent)
	}
	return nil
}

// canonicalJSON encodes a value produced by parseStrictJSON in the one
// form the outbound edge sends and approvals bind: object keys sorted,
// no insignificant space, numbers as written. The bytes are exactly what
// encoding/json's Encoder with HTML escaping off writes for v (without
// its newline): appendCanonical writes the types parseStrictJSON makes
// directly, and any other value goes through the Encoder.
func canonicalJSON(v any) ([]byte, error) {
	if out, ok := appendCanonical(make([]byte, 0, 64), v); ok {
		return out, nil
	}
	return encoderJSON(v)
}

// encoderJSON is canonicalJSON through encoding/json's Encoder.
func encoderJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("authz: canonical arguments: %w", err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// appendCanonical appends v to dst as encoderJSON would write it, and
// reports false, leaving the encoding to encoderJSON, for a value of any
// type parseStrictJSON does not make or a number literal the Encoder
// would refuse.
func appendCanonical(dst []byte, v any) ([]byte, bool) {
	switch t := v.(type) {
	case nil:
		return append(dst, "null"...), true
	case bool:
		return strconv.AppendBool(dst, t), true
	case string:
		return appendCanonicalString(dst, t), true
	case json.Number:
		if t == "" {
			return append(dst, '0'), true // as the Encoder writes a zero Number
		}
		if !validNumber(string(t)) {
			return dst, false
		}
		return append(dst, t...), true
	case []any:
		if t == nil {
			return append(dst, "null"...), true
		}
		dst = append(dst, '[')
		for i, e := range t {
			if i > 0 {
				dst = append(dst, ',')
			}
			var ok bool
			if dst, ok = appendCanonical(dst, e); !ok {
				return dst, false
			}
		}
		return append(dst, ']'), true
	case map[string]any:
		if t == nil {
			return append(dst, "null"...), true
		}
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(appendCanonicalString(dst, k), ':')
			var ok bool
			if dst, ok = appendCanonical(dst, t[k]); !ok {
				return dst, false
			}
		}
		return append(dst, '}'), true
	}
	return dst, false
}

// appendCanonicalString appends s as a JSON string the way encoding/json
// writes it with HTML escaping off: '"' and '\\' escaped, \b \f \n \r \t
// by name and every other control byte as \u00XX, each invalid UTF-8 byte
// as \ufffd, and U+2028 and U+2029 as escapes.
func appendCanonicalString(dst []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1:
			dst = append(append(dst, s[start:i]...), `\ufffd`...)
		case c == '\u2028' || c == '\u2029':
			dst = append(append(dst, s[start:i]...), '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// validNumber reports whether s is a JSON number literal, as
// encoding/json checks a json.Number before it writes one.
func validNumber(s string) bool {
	if s == "" {
		return false
	}
	if s[0] == '-' {
		s = s[1:]
		if s == "" {
			return false
		}
	}
	digits := func() {
		for s != "" && '0' <= s[0] && s[0] <= '9' {
			s = s[1:]
		}
	}
	switch {
	case s[0] == '0':
		s = s[1:]
	case '1' <= s[0] && s[0] <= '9':
		digits()
	default:
		return false
	}
	if len(s) >= 2 && s[0] == '.' && '0' <= s[1] && s[1] <= '9' {
		s = s[1:]
		digits()
	}
	if len(s) >= 2 && (s[0] == 'e' || s[0] == 'E') {
		s = s[1:]
		if s[0] == '+' || s[0] == '-' {
			s = s[1:]
			if s == "" {
				return false
			}
		}
		digits()
	}
	return s == ""
}
