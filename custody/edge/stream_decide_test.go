package edge_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/edge"
	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/internal/ruleprobe"
)

// modelRequest is a model call's request to path of the rig's provider,
// as the pipeline builds it.
func (rig *edgeRig) modelRequest(path string) *http.Request {
	rig.t.Helper()
	req, err := http.NewRequest("POST", rig.base+path, strings.NewReader(`{"model":"m"}`))
	if err != nil {
		rig.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	return req
}

// modelCall mints the model call of req as by allowed it (see
// edge.MintModelForTest), the key in X-Api-Key.
func (rig *edgeRig) modelCall(by *egress.Rules, req *http.Request) edge.Authorized {
	rig.t.Helper()
	a, err := edge.MintModelForTest(rig.conn, by, req, "X-Api-Key", rig.lease, govScope)
	if err != nil {
		rig.t.Fatal(err)
	}
	return a
}

// stream streams a and reads the answer whole, screened; decisions is
// how many rule decisions of api.example.com the edge made meanwhile.
func (rig *edgeRig) stream(a edge.Authorized) (body string, decisions int64, err error) {
	n, stop := ruleprobe.Count("api.example.com")
	defer stop()
	err = rig.edge.Stream(context.Background(), a, func(s *edge.Stream) error {
		b, err := io.ReadAll(s.Body)
		if err != nil {
			return err
		}
		if _, err := s.Screen(b); err != nil {
			return err
		}
		body = string(b)
		return nil
	})
	return body, n(), err
}

// TestStreamSendsWhatThePipelineAllowed: a model call the Connection's
// rules allowed, as they still are, is sent as allowed, with the key
// attached, and the edge decides nothing again.
func TestStreamSendsWhatThePipelineAllowed(t *testing.T) {
	rig := newEdgeRig(t)
	body, decisions, err := rig.stream(rig.modelCall(rig.conn.Rules, rig.modelRequest("/v1/messages")))
	if err != nil || body != `{"ok":true}` {
		t.Fatalf("Stream = %q, %v; want the provider's answer", body, err)
	}
	if decisions != 0 {
		t.Errorf("the edge decided the allowed request %d times, want 0 (the pipeline decided it)", decisions)
	}
	rig.mu.Lock()
	url, sent := rig.lastURL, rig.lastBody
	rig.mu.Unlock()
	if n := rig.hits.Load(); n != 1 || url != "/v1/messages" || sent != `{"model":"m"}` {
		t.Errorf("the provider got %d requests, the last %s %q", n, url, sent)
	}
}

// TestStreamDecidesAStaleOrForeignAllowed: a model call's decision that
// the Connection's rules, as they are when the edge sends, did not make
// (other rules made it, or these rules before a change) is decided again
// by them, once, and refused as they refuse it before the provider hears
// of it; a call that carries no decision is refused before anything.
func TestStreamDecidesAStaleOrForeignAllowed(t *testing.T) {
	other := func(rig *edgeRig, prefix string) *egress.Rules {
		port, _ := strconv.Atoi(rig.base[strings.LastIndexByte(rig.base, ':')+1:])
		r, err := egress.NewRules([]egress.Rule{{Host: "api.example.com", Port: uint16(port), PathPrefix: prefix, Methods: []string{"POST"}, Headers: []string{"Content-Type"}}})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	// replace gives rig.conn.Rules the rules of a document, as a
	// configuration reload does: the Rules is the same, its rules new.
	replace := func(rig *edgeRig, doc []byte) {
		if err := json.Unmarshal(doc, rig.conn.Rules); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name      string
		make      func(*edgeRig) edge.Authorized
		code      checkfu.Code // "" when the call is sent
		decisions int64
	}{
		{"foreign, refused by the Connection's rules", func(rig *edgeRig) edge.Authorized {
			return rig.modelCall(other(rig, "/v2"), rig.modelRequest("/v2/other"))
		}, egress.CodeNoRuleMatched, 1},
		{"foreign, allowed by the Connection's rules too", func(rig *edgeRig) edge.Authorized {
			return rig.modelCall(other(rig, "/v1/messages"), rig.modelRequest("/v1/messages"))
		}, "", 1},
		{"stale, the rules changed to refuse it", func(rig *edgeRig) edge.Authorized {
			a := rig.modelCall(rig.conn.Rules, rig.modelRequest("/v1/messages"))
			doc, err := json.Marshal(other(rig, "/v2"))
			if err != nil {
				t.Fatal(err)
			}
			replace(rig, doc)
			return a
		}, egress.CodeNoRuleMatched, 1},
		{"stale, the same rules loaded again", func(rig *edgeRig) edge.Authorized {
			a := rig.modelCall(rig.conn.Rules, rig.modelRequest("/v1/messages"))
			doc, err := json.Marshal(rig.conn.Rules)
			if err != nil {
				t.Fatal(err)
			}
			replace(rig, doc)
			return a
		}, "", 1},
		{"no decision", func(rig *edgeRig) edge.Authorized {
			return rig.modelCall(nil, rig.modelRequest("/v1/messages"))
		}, authz.CodeCapabilityMismatch, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rig := newEdgeRig(t)
			body, decisions, err := rig.stream(tc.make(rig))
			if decisions != tc.decisions {
				t.Errorf("the edge made %d rule decisions, want %d", decisions, tc.decisions)
			}
			if tc.code == "" {
				if err != nil || body != `{"ok":true}` || rig.hits.Load() != 1 {
					t.Errorf("Stream = %q, %v with %d requests sent; want the answer of one", body, err, rig.hits.Load())
				}
				return
			}
			if !errors.Is(err, tc.code) {
				t.Errorf("Stream = %v, want %s", err, tc.code)
			}
			if n := rig.hits.Load(); n != 0 {
				t.Errorf("the provider was contacted %d times", n)
			}
		})
	}
}
