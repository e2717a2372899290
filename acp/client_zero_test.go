package acp_test

import (
	"context"
	"errors"
	"testing"

	"github.com/checkfu/checkfu/acp"
)

// TestZeroClientRefuses: a Client not built by NewClient is connected to
// no agent. Every call refuses with client_closed at once (none waits on
// an agent that cannot answer) and Done is already closed.
func TestZeroClientRefuses(t *testing.T) {
	var c acp.Client
	ctx := context.Background()
	if _, err := c.Initialize(ctx); !errors.Is(err, acp.CodeClientClosed) {
		t.Errorf("Initialize = %v, want %s", err, acp.CodeClientClosed)
	}
	if _, err := c.NewSession(ctx, acp.NewSessionRequest{Cwd: "/w"}); !errors.Is(err, acp.CodeClientClosed) {
		t.Errorf("NewSession = %v, want %s", err, acp.CodeClientClosed)
	}
	if _, err := c.Prompt(ctx, "s", acp.TextBlock("hi")); !errors.Is(err, acp.CodeClientClosed) {
		t.Errorf("Prompt = %v, want %s", err, acp.CodeClientClosed)
	}
	if err := c.Cancel("s"); !errors.Is(err, acp.CodeClientClosed) {
		t.Errorf("Cancel = %v, want %s", err, acp.CodeClientClosed)
	}
	if err := c.Err(); !errors.Is(err, acp.CodeClientClosed) {
		t.Errorf("Err = %v, want %s", err, acp.CodeClientClosed)
	}
	select {
	case <-c.Done():
	default:
		t.Error("Done of the zero Client is not closed")
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
}
