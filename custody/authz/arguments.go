package authz

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
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

// parseStrictJSON decodes exactly one JSON value from data, refusing
// invalid UTF-8, duplicate object keys (which encoding/json would let the
// last one win), nesting deeper than MaxArgumentDepth and trailing data.
// Numbers are kept as json.Number so that no precision is lost.
func parseStrictJSON(data []byte) (any, error) {
	if len(data) == 0 {
		return nil, errors.New("empty document")
	}
	if len(data) > MaxArgumentBytes {
		return nil, fmt.Errorf("document is %d bytes, more than %d", len(data), MaxArgumentBytes)
	}
	if !utf8.Valid(data) {
		return nil, errors.New("document is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := strictValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the JSON value")
	}
	return v, nil
}

func strictValue(dec *json.Decoder, depth int) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, syntaxError(err)
	}
	switch t := tok.(type) {
	case json.Delim:
		if depth >= MaxArgumentDepth {
			return nil, fmt.Errorf("nesting deeper than %d", MaxArgumentDepth)
		}
		switch t {
		case '{':
			m := map[string]any{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, syntaxError(err)
				}
				k := kt.(string) // the decoder only yields string keys here
				if _, dup := m[k]; dup {
					return nil, fmt.Errorf("duplicate key %s", quoteAgent(k))
				}
				v, err := strictValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				m[k] = v
			}
			if _, err := dec.Token(); err != nil {
				return nil, syntaxError(err)
			}
			return m, nil
		case '[':
			a := []any{}
			for dec.More() {
				v, err := strictValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, syntaxError(err)
			}
			return a, nil
		}
		return nil, fmt.Errorf("unexpected %q", t)
	case json.Number:
		if err := checkNumber(string(t)); err != nil {
			return nil, err
		}
		return t, nil
	default:
		return t, nil
	}
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

func syntaxError(err error) error {
	if err == io.EOF {
		return errors.New("truncated JSON")
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("invalid JSON at offset %d", se.Offset)
	}
	return errors.New("invalid JSON")
}

// canonicalJSON encodes a value produced by parseStrictJSON in the one
// form the outbound edge sends and approvals bind: object keys sorted,
// no insignificant space, numbers as written.
func canonicalJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("authz: canonical arguments: %w", err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
