package runner

import (
	"context"
	"time"

	"github.com/checkfu/checkfu/acp"
	"github.com/checkfu/checkfu/adapters"
)

// SetDescription replaces the Description New checked against the
// enrollment, so that a test can show what a provider's word decides
// after New: nothing the enrollment decides.
func SetDescription(r *Runner, d adapters.Description) { r.desc = d }

// SetRefusalClock replaces the clock and the sleep of s's refusal rate,
// so that a test sees the waits without taking them.
func SetRefusalClock(s *Session, now func() time.Time, sleep func(context.Context, time.Duration) error) {
	s.refusals.budget.SetClock(now, sleep)
}

// LeaseRemaining returns the uses left on lease id of s's plane (zero
// once revoked).
func LeaseRemaining(s *Session, id string) (int64, error) {
	return s.plane.gw.Leases.Remaining(id)
}

// WorkspaceRead is workspaceRead, the pure decision of a permission
// request for the agent's own tool.
func WorkspaceRead(root, kind string, paths []string) (bool, string) {
	return workspaceRead(root, kind, paths)
}

// DecodePermission reads a permission request's tool call as the Runner
// does and returns its kind and the paths of its locations.
func DecodePermission(raw []byte) (kind string, paths []string, err error) {
	call, err := decodeOwn(acp.RequestPermissionRequest{ToolCall: acp.ToolCallUpdate{Raw: raw}})
	return call.Kind, call.paths(), err
}

// WorkspaceRoot is workspaceRoot.
func WorkspaceRoot(cwd string) string { return workspaceRoot(cwd) }
