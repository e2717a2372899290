package acp_test

import (
	"context"
	"errors"
	"testing"

	"github.com/checkfu/checkfu/acp"
)

// The agent's answers are parsed as strictly as its messages: a
// session/new answered without a session id, or a turn ended with a stop
// reason ACP v1 does not define (or none), is a typed refusal, not a
// success carrying a zero value a Runner would act on.
func TestAnswersWithoutTheirFieldsAreRefused(t *testing.T) {
	c, a, _ := newRawClient(t, acp.Config{})
	a.initialize(c)
	ctx := context.Background()
	for _, result := range []string{`{}`, `null`, `{"sessionId":""}`} {
		done := make(chan error, 1)
		go func() { _, err := c.NewSession(ctx, acp.NewSessionRequest{Cwd: "/w"}); done <- err }()
		a.reply(a.nextOr(done).ID, result)
		if err := <-done; !errors.Is(err, acp.CodeMessageInvalid) {
			t.Errorf("session/new answered %s: %v, want message_invalid", result, err)
		}
	}
	for _, result := range []string{`{}`, `null`, `{"stopReason":""}`, `{"stopReason":"END_TURN"}`, `{"stopReason":"done"}`} {
		done := make(chan error, 1)
		go func() { _, err := c.Prompt(ctx, "s", acp.TextBlock("hi")); done <- err }()
		a.reply(a.nextOr(done).ID, result)
		if err := <-done; !errors.Is(err, acp.CodeMessageInvalid) {
			t.Errorf("session/prompt answered %s: %v, want message_invalid", result, err)
		}
	}
	done := make(chan error, 1)
	go func() { _, err := c.Prompt(ctx, "s", acp.TextBlock("hi")); done <- err }()
	a.reply(a.nextOr(done).ID, `{"stopReason":"max_turn_requests"}`)
	if err := <-done; err != nil {
		t.Errorf("a defined stop reason: %v", err)
	}
}
