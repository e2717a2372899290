package mcpremote_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/checkfu/checkfu/gateway/mcpremote"
)

// neverAnswers is a remote MCP server that does the handshake and then
// answers the tools/call with a notification, never with its response:
// the client is left waiting for an answer that will not come.
func neverAnswers(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, _ := io.ReadAll(req.Body)
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	_ = json.Unmarshal(body, &msg)
	w.Header().Set("Content-Type", "application/json")
	switch msg.Method {
	case "initialize":
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"slow","version":"1"}}}`, msg.ID)
	case "tools/call":
		fmt.Fprint(w, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}`)
	default:
		if len(msg.ID) == 0 {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no"}}`, msg.ID)
	}
}

// TestCallEndsAtItsDeadline: a remote server that never answers the
// tools/call (each of its HTTP answers is prompt, so no exchange's own
// timeout fires) cannot hold the call open: Call ends at its deadline,
// even when the caller's context has none, with CodeRemoteCallFailed.
func TestCallEndsAtItsDeadline(t *testing.T) {
	defer mcpremote.SetMaxCallDuration(200 * time.Millisecond)()
	ts := httptest.NewServer(http.HandlerFunc(neverAnswers))
	defer ts.Close()
	done := make(chan error, 1)
	go func() {
		_, err := mcpremote.Call(context.Background(), http.DefaultTransport, ts.URL, "search", json.RawMessage(`{}`))
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, mcpremote.CodeRemoteCallFailed) {
			t.Fatalf("Call: %v, want %s", err, mcpremote.CodeRemoteCallFailed)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Call of a tool whose server never answers is still running after 10s; its deadline is 200ms")
	}
}
