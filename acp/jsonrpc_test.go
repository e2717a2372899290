package acp_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/acp"
)

func TestParseLine(t *testing.T) {
	tests := []struct {
		line string
		want string // kinds "req notif resp", or "!code"
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, "req"},
		{`{"jsonrpc":"2.0","id":"a","method":"x"}`, "req"},
		{`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s"}}`, "notif"},
		{`{"jsonrpc":"2.0","id":0,"result":{"stopReason":"end_turn"}}`, "resp"},
		{`{"jsonrpc":"2.0","id":0,"result":null}`, "resp"},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse"}}`, "resp"},
		{`[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","method":"n"}]`, "resp notif"},
		{` {"jsonrpc":"2.0","method":"n"} `, "notif"},
		{`[]`, "!message_invalid"},
		{`[1]`, "!message_invalid"},
		{`[{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"1.0","method":"n"}]`, "!message_invalid"},
		{`"x"`, "!message_invalid"},
		{`{"jsonrpc":"1.0","id":1,"method":"x"}`, "!message_invalid"},
		{`{"id":1,"method":"x"}`, "!message_invalid"},
		{`{"jsonrpc":"2.0","id":1.5,"method":"x"}`, "!message_invalid"},
		{`{"jsonrpc":"2.0","id":{},"method":"x"}`, "!message_invalid"},
		{`{"jsonrpc":"2.0","id":null,"method":"x"}`, "!message_invalid"},
		{`{"jsonrpc":"2.0","id":1}`, "!message_invalid"},
		{`{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"m"}}`, "!message_invalid"},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":1}}`, "!message_invalid"},
		{`{"jsonrpc":"2.0","method":"x","result":1}`, "!message_invalid"},
		{`{"jsonrpc":"2.0","result":1}`, "!message_invalid"},
		{`{"jsonrpc":"2.0","id":1,"result":1,"params":{}}`, "!message_invalid"},
		{`{"jsonrpc":"2.0","id":1,"method":"x","extra":1}`, "!message_invalid"},
		{`{"jsonrpc":"2.0","id":1,"method":"x"} {}`, "!message_invalid"},
		{`{"jsonrpc":"2.0","id":1,"method":"x"`, "!message_invalid"},
	}
	for _, tt := range tests {
		msgs, err := acp.ParseLine(nil, []byte(tt.line))
		got := ""
		if err != nil {
			got = "!" + codeOf(err)
			if len(msgs) != 0 {
				t.Errorf("ParseLine(%s) returned %d messages with an error", tt.line, len(msgs))
			}
		}
		for i, m := range msgs {
			if i > 0 {
				got += " "
			}
			switch {
			case m.IsRequest():
				got += "req"
			case m.IsNotification():
				got += "notif"
			case m.IsResponse():
				got += "resp"
			}
		}
		if got != tt.want {
			t.Errorf("ParseLine(%s) = %s (%v), want %s", tt.line, got, err, tt.want)
		}
	}
}

func TestMessageRoundTrip(t *testing.T) {
	msgs := []acp.Message{
		{ID: acp.IntID(7), Method: "session/prompt", Params: json.RawMessage(`{"a":1}`)},
		{ID: acp.StringID("x\"y"), Method: "m"},
		{Method: "session/update", Params: json.RawMessage(`{"b":[1,2]}`)},
		{ID: acp.IntID(0), Result: json.RawMessage(`{"stopReason":"end_turn"}`)},
		{ID: acp.IntID(-3), Error: &acp.RPCError{Code: -32601, Message: "nope", Data: json.RawMessage(`{"d":1}`)}},
		{ID: acp.IntID(1)}, // a response with a null result
	}
	for _, m := range msgs {
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		got, err := acp.ParseLine(nil, b)
		if err != nil || len(got) != 1 {
			t.Fatalf("ParseLine(%s) = %v, %v", b, got, err)
		}
		b2, _ := json.Marshal(got[0])
		if string(b) != string(b2) {
			t.Errorf("round trip: %s became %s", b, b2)
		}
	}
}

func TestRPCErrorIsNotARefusal(t *testing.T) {
	var err error = &acp.RPCError{Code: -32000, Message: "boom"}
	if _, ok := checkfu.CodeOf(err); ok {
		t.Errorf("an agent's JSON-RPC error carries a refusal code")
	}
	if err.Error() != `acp: agent error -32000: "boom"` {
		t.Errorf("Error() = %q", err.Error())
	}
}

// The agent writes an error's message; the Runner prints Error() to its
// logs and terminal. A hostile agent must not be able to forge log lines
// or terminal escapes there, nor fill a log with a 16 MiB message.
func TestRPCErrorQuotesTheAgentsMessage(t *testing.T) {
	msg := "boom\ncheckfu: all checks passed\x1b[2J" + strings.Repeat("x", 1<<20)
	got := (&acp.RPCError{Code: -32000, Message: msg}).Error()
	if strings.ContainsAny(got, "\n\r\x1b") {
		t.Errorf("Error() carries the agent's control bytes raw: %.80q", got)
	}
	if len(got) > 1024 {
		t.Errorf("Error() is %d bytes: the agent's message is not bounded", len(got))
	}
	const want = `acp: agent error -32000: "boom\ncheckfu: all checks passed\x1b[2Jxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"... (1048611 bytes)`
	if got != want {
		t.Errorf("Error() = %s, want %s", got, want)
	}
}

// Text the agent wrote reaches a parse error only through checkfu.Quote:
// escaped, and cut at 64 bytes with its length.
func TestParseErrorsQuoteTheAgentsText(t *testing.T) {
	long := strings.Repeat("m", 100) + "\n\x1b"
	tests := []struct{ line, want string }{
		{`{"jsonrpc":"2.0","id":1.5,"result":{}}`, `refused: message_invalid: acp: id "1.5" is not a string, an integer or null`},
		{`{"jsonrpc":"` + strings.Repeat("9", 70) + `","id":1,"result":{}}`, `refused: message_invalid: acp: jsonrpc is "` + strings.Repeat("9", 64) + `"... (70 bytes), want "2.0"`},
		{`{"jsonrpc":"2.0","id":null,"method":` + strconvQuote(long) + `}`, `refused: message_invalid: acp: request "` + strings.Repeat("m", 64) + `"... (102 bytes) has a null id`},
	}
	for _, tt := range tests {
		_, err := acp.ParseLine(nil, []byte(tt.line))
		if err == nil || err.Error() != tt.want {
			t.Errorf("ParseLine(%s) = %v, want %s", tt.line, err, tt.want)
		}
	}
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
