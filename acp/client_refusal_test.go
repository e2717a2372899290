package acp_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/acp"
)

// Every permission request the client answers without OnPermission
// reaches OnRefusal with its code, so a Runner can log what acp decided
// alone: a foreign session, a request over the pending bound, too many
// options, params that do not decode. A request OnPermission answers
// does not.
func TestRefusalsDecidedAloneAreReported(t *testing.T) {
	refusals := make(chan error, 8)
	release := make(chan struct{})
	c, a, _ := newRawClient(t, acp.Config{
		OnPermission: func(ctx context.Context, req acp.RequestPermissionRequest) acp.PermissionOutcome {
			<-release
			return acp.Select("no")
		},
		// Exactly one request of this test's size fits.
		MaxPendingPermissionBytes: 128,
		OnRefusal:                 func(err error) { refusals <- err },
	})
	t.Cleanup(func() { close(release) })
	a.initialize(c)
	a.openSession(c, "s")
	req := func(id, session, options string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"method":"session/request_permission","params":{"sessionId":%q,"toolCall":{"toolCallId":"c"},"options":[%s]}}`, id, session, options)
	}
	no := `{"optionId":"no","name":"No","kind":"reject_once"}`
	many := strings.TrimSuffix(strings.Repeat(no+",", 65), ",")
	tests := []struct {
		name string
		line string
		want checkfu.Code // "" when OnRefusal must not be called
	}{
		{"with OnPermission", req("held", "s", no), ""},
		{"foreign session", req("f", "other", no), acp.CodePermissionSessionUnknown},
		{"over the pending bound", req("p", "s", no), acp.CodePermissionsPending},
		{"65 options", req("o", "s", many), acp.CodePermissionOptionsTooMany},
		{"params that do not decode", `{"jsonrpc":"2.0","id":"i","method":"session/request_permission","params":{"sessionId":7}}`, acp.CodeMessageInvalid},
	}
	for _, tt := range tests {
		a.send(tt.line)
		if tt.want == "" {
			continue
		}
		a.next() // the client's answer
		select {
		case err := <-refusals:
			if !errors.Is(err, tt.want) {
				t.Errorf("%s: OnRefusal(%v), want %s", tt.name, err, tt.want)
			}
			if strings.Contains(err.Error(), "other") {
				t.Errorf("%s: the refusal quotes the agent: %v", tt.name, err)
			}
		default:
			t.Errorf("%s: OnRefusal was not called", tt.name)
		}
	}
	select {
	case err := <-refusals:
		t.Fatalf("OnRefusal(%v) more than once per refusal", err)
	default:
	}
}
