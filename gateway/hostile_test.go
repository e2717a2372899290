package gateway_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
)

// A hostileMCP is a hand-written remote MCP server that does the
// handshake like any other and answers the tools/call with answer. It
// records what each request was: its JSON-RPC method, "response" for a
// message without one, or the HTTP method of a GET or DELETE.
type hostileMCP struct {
	answer func(w http.ResponseWriter, id json.RawMessage)
	// status, when it names a method, answers that method's POST with
	// that bare HTTP status instead.
	status map[string]int

	mu   sync.Mutex
	seen []string // guarded by mu
}

func (h *hostileMCP) record(s string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seen = append(h.seen, s)
}

// Seen returns what the server received, in order.
func (h *hostileMCP) Seen() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.seen...)
}

func (h *hostileMCP) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost {
		h.record(req.Method)
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, _ := io.ReadAll(req.Body)
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	_ = json.Unmarshal(body, &msg)
	if msg.Method == "" {
		h.record("response")
	} else {
		h.record(msg.Method)
	}
	if code, ok := h.status[msg.Method]; ok {
		w.WriteHeader(code)
		return
	}
	switch msg.Method {
	case "initialize":
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Mcp-Session-Id", "hostile-session")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"hostile","version":"1"}}}`, msg.ID)
	case "tools/call":
		h.answer(w, msg.ID)
	case "":
		w.WriteHeader(http.StatusAccepted)
	default:
		if len(msg.ID) == 0 {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no"}}`, msg.ID)
	}
}
