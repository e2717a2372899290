package runnertest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"github.com/checkfu/checkfu/admission"
	"github.com/checkfu/checkfu/gateway/modelroute"
)

// MaxModelBody bounds the request body the scripted model server reads
// and records; a longer one is answered 413.
const MaxModelBody = 8 << 20

// ModelFinal is the text the scripted model answers once the tool's
// result is in the conversation.
const ModelFinal = "The scripted model read the tool's result. SCRIPTED-MODEL-DONE"

// A ModelRequest is one request the scripted model server received.
type ModelRequest struct {
	Method, Path, RawQuery string
	Header                 http.Header
	Body                   []byte
	// Reply is what the server answered: "tool", "final", "text",
	// "json" or "count_tokens".
	Reply string
}

// A ToolUse is one tool call of a Model's script: the tool's name as the
// model sees it, the namespace tool holding it (OpenAI Responses, Codex;
// "" for none) and its input.
type ToolUse struct {
	Tool      string
	Namespace string
	Arguments map[string]any
}

// A Model is a scripted model server, a mock: no model, a fixed script
// decided per request. It speaks Anthropic Messages (POST /v1/messages,
// streamed as server-sent events or whole, and count_tokens) well enough
// for Claude Code's ACP adapter, OpenAI Responses (POST /v1/responses,
// streamed) well enough for Codex, and the Gemini API (POST
// /v1beta/models/{model}:generateContent, whole, and
// :streamGenerateContent, server-sent events) well enough for Gemini
// CLI. With n tool results in the request's conversation (Anthropic
// tool_result blocks, OpenAI function_call_output items, Gemini
// functionResponse parts):
//
//   - a Gemini request that asks for JSON (generationConfig's
//     responseJsonSchema, responseSchema or responseMimeType
//     application/json: Gemini CLI's routing classifier) is answered
//     with a JSON value its schema accepts, so the CLI does not retry;
//   - else, when n < len(Calls) and the request offers Calls[n]'s tool,
//     it is answered with a call of it;
//   - else, when n > 0, with ModelFinal;
//   - else (a side call: a title, a classifier) with the text "OK".
//
// Every request is recorded (Received), its headers and body whole, so a
// test can check what reached the model provider.
type Model struct {
	// Calls are the tool calls the script makes, in order.
	Calls []ToolUse

	mu  sync.Mutex
	got []ModelRequest // guarded by mu
	n   int            // guarded by mu
}

// Received returns the requests the server received, in order.
func (m *Model) Received() []ModelRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]ModelRequest(nil), m.got...)
}

// CheckKey checks what a model server of dialect d received through the
// model route: every request carries key, in the header the outbound
// edge puts it in (d.KeyHeader; "Bearer KEY" in Authorization), no other
// credential header (the agent's own x-api-key or Authorization), and
// admission.PlaceholderKey in none of its headers and nowhere in its
// body. An empty got is an error too: a server that saw nothing proves
// nothing. The error names requests by number, never a header's value,
// so it holds no key.
func CheckKey(got []ModelRequest, d modelroute.Dialect, key string) error {
	if len(got) == 0 {
		return errors.New("runnertest: the model server received no request")
	}
	var errs []error
	for i, req := range got {
		have, other := "", ""
		for _, h := range []string{"X-Api-Key", "Authorization", "X-Goog-Api-Key"} {
			switch v := req.Header.Get(h); {
			case h != d.KeyHeader():
				other += v
			case h == "Authorization":
				have = strings.TrimPrefix(v, "Bearer ")
			default:
				have = v
			}
		}
		if have != key || other != "" {
			errs = append(errs, fmt.Errorf("runnertest: model request %d does not carry the key the edge attaches, alone, in %s", i+1, d.KeyHeader()))
		}
		if strings.Contains(fmt.Sprint(req.Header), admission.PlaceholderKey) || bytes.Contains(req.Body, []byte(admission.PlaceholderKey)) {
			errs = append(errs, fmt.Errorf("runnertest: model request %d carries the agent's placeholder key", i+1))
		}
	}
	return errors.Join(errs...)
}

// Start serves m on a loopback TLS httptest server, which the caller
// closes.
func (m *Model) Start() *httptest.Server { return httptest.NewTLSServer(m) }

