package evidencelog_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/eventlog/evidencelog"
)

// TestCauseIsSealedContent: an evidence's Cause is the event's content,
// an Operator a reader holding the keys opens; the envelope carries the
// code alone. A log without keys records the event without it.
func TestCauseIsSealedContent(t *testing.T) {
	ctx := context.Background()
	keys, err := eventlog.NewKeys(make([]byte, eventlog.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	ev := sample(authz.EvidenceGatewayResult, authz.OutcomeFailed)
	ev.Code = "upstream_failed"
	ev.Cause = checkfu.Cause(errors.New("x509: certificate is valid for example.com, not api.example.net"))
	for _, keyed := range []bool{true, false} {
		opts := eventlog.Options{}
		if keyed {
			opts.Keys = keys
		}
		l, err := eventlog.New(eventlog.NewMemoryStore(), opts)
		if err != nil {
			t.Fatal(err)
		}
		sink, err := evidencelog.New(l, "sess-1")
		if err != nil {
			t.Fatal(err)
		}
		if err := sink.Record(ctx, ev); err != nil {
			t.Fatalf("keyed %v: Record = %v", keyed, err)
		}
		for e, err := range l.Read(ctx, "sess-1", 1) {
			if err != nil {
				t.Fatal(err)
			}
			js, _ := json.Marshal(e)
			if e.Code != "upstream_failed" || strings.Contains(string(js), "x509") {
				t.Errorf("keyed %v: envelope %v", keyed, e)
			}
		}
		content, err := l.Content(ctx, "sess-1", 1)
		if !keyed {
			if err == nil {
				t.Errorf("a keyless log kept content %q", content)
			}
			continue
		}
		op, err := evidencelog.ParseOperator(content)
		if err != nil || op.Cause != ev.Cause {
			t.Errorf("ParseOperator = %+v, %v; want cause %s", op, err, ev.Cause)
		}
	}
	if _, err := evidencelog.ParseOperator([]byte(`{"title":"x"}`)); !errors.Is(err, evidencelog.CodeEvidenceUnknown) {
		t.Errorf("ParseOperator(other content) = %v", err)
	}
}
