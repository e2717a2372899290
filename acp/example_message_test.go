package acp_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/checkfu/checkfu/acp"
)

func ExampleNewWriter() {
	var out strings.Builder
	w := acp.NewWriter(&out, 0) // 0: the default bound, acp.DefaultMaxLineBytes
	fmt.Println(w.MaxLineBytes() == acp.DefaultMaxLineBytes)

	err := w.WriteMessage(acp.Message{
		ID:     acp.IntID(1),
		Method: acp.MethodSessionCancel,
		Params: json.RawMessage(`{"sessionId":"s1"}`),
	})
	fmt.Println(err)

	// A line holding a newline byte would split one message in two:
	// it is refused and nothing is written.
	err = w.WriteLine([]byte("{}\n{}"))
	fmt.Println(errors.Is(err, acp.CodeLineInvalid))
	fmt.Print(out.String())
	// Output:
	// true
	// <nil>
	// true
	// {"jsonrpc":"2.0","id":1,"method":"session/cancel","params":{"sessionId":"s1"}}
}

func ExampleIntID() {
	id := acp.IntID(7)
	b, _ := json.Marshal(id)
	fmt.Println(string(b), id.String(), id == acp.IntID(7), id == acp.StringID("7"))
	// Output: 7 7 true false
}

func ExampleStringID() {
	id := acp.StringID("req-1")
	b, _ := json.Marshal(id)
	fmt.Println(string(b), id.IsZero())

	// The zero ID is absent: the id of a notification.
	var none acp.ID
	b, _ = json.Marshal(none)
	fmt.Println(string(b), none.IsZero())

	// Only strings, integers and null are ids.
	fmt.Println(json.Unmarshal([]byte(`1.5`), &id) != nil)
	// Output:
	// "req-1" false
	// null true
	// true
}

func ExampleMessage_IsNotification() {
	msgs, err := acp.ParseLine(nil, []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk"}}}`))
	if err != nil {
		panic(err)
	}
	m := msgs[0]
	fmt.Println(m.IsNotification(), m.IsRequest(), m.IsResponse(), m.ID.IsZero())
	// Output: true false false true
}

func ExampleTextBlock() {
	b, _ := json.Marshal(acp.PromptRequest{
		SessionID: "s1",
		Prompt:    []acp.ContentBlock{acp.TextBlock("Fix the failing test.")},
	})
	fmt.Println(string(b))
	// Output: {"sessionId":"s1","prompt":[{"type":"text","text":"Fix the failing test."}]}
}

func ExampleSelect() {
	// An OnPermission handler that allows only edits, and only once.
	onPermission := func(req acp.RequestPermissionRequest) acp.PermissionOutcome {
		if req.ToolCall.Kind != "edit" {
			return acp.CancelledOutcome()
		}
		for _, o := range req.Options {
			if o.Kind == "allow_once" {
				return acp.Select(o.OptionID)
			}
		}
		return acp.CancelledOutcome()
	}
	var req acp.RequestPermissionRequest
	err := json.Unmarshal([]byte(`{"sessionId":"s1","toolCall":{"toolCallId":"call_1","kind":"edit"},
		"options":[{"optionId":"always","name":"Always","kind":"allow_always"},{"optionId":"once","name":"Once","kind":"allow_once"}]}`), &req)
	if err != nil {
		panic(err)
	}
	b, _ := json.Marshal(acp.RequestPermissionResponse{Outcome: onPermission(req)})
	fmt.Println(string(b))
	// Output: {"outcome":{"outcome":"selected","optionId":"once"}}
}

func ExampleCancelledOutcome() {
	b, _ := json.Marshal(acp.RequestPermissionResponse{Outcome: acp.CancelledOutcome()})
	fmt.Println(string(b))
	// Output: {"outcome":{"outcome":"cancelled"}}
}

func ExampleSessionNotification_Kind() {
	n := acp.SessionNotification{
		SessionID: "s1",
		Update:    json.RawMessage(`{"sessionUpdate":"tool_call","toolCallId":"call_1","title":"Edit config"}`),
	}
	switch n.Kind() {
	case "tool_call", "tool_call_update":
		var tc acp.ToolCallUpdate // decode only the kinds acted on
		if err := json.Unmarshal(n.Update, &tc); err != nil {
			panic(err)
		}
		fmt.Println(n.Kind(), tc.ToolCallID, tc.Title)
	default:
		fmt.Println("ignored:", n.Kind())
	}
	// Output: tool_call call_1 Edit config
}

func ExampleNewSessionRequest_MarshalJSON() {
	// The checkfu harness fields travel under _meta.checkfu.
	b, err := json.Marshal(acp.NewSessionRequest{
		Cwd:          "/work",
		BuiltinTools: []string{"read"},
		ResumeBlob:   []byte("state"),
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(string(b))
	// Output: {"cwd":"/work","mcpServers":[],"_meta":{"checkfu":{"resume_blob":"c3RhdGU=","builtinTools":["read"]}}}
}
