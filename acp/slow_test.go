package acp

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/internal/strictjson"
)

// parseLineReference is the slow, obviously strict ParseLine the fast path
// must agree with: internal/strictjson decodes the line into wireMessage
// (or []wireMessage for a batch), and the same JSON-RPC rules (fromWire)
// apply to what it decoded. Like netip's slow_test.go, it shares nothing
// with the fast path but those rules.
func parseLineReference(line []byte) ([]Message, error) {
	t := bytes.Trim(line, " \t\r\n")
	if len(t) == 0 {
		return nil, checkfu.Refuse(CodeMessageInvalid, "empty")
	}
	var ws []wireMessage
	switch t[0] {
	case '{':
		var w wireMessage
		if err := strictjson.Unmarshal(line, &w, strictOptions); err != nil {
			return nil, err
		}
		ws = []wireMessage{w}
	case '[':
		var raw []json.RawMessage
		if err := strictjson.Unmarshal(line, &ws, strictOptions); err != nil {
			return nil, err
		}
		if len(ws) == 0 || len(ws) > MaxBatchMessages {
			return nil, checkfu.Refuse(CodeMessageInvalid, "empty or long batch")
		}
		_ = json.Unmarshal(line, &raw)
		for i, e := range raw {
			if e[0] != '{' {
				return nil, checkfu.Refuse(CodeMessageInvalid, "element %d", i)
			}
		}
	default:
		return nil, checkfu.Refuse(CodeMessageInvalid, "not an object or array")
	}
	var out []Message
	for i := range ws {
		m, err := fromWire(&ws[i])
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// checkAgainstReference fails t unless ParseLine and parseLineReference
// both refuse line, or both accept it with the same messages; and unless
// every refusal of ParseLine is a message_invalid refusal.
func checkAgainstReference(t *testing.T, line []byte) {
	t.Helper()
	fast, ferr := ParseLine(nil, line)
	slow, serr := parseLineReference(line)
	if (ferr == nil) != (serr == nil) {
		t.Fatalf("ParseLine(%q): fast path %v, strictjson %v", line, ferr, serr)
	}
	if ferr != nil {
		if !errors.Is(ferr, CodeMessageInvalid) {
			t.Fatalf("ParseLine(%q) = %v, want message_invalid", line, ferr)
		}
		return
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("ParseLine(%q) = %+v, strictjson %+v", line, fast, slow)
	}
}

// referenceSeeds are lines on both sides of every strict rule.
var referenceSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"result":{}}`,
	`  {"jsonrpc":"2.0","id":"a","method":"m","params":[1,{"b":null}]}` + "\r\n",
	`{"jsonrpc":"2.0","id":1,"result":{}}}`,
	`{"jsonrpc":"2.0","id":1,"result":{}} {}`,
	"\u00a0{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}",
	`{"jsonrpc":"2.0","id":1,"result":{"a":1,"a":2}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"a":1,"\u0061":2}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"a":{"b":[{"c":1,"c":1}]}}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"a":1,"A":2}}`,
	`{"jsonrpc":"2.0","ID":1,"result":{}}`,
	`{"jsonrpc":"2.0","\u0069d":1,"result":{}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","Data":1}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","data":{"code":1,"code":2}}}`,
	`{"jsonrpc":"2.0","id":1,"result":"\ud800"}`,
	`{"jsonrpc":"2.0","id":1,"result":"\udc00\ud800"}`,
	`{"jsonrpc":"2.0","id":1,"result":"\udc00"}`,
	`{"jsonrpc":"2.0","id":1,"result":{"\udfff x":1}}`,
	`{"jsonrpc":"2.0","id":1,"result":"\ud83d\ude00 \\u0041 \"\\\""}`,
	`{"jsonrpc":"2.0","id":1,"result":"\ud800\u0041"}`,
	`{"jsonrpc":"2.0","id":1,"result":` + strings.Repeat("[", 63) + strings.Repeat("]", 63) + `}`,
	`{"jsonrpc":"2.0","id":1,"result":` + strings.Repeat("[", 64) + strings.Repeat("]", 64) + `}`,
	`[{"jsonrpc":"2.0","id":1,"result":` + strings.Repeat("[", 62) + strings.Repeat("]", 62) + `}]`,
	`[{"jsonrpc":"2.0","id":1,"result":` + strings.Repeat("[", 63) + strings.Repeat("]", 63) + `}]`,
	`[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","method":"session/update","params":{}}]`,
	`{"jsonrpc":"2.0","id":1,"result":` + strings.Repeat(`{"a":`, 63) + `1` + strings.Repeat("}", 63) + `}`,
	`{"jsonrpc":"2.0","id":1,"result":` + strings.Repeat(`{"a":`, 64) + `1` + strings.Repeat("}", 64) + `}`,
	`[{"jsonrpc":"2.0","id":1,"result":{}},null]`, `[]`, `[1]`, `["x"]`, `{}`, `null`, `"s"`,
	`[{"jsonrpc":"2.0","id":1,"result":{},"Result":{}}]`,
	`{"jsonrpc":"2.0","id":1,"result":{` + strings.Repeat(`"k":0,`, 1) + `"x":1}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"x"},"_meta":{}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{},"sessionId":"t"}}`,
	`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x","data":[1]}}`,
	`{"jsonrpc":"2.0","id":1.0,"result":{}}`,
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"\xff\"}",
}

