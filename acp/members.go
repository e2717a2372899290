package acp

import (
	"bytes"
	"encoding/json"

	"github.com/checkfu/checkfu"
)

// checkMembers refuses an object whose member names are not exactly (in
// case) among names, or that repeats one. obj must already have decoded
// as a JSON object: encoding/json matched its names without regard to
// case and let a repeated name overwrite the first, so this check is what
// makes the member set closed and exact. Each member's raw value is passed
// to each, when it is not nil. The scan is one pass over the bytes.
func checkMembers(obj []byte, names []string, each func(name string, val []byte) error) error {
	var seen uint32            // bit i: names[i] was seen; len(names) <= 32
	i := skipSpace(obj, 0) + 1 // past '{'
	for {
		i = skipSpace(obj, i)
		if i >= len(obj) || obj[i] == '}' {
			return nil
		}
		if obj[i] == ',' {
			i = skipSpace(obj, i+1)
		}
		if i >= len(obj) || obj[i] != '"' {
			return checkfu.Refuse(CodeMessageInvalid, "acp: malformed object")
		}
		end := skipString(obj, i)
		if end-i < 2 || obj[end-1] != '"' {
			return checkfu.Refuse(CodeMessageInvalid, "acp: malformed object")
		}
		raw := obj[i:end]
		name := raw[1 : len(raw)-1]
		if bytes.IndexByte(name, '\\') >= 0 {
			var s string
			if json.Unmarshal(raw, &s) != nil {
				return checkfu.Refuse(CodeMessageInvalid, "acp: member name %s does not decode", checkfu.Quote(string(raw)))
			}
			name = []byte(s)
		}
		k := -1
		for j, n := range names {
			if string(name) == n {
				k = j
				break
			}
		}
		if k < 0 {
			return checkfu.Refuse(CodeMessageInvalid, "acp: unknown member %s (JSON-RPC member names are case-sensitive)", checkfu.Quote(string(name)))
		}
		if seen&(1<<k) != 0 {
			return checkfu.Refuse(CodeMessageInvalid, "acp: member %q appears twice", names[k])
		}
		seen |= 1 << k
		i = skipSpace(obj, end)
		i = skipSpace(obj, i+1) // past ':'
		vend := skipValue(obj, i)
		if each != nil {
			if err := each(names[k], obj[i:vend]); err != nil {
				return err
			}
		}
		i = vend
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the JSON string starting at b[i].
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// skipValue returns the index after the JSON value starting at b[i].
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = skipString(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return len(b)
	default: // number, true, false, null
		for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\t' && b[i] != '\n' && b[i] != '\r' {
			i++
		}
		return i
	}
}
