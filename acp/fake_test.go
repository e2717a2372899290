package acp_test

import (
	"context"
	"io"
	"testing"

	"github.com/checkfu/checkfu/acp"
	"github.com/checkfu/checkfu/acp/acptest"
)

// startFake runs the scripted fake agent on in-memory pipes.
func startFake(t *testing.T) (io.Reader, io.WriteCloser) {
	t.Helper()
	return acptest.Start(t, &acptest.Agent{})
}

// startSession runs agent on in-memory pipes, initializes a Client with
// cfg over it and opens a session with cwd "/w". It returns a context
// bounded by the watchdog, the Client and the session id; the test's
// cleanup closes everything.
func startSession(t *testing.T, agent *acptest.Agent, cfg acp.Config) (context.Context, *acp.Client, string) {
	t.Helper()
	out, in := acptest.Start(t, agent)
	c := acp.NewClient(out, in, cfg)
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), watchdog)
	t.Cleanup(cancel)
	if _, err := c.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	s, err := c.NewSession(ctx, acp.NewSessionRequest{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	return ctx, c, s.SessionID
}
