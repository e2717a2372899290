package runner

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/checkfu/checkfu/acp"
	"github.com/checkfu/checkfu/admission"
)

// TestHarnessNotesAtMostMaxNotedToolCalls: the Runner remembers the
// MaxNotedToolCalls most recent tool calls an agent announced, and
// forgets the oldest one past the bound; an update over
// MaxPermissionBytes, or of another kind, is not noted, and a harness
// that binds by name notes nothing.
func TestHarnessNotesAtMostMaxNotedToolCalls(t *testing.T) {
	codex, _ := admission.Agent("codex")
	h := newHarness(&codex)
	announce := func(id string, pad int) acp.SessionNotification {
		u, _ := json.Marshal(map[string]any{"sessionUpdate": "tool_call", "toolCallId": id, "title": "Tool: checkfu/list_issues", "pad": string(make([]byte, pad))})
		return acp.SessionNotification{SessionID: "s", Update: u}
	}
	for i := range MaxNotedToolCalls {
		h.note(announce(fmt.Sprint("call_", i), 0))
	}
	if _, ok := h.toolCall("call_0"); !ok {
		t.Fatalf("the oldest of %d tool calls is forgotten at the bound", MaxNotedToolCalls)
	}
	h.note(announce("one_more", 0))
	if _, ok := h.toolCall("call_0"); ok {
		t.Fatalf("%d tool calls are remembered, want %d", MaxNotedToolCalls+1, MaxNotedToolCalls)
	}
	if c, ok := h.toolCall("one_more"); !ok || c.Title != "Tool: checkfu/list_issues" {
		t.Fatalf("the newest tool call: %v, %v", c, ok)
	}
	h.note(announce("too_long", MaxPermissionBytes))
	if _, ok := h.toolCall("too_long"); ok {
		t.Fatal("a tool call over MaxPermissionBytes is noted")
	}
	u, _ := json.Marshal(map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "update", "title": "x"})
	h.note(acp.SessionNotification{SessionID: "s", Update: u})
	if _, ok := h.toolCall("update"); ok {
		t.Fatal("a tool_call_update is noted as a tool call")
	}
	claude, _ := admission.Agent("claude-code")
	byName := newHarness(&claude)
	byName.note(announce("claude", 0))
	if _, ok := byName.toolCall("claude"); ok {
		t.Fatal("a harness that binds by name notes tool calls")
	}
}
