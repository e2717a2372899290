package acp_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/checkfu/checkfu/acp"
)

// JSON-RPC member names are case-sensitive and a message holds each at
// most once. encoding/json matches names without regard to case and lets
// a repeated name overwrite the first, so without an exact check "ID" is
// taken for "id", and a line whose first "id" says 1 answers call 2: a
// hostile agent's line then means one thing to this client and another to
// any exact parser (a transcript recorder, a proxy) reading the same line.
func TestMemberNamesAreExactAndUnique(t *testing.T) {
	for _, line := range []string{
		`{"jsonrpc":"2.0","ID":1,"result":{}}`,
		`{"JSONRPC":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","Method":"session/update","params":{"sessionId":"s","update":{}}}`,
		`{"jsonrpc":"2.0","id":1,"id":2,"result":{}}`,
		`{"jsonrpc":"2.0","id":1,"result":{},"result":{"stopReason":"end_turn"}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"a","update":{}},"params":{"sessionId":"b","update":{}}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"Code":1,"message":"m"}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","message":"n"}}`,
		`[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","iD":2,"result":{}}]`,
	} {
		if _, err := acp.ParseLine(nil, []byte(line)); !errors.Is(err, acp.CodeMessageInvalid) {
			t.Errorf("ParseLine(%s) = %v, want message_invalid", line, err)
		}
	}
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"ID":1,"id":2}}`, // inside result: the schema's business
		`{ "jsonrpc" : "2.0" , "\u0069d" : 1 , "result" : [ "}" , {"a":"\"}"} ] }`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","data":{"code":2}}}`,
	} {
		if _, err := acp.ParseLine(nil, []byte(line)); err != nil {
			t.Errorf("ParseLine(%s) = %v, want it accepted", line, err)
		}
	}
}

// The Client's session/update fast path must refuse what ParseLine
// refuses: a duplicate or miscased member ends the client instead of
// reaching OnUpdate.
func TestUpdateFastPathRefusesDuplicateMembers(t *testing.T) {
	var got []acp.SessionNotification
	c, a, _ := newRawClient(t, acp.Config{OnUpdate: func(n acp.SessionNotification) { got = append(got, n) }})
	a.send(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"a","update":{}},"params":{"sessionId":"b","update":{}}}`)
	// A line that ends the client in any case, so the test cannot hang;
	// once the client has ended nobody reads it, so it is written aside.
	go func() { _ = a.out.WriteLine([]byte(`not json`)) }()
	<-c.Done()
	if !errors.Is(c.Err(), acp.CodeMessageInvalid) {
		t.Fatalf("Err() = %v, want message_invalid", c.Err())
	}
	if len(got) != 0 {
		t.Fatalf("OnUpdate got %+v from a line with two params", got)
	}
}

// A session/update whose params are null carries nothing: the general
// path drops it (params absent), and the fast path must not deliver it
// as an empty update instead.
func TestNullUpdateParamsAreDropped(t *testing.T) {
	got := make(chan acp.SessionNotification, 2)
	_, a, _ := newRawClient(t, acp.Config{OnUpdate: func(n acp.SessionNotification) { got <- n }})
	a.send(`{"jsonrpc":"2.0","method":"session/update","params":null}`)
	a.send(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"real","update":{}}}`)
	if n := <-got; n.SessionID != "real" {
		t.Fatalf("OnUpdate got %+v first, want the update of session real", n)
	}
}

// ACP is UTF-8. encoding/json keeps invalid bytes verbatim in a
// RawMessage (Params, Result) and replaces them with U+FFFD in a string,
// so a line with invalid UTF-8 parsed, and its bytes reached Params
// unchanged: a recorder or proxy that replaces them read another message.
// ParseLine refuses such a line, and the Client ends on it instead of
// delivering it, on the update fast path too.
func TestInvalidUTF8IsRefused(t *testing.T) {
	lines := []string{
		"{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{\"sessionId\":\"s\",\"update\":{\"text\":\"\xff\"}}}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{\"sessionId\":\"s\xc3\",\"update\":{}}}",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"stopReason\":\"end_turn\",\"x\":\"\xed\xa0\x80\"}}",
		"{\"jsonrpc\":\"2.0\",\"id\":\"\xfe\",\"method\":\"session/request_permission\",\"params\":{}}",
		"[{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}},{\"jsonrpc\":\"2.0\",\"method\":\"m\xc0\xaf\"}]",
	}
	for _, line := range lines {
		if _, err := acp.ParseLine(nil, []byte(line)); !errors.Is(err, acp.CodeMessageInvalid) {
			t.Errorf("ParseLine(%q) = %v, want message_invalid", line, err)
		}
	}
	if _, err := acp.ParseLine(nil, []byte("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":{\"t\":\"\xef\xbf\xbd \xe2\x82\xac\"}}")); err != nil {
		t.Errorf("ParseLine refuses valid UTF-8 (U+FFFD itself, a euro sign): %v", err)
	}
	for _, line := range lines[:2] {
		var got []acp.SessionNotification
		c, a, _ := newRawClient(t, acp.Config{OnUpdate: func(n acp.SessionNotification) { got = append(got, n) }})
		a.send(line)
		// A line that ends the client in any case, so the test cannot hang;
		// once the client has ended nobody reads it, so it is written aside.
		go func() { _ = a.out.WriteLine([]byte(`not json`)) }()
		<-c.Done()
		if !errors.Is(c.Err(), acp.CodeMessageInvalid) || !strings.Contains(c.Err().Error(), "UTF-8") {
			t.Errorf("after %q the client ended with %v, want message_invalid", line, c.Err())
		}
		if len(got) != 0 {
			t.Errorf("OnUpdate got %+v from %q", got, line)
		}
	}
}

// A batch line of small messages decodes to some 5 times its size (about
// 150 bytes per 31-byte notification, so a 16 MiB line of 500,000 held
// some 80 MB). A batch of more than MaxBatchMessages is refused before any
// of it is decoded.
func TestBatchIsBounded(t *testing.T) {
	batch := func(n int) []byte {
		return []byte("[" + strings.TrimSuffix(strings.Repeat(`{"jsonrpc":"2.0","method":"m"},`, n), ",") + "]")
	}
	if msgs, err := acp.ParseLine(nil, batch(acp.MaxBatchMessages)); err != nil || len(msgs) != acp.MaxBatchMessages {
		t.Fatalf("a batch of %d: %d messages, %v", acp.MaxBatchMessages, len(msgs), err)
	}
	big := batch(100_000)
	allocs := testing.AllocsPerRun(1, func() {
		if _, err := acp.ParseLine(nil, big); !errors.Is(err, acp.CodeMessageInvalid) {
			t.Fatalf("a batch of 100000 = %v, want message_invalid", err)
		}
	})
	if allocs > 100 {
		t.Errorf("refusing a batch of 100000 took %v allocations: it was decoded", allocs)
	}
}
