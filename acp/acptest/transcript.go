package acptest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/checkfu/checkfu/acp"
)

// A Transcript records what a Runner sees of a conversation: every
// session/update, every permission request, and whatever the test adds
// (stop reasons, say), one line each, in order. Session ids are replaced
// by "<session>" so that two runs against an agent that picks random ids
// compare equal. Plug OnUpdate and OnPermission into an acp.Config.
//
// The zero Transcript is ready to use and answers every permission request
// by selecting its first allow_once option.
type Transcript struct {
	mu    sync.Mutex // guards lines
	lines []string
}

// OnUpdate records n; it is an acp.Config.OnUpdate.
func (tr *Transcript) OnUpdate(n acp.SessionNotification) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, n.Update); err != nil {
		buf.Reset()
		buf.Write(n.Update)
	}
	tr.add("update " + normalise(buf.String(), n.SessionID))
}

// OnPermission records req and selects its first allow_once option (or
// answers cancelled when it has none); it is an acp.Config.OnPermission.
func (tr *Transcript) OnPermission(_ context.Context, req acp.RequestPermissionRequest) acp.PermissionOutcome {
	opts, _ := json.Marshal(req.Options)
	tr.add(fmt.Sprintf("permission %s %s", req.ToolCall.ToolCallID, opts))
	for _, o := range req.Options {
		if o.Kind == "allow_once" {
			return acp.Select(o.OptionID)
		}
	}
	return acp.CancelledOutcome()
}

// Addf records one line formatted with fmt.Sprintf.
func (tr *Transcript) Addf(format string, args ...any) { tr.add(fmt.Sprintf(format, args...)) }

func (tr *Transcript) add(s string) {
	tr.mu.Lock()
	tr.lines = append(tr.lines, s)
	tr.mu.Unlock()
}

// Lines returns a copy of the recorded lines.
func (tr *Transcript) Lines() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return append([]string(nil), tr.lines...)
}

func normalise(s, session string) string {
	if session == "" {
		return s
	}
	return string(bytes.ReplaceAll([]byte(s), []byte(session), []byte("<session>")))
}
