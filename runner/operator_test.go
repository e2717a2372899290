package runner_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/eventlog/evidencelog"
	"github.com/checkfu/checkfu/runner"
	"github.com/checkfu/checkfu/runner/runnertest"
)

// syncBuffer is a bytes.Buffer safe for the goroutines that write to
// it (a logger, an agent's stderr copier) while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestUpstreamFailureCauseIsTheOperators: a call whose upstream presents
// a certificate for another name fails upstream_failed. The cause (the
// TLS name mismatch) is in the operator's log and in the operator's part
// of the result event (its sealed content); the agent's answer and the
// event's envelope (what log read shows) hold the code alone; and the
// credential is in none of them.
func TestUpstreamFailureCauseIsTheOperators(t *testing.T) {
	logs := &syncBuffer{}
	g := newRig(t, func(c *runner.Config, g *rig) {
		c.Logger = slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		// The loopback upstream's certificate names example.com and its
		// subdomains, not api.example.net.
		g.dns.Set("api.example.net", netip.MustParseAddr("127.0.0.1"))
		conn := &c.Connections[0]
		conn.Rules = append([]egress.Rule(nil), conn.Rules...)
		for i := range conn.Rules {
			conn.Rules[i].Host = "api.example.net"
		}
		for i := range conn.Tools {
			conn.Tools[i].Resource = strings.Replace(conn.Tools[i].Resource, "api.example.com", "api.example.net", 1)
		}
	})
	s := g.admitted(t)
	said := strings.Join(turn(t, s, []runnertest.Step{{Tool: "list_issues", Arguments: map[string]any{"state": "open"}}}), "\n")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if want := "\n[scripted] list_issues -> failed: upstream_failed"; !strings.HasSuffix(said, want) {
		t.Errorf("the agent was answered %q, want it to end %q", said, want)
	}
	const cause = "certificate is valid for" // crypto/x509's HostnameError
	es := entries(t, g.Runner, member.Session)
	var failed *eventlog.Entry
	for i, e := range es {
		if e.Code == string(egress.CodeUpstreamFailed) {
			failed = &es[i]
		}
	}
	if failed == nil {
		t.Fatalf("no upstream_failed event in %v", rows(es))
	}
	content, err := g.Log().Content(context.Background(), member.Session, failed.Seq)
	if err != nil {
		t.Fatalf("the failed call's event has no operator's part: %v", err)
	}
	op, err := evidencelog.ParseOperator(content)
	if err != nil || !strings.Contains(op.Cause, cause) || !strings.Contains(op.Cause, "api.example.net") {
		t.Errorf("the event's operator part = %+v, %v; want the TLS name mismatch", op, err)
	}
	if log := logs.String(); !strings.Contains(log, cause) || !strings.Contains(log, `"code":"upstream_failed"`) {
		t.Errorf("the operator's log holds no cause:\n%s", log)
	}
	dump, _ := json.Marshal(es)
	var table bytes.Buffer
	if err := s.WriteLog(context.Background(), &table); err != nil {
		t.Fatal(err)
	}
	for what, b := range map[string]string{"agent's answer": said, "event JSON": string(dump), "log table": table.String()} {
		if strings.Contains(b, cause) || strings.Contains(b, "x509") {
			t.Errorf("the %s holds the operator's cause: %s", what, b)
		}
	}
	for what, b := range map[string]string{"agent's answer": said, "event JSON": string(dump), "operator's log": logs.String(), "operator's part": string(content)} {
		if strings.Contains(b, canary) || strings.Contains(b, canary[4:20]) {
			t.Errorf("the %s holds the credential", what)
		}
	}
}