// ServeHTTP answers one request by the script.
func (m *Model) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(io.LimitReader(req.Body, MaxModelBody+1))
	if err != nil || len(body) > MaxModelBody {
		http.Error(w, "request too large", http.StatusRequestEntityTooLarge)
		return
	}
	var parsed map[string]any
	json.Unmarshal(body, &parsed)
	reply, call := m.plan(req.URL.Path, parsed)
	if reply == "text" && wantsJSON(parsed) {
		reply = "json"
	}
	m.mu.Lock()
	m.n++
	id := m.n
	m.got = append(m.got, ModelRequest{Method: req.Method, Path: req.URL.Path, RawQuery: req.URL.RawQuery, Header: req.Header.Clone(), Body: body, Reply: reply})
	m.mu.Unlock()
	model, _ := parsed["model"].(string)
	stream, _ := parsed["stream"].(bool)
	switch {
	case reply == "count_tokens":
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"input_tokens":100}`)
	case strings.HasSuffix(req.URL.Path, "/responses"):
		m.responses(w, reply, call, model, id)
	case strings.HasSuffix(req.URL.Path, "/messages"):
		m.messages(w, reply, call, model, id, stream)
	case strings.HasPrefix(req.URL.Path, "/v1beta/models/"):
		m.gemini(w, req.URL.Path, reply, call, parsed)
	default:
		http.Error(w, "not found", http.StatusNotFound)
	}
}

// plan decides the reply to a request at path with body: "tool" with
// the call to make, "final", "text" or "count_tokens".
func (m *Model) plan(path string, body map[string]any) (string, ToolUse) {
	if strings.HasSuffix(path, "/count_tokens") {
		return "count_tokens", ToolUse{}
	}
	n := toolResults(body)
	if n < len(m.Calls) && offered(body["tools"], "", m.Calls[n]) {
		return "tool", m.Calls[n]
	}
	if n > 0 {
		return "final", ToolUse{}
	}
	return "text", ToolUse{}
}

// toolResults counts the tool results in a conversation.
func toolResults(v any) int {
	n := 0
	switch x := v.(type) {
	case map[string]any:
		if t, _ := x["type"].(string); t == "tool_result" || t == "function_call_output" {
			n++
		}
		if _, ok := x["functionResponse"]; ok {
			n++ // a Gemini part
		}
		for _, y := range x {
			n += toolResults(y)
		}
	case []any:
		for _, y := range x {
			n += toolResults(y)
		}
	}
	return n
}

// offered reports whether tools (a request's tools array) offers call's
// tool, inside its namespace when set; ns is the namespace tools sits in.
func offered(tools any, ns string, call ToolUse) bool {
	list, _ := tools.([]any)
	for _, t := range list {
		tm, _ := t.(map[string]any)
		if fd, ok := tm["functionDeclarations"]; ok && offered(fd, ns, call) {
			return true // a Gemini tool: its function declarations
		}
		name, _ := tm["name"].(string)
		if typ, _ := tm["type"].(string); typ == "namespace" {
			if offered(tm["tools"], name, call) {
				return true
			}
			continue
		}
		if name == call.Tool && ns == call.Namespace {
			return true
		}
	}
	return false
}

// sse writes events as a server-sent-event stream.
func sse(w http.ResponseWriter, events []map[string]any) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	var b bytes.Buffer
	for _, e := range events {
		data, _ := json.Marshal(e)
		fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", e["type"], data)
	}
	w.Write(b.Bytes())
}

// messages answers an Anthropic Messages request.
func (m *Model) messages(w http.ResponseWriter, reply string, call ToolUse, model string, id int, stream bool) {
	usage := map[string]any{"input_tokens": 100, "output_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	args, _ := json.Marshal(call.Arguments)
	var block map[string]any
	stop := "end_turn"
	switch reply {
	case "tool":
		block = map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_scripted_%d", id), "name": call.Tool, "input": json.RawMessage(args)}
		stop = "tool_use"
	case "final":
		block = map[string]any{"type": "text", "text": ModelFinal}
	default:
		block = map[string]any{"type": "text", "text": "OK"}
	}
	msgID := fmt.Sprintf("msg_scripted_%d", id)
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": msgID, "type": "message", "role": "assistant", "model": model,
			"content": []any{block}, "stop_reason": stop, "stop_sequence": nil, "usage": usage})
		return
	}
	start := map[string]any{"type": "message_start", "message": map[string]any{"id": msgID, "type": "message", "role": "assistant", "model": model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 100, "output_tokens": 1}}}
	events := []map[string]any{start}
	if reply == "tool" {
		events = append(events,
			map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "tool_use", "id": block["id"], "name": call.Tool, "input": map[string]any{}}},
			map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(args)}})
	} else {
		events = append(events,
			map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}},
			map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": block["text"]}})
	}
	events = append(events,
		map[string]any{"type": "content_block_stop", "index": 0},
		map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 10}},
		map[string]any{"type": "message_stop"})
	sse(w, events)
}

// responses answers an OpenAI Responses request, streamed.
func (m *Model) responses(w http.ResponseWriter, reply string, call ToolUse, model string, id int) {
	args, _ := json.Marshal(call.Arguments)
	usage := map[string]any{"input_tokens": 100, "input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens": 10,
		"output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 110}
	base := map[string]any{"id": fmt.Sprintf("resp_scripted_%d", id), "object": "response", "created_at": 1764806400, "model": model, "status": "in_progress", "output": []any{}}
	var item map[string]any
	if reply == "tool" {
		item = map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_scripted_%d", id), "call_id": fmt.Sprintf("call_scripted_%d", id),
			"name": call.Tool, "arguments": string(args), "status": "completed"}
		if call.Namespace != "" {
			item["namespace"] = call.Namespace
		}
	} else {
		text := "OK"
		if reply == "final" {
			text = ModelFinal
		}
		item = map[string]any{"type": "message", "id": fmt.Sprintf("msg_scripted_%d", id), "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}}
	}
	var events []map[string]any
	seq := 0
	push := func(e map[string]any) {
		e["sequence_number"] = seq
		seq++
		events = append(events, e)
	}
	push(map[string]any{"type": "response.created", "response": base})
	push(map[string]any{"type": "response.in_progress", "response": base})
	push(map[string]any{"type": "response.output_item.added", "output_index": 0, "item": item})
	if reply == "tool" {
		push(map[string]any{"type": "response.function_call_arguments.delta", "item_id": item["id"], "output_index": 0, "delta": string(args)})
		push(map[string]any{"type": "response.function_call_arguments.done", "item_id": item["id"], "output_index": 0, "arguments": string(args)})
	} else {
		part := item["content"].([]any)[0]
		text := part.(map[string]any)["text"]
		push(map[string]any{"type": "response.content_part.added", "item_id": item["id"], "output_index": 0, "content_index": 0, "part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
		push(map[string]any{"type": "response.output_text.delta", "item_id": item["id"], "output_index": 0, "content_index": 0, "delta": text})
		push(map[string]any{"type": "response.output_text.done", "item_id": item["id"], "output_index": 0, "content_index": 0, "text": text})
		push(map[string]any{"type": "response.content_part.done", "item_id": item["id"], "output_index": 0, "content_index": 0, "part": part})
	}
	push(map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	done := map[string]any{}
	for k, v := range base {
		done[k] = v
	}
	done["status"], done["output"], done["usage"] = "completed", []any{item}, usage
	push(map[string]any{"type": "response.completed", "response": done})
	sse(w, events)
}

// wantsJSON reports whether a Gemini request asks for a JSON answer.
func wantsJSON(body map[string]any) bool {
	gc, _ := body["generationConfig"].(map[string]any)
	return gc["responseJsonSchema"] != nil || gc["responseSchema"] != nil || gc["responseMimeType"] == "application/json"
}

// fromSchema builds a value that the JSON schema sc accepts: the first
// of an enum, an object with every property, an empty array, 1 for a
// number (10 for one named like a score), false, or a string.
func fromSchema(sc any, key string) any {
	m, _ := sc.(map[string]any)
	if m == nil {
		return "x"
	}
	if e, _ := m["enum"].([]any); len(e) > 0 {
		return e[0]
	}
	typ, _ := m["type"].(string)
	if ts, ok := m["type"].([]any); ok && len(ts) > 0 {
		typ, _ = ts[0].(string)
	}
	if typ == "" && m["properties"] != nil {
		typ = "object"
	}
	switch strings.ToLower(typ) {
	case "object":
		o := map[string]any{}
		props, _ := m["properties"].(map[string]any)
		for k, v := range props {
			o[k] = fromSchema(v, k)
		}
		return o
	case "array":
		return []any{}
	case "integer", "number":
		if strings.Contains(strings.ToLower(key), "score") {
			return 10
		}
		return 1
	case "boolean":
		return false
	}
	return "x"
}

// gemini answers a Gemini request at path: server-sent events for
// :streamGenerateContent (a thought, then the answer, whose chunk has the
// final counts and a finishReason), and one JSON answer for :generateContent; usage is 100
// input and 10 output tokens.
func (m *Model) gemini(w http.ResponseWriter, path, reply string, call ToolUse, body map[string]any) {
	var part map[string]any
	switch reply {
	case "tool":
		part = map[string]any{"functionCall": map[string]any{"name": call.Tool, "args": call.Arguments}}
	case "final":
		part = map[string]any{"text": ModelFinal}
	case "json":
		gc, _ := body["generationConfig"].(map[string]any)
		sc := gc["responseJsonSchema"]
		if sc == nil {
			sc = gc["responseSchema"]
		}
		v := any(map[string]any{})
		if sc != nil {
			v = fromSchema(sc, "")
		}
		b, _ := json.Marshal(v)
		part = map[string]any{"text": string(b)}
	default:
		part = map[string]any{"text": "OK"}
	}
	model := strings.TrimPrefix(path, "/v1beta/models/")
	model, method, _ := strings.Cut(model, ":")
	answer := map[string]any{
		"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{part}}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110},
		"modelVersion":  model,
	}
	if method != "streamGenerateContent" {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(answer)
		return
	}
	// Streamed in two chunks: a thought with the counts so far, then
	// the answer, whole, with the final ones (a chunk with an empty text
	// part is one Gemini CLI counts as invalid).
	first := map[string]any{
		"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{map[string]any{"text": "Scripted.", "thought": true}}}, "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": 100, "totalTokenCount": 100},
		"modelVersion":  model,
	}
	chunks := []map[string]any{first, answer}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	var b bytes.Buffer
	for _, c := range chunks {
		data, _ := json.Marshal(c)
		fmt.Fprintf(&b, "data: %s\r\n\r\n", data)
	}
	w.Write(b.Bytes())
}