// batch returns a batch line of n notifications.
func batch(n int) string {
	return "[" + strings.TrimSuffix(strings.Repeat(`{"jsonrpc":"2.0","method":"m"},`, n), ",") + "]"
}

func manyMembers(n int, dup bool) string {
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0","id":1,"result":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"k`)
		b.WriteString(strings.Repeat("x", i))
		b.WriteString(`":0`)
	}
	if dup {
		b.WriteString(`,"k":1`)
	}
	b.WriteString(`}}`)
	return b.String()
}

// TestParseLineAgreesWithStrictJSON runs the seeds (which cover each
// strict rule from both sides, and objects past the pairwise-compared
// size) through both decoders.
func TestParseLineAgreesWithStrictJSON(t *testing.T) {
	seeds := append(referenceSeeds, manyMembers(40, false), manyMembers(40, true), manyMembers(8, true), batch(MaxBatchMessages), batch(MaxBatchMessages+1))
	var refused int
	for _, s := range seeds {
		checkAgainstReference(t, []byte(s))
		if _, err := ParseLine(nil, []byte(s)); err != nil {
			refused++
		}
	}
	if refused < 15 || refused > len(seeds)-6 {
		t.Fatalf("%d of %d seeds refused: the seeds no longer straddle the rules", refused, len(seeds))
	}
}

// FuzzParseLineAgainstStrictJSON checks that ParseLine's fast path (the
// encoding/json decode plus the byte scanner) and internal/strictjson
// accept exactly the same lines and decode them to the same messages, and
// that the update fast path agrees with both.
func FuzzParseLineAgainstStrictJSON(f *testing.F) {
	for _, s := range referenceSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(manyMembers(20, true)))
	f.Fuzz(func(t *testing.T, line []byte) {
		checkAgainstReference(t, line)
		checkUpdateFastPath(t, line)
	})
}

// BenchmarkStrictCheck compares the fast path's strict scan with the
// reference's (strictjson.Unmarshal minus its encoding/json decode, which
// both paths pay) on a 1 KiB session/update line.
func BenchmarkStrictCheck(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` + strings.Repeat("x", 900) + `"}}}}`)
	b.Run("checkStrict", func(b *testing.B) {
		b.SetBytes(int64(len(line)))
		for b.Loop() {
			if err := checkStrict(line); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("strictjson.Valid", func(b *testing.B) {
		b.SetBytes(int64(len(line)))
		for b.Loop() {
			if err := strictjson.Valid(line, strictOptions); err != nil {
				b.Fatal(err)
			}
		}
	})
}
