package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/custodytest"
	"github.com/checkfu/checkfu/custody/edge"
	"github.com/checkfu/checkfu/custody/pipeline"
	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/gateway"
	"github.com/checkfu/checkfu/gateway/internal/rigtest"
)

// noLeak fails if any form of the canary appears in the bytes.
func noLeak(t *testing.T, what string, b []byte) {
	t.Helper()
	if leaks := custodytest.FindLeaks([]byte(rigtest.Canary), b); len(leaks) > 0 {
		t.Fatalf("%s leaks the credential as %v", what, leaks)
	}
}

func eventsJSON(t *testing.T, evs []authz.Evidence) []byte {
	t.Helper()
	b, err := json.Marshal(evs)
	if err != nil {
		t.Fatal(err)
	}
	return append(b, fmt.Sprintf("%+v", evs)...)
}

// gatewayEvents returns the gateway's decision and result events.
func gatewayEvents(r *rigtest.Rig) (decisions, results []authz.Evidence) {
	for _, ev := range r.Evidence.Events() {
		switch ev.Kind {
		case authz.EvidenceGatewayDecision:
			decisions = append(decisions, ev)
		case authz.EvidenceGatewayResult:
			results = append(results, ev)
		}
	}
	return decisions, results
}

func TestGatewayAllowedReadOnly(t *testing.T) {
	r := rigtest.New(t)
	a := r.Grant("issues.list")
	ch := r.Channel(rigtest.Member())
	// The caller's Go context claims to be someone else: the channel's
	// context wins.
	forged := rigtest.Member()
	forged.Actor, forged.Role = "user:admin", "admin"
	ctx := checkfu.WithRequestContext(context.Background(), forged)
	resp, err := ch.Call(ctx, "issues.list", json.RawMessage(`{"state":"open"}`))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != 200 || string(resp.Body) != `{"issues":[{"n":1}]}` {
		t.Fatalf("response %d %s", resp.Status, resp.Body)
	}
	decisions, results := gatewayEvents(r)
	if len(decisions) != 1 || len(results) != 1 {
		t.Fatalf("decisions %v results %v: want one of each", decisions, results)
	}
	d, res := decisions[0], results[0]
	if d.Request != rigtest.Member() || res.Request != rigtest.Member() {
		t.Errorf("events carry %+v / %+v, want the channel's context", d.Request, res.Request)
	}
	if d.Outcome != authz.OutcomeApproved || d.Assignment != a.ID || d.Capability != "issues.list" || d.Grant != r.Lease.ID {
		t.Errorf("decision %+v", d)
	}
	if res.Outcome != authz.OutcomeSucceeded || res.Status != 200 {
		t.Errorf("result %+v", res)
	}
	noLeak(t, "events", eventsJSON(t, r.Evidence.Events()))
}

func TestGatewayAllowedExternalEffect(t *testing.T) {
	r := rigtest.New(t)
	r.Grant("issues.create")
	ch := r.Channel(rigtest.Member())
	args := `{"title":"bug"}`
	r.Approve(args)
	resp, err := ch.Call(context.Background(), "issues.create", json.RawMessage(args))
	if err != nil || resp.Status != 200 {
		t.Fatalf("approved call: %v %+v", err, resp)
	}
	// The approval is spent: the same call again has none.
	_, err = ch.Call(context.Background(), "issues.create", json.RawMessage(args))
	if !errors.Is(err, authz.CodeApprovalRequired) {
		t.Fatalf("second call under a spent approval: %v", err)
	}
	var kinds []string
	for _, ev := range r.Evidence.Events() {
		kinds = append(kinds, string(ev.Kind)+":"+string(ev.Outcome))
		if ev.Kind == authz.EvidenceApprovalResult && ev.Request != rigtest.Member() {
			t.Errorf("approval result carries %+v", ev.Request)
		}
	}
	want := "approval_decision:approved gateway_decision:approved approval_result:succeeded gateway_result:succeeded gateway_decision:refused"
	if got := strings.Join(kinds, " "); got != want {
		t.Errorf("events %s\nwant   %s", got, want)
	}
}

// TestGatewayDenied is the denied request of each refusal on the path,
// each beside the allowed request it differs from (TestGatewayAllowed*).
// A denied request never reaches the provider, never opens the
// credential, returns no protected metadata and records a refused
// decision carrying the context and the code.
func TestGatewayDenied(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(*rigtest.Rig) (*gateway.Channel, string, string)
		code  checkfu.Code
		// sent: the provider was contacted (the refusal is of its answer)
		sent bool
	}{
		{"channel closed", func(r *rigtest.Rig) (*gateway.Channel, string, string) {
			r.Grant("issues.list")
			ch := r.Channel(rigtest.Member())
			ch.Close()
			return ch, "issues.list", `{}`
		}, pipeline.CodeChannelUnknown, false},
		{"channel of another gateway", func(r *rigtest.Rig) (*gateway.Channel, string, string) {
			r.Grant("issues.list")
			other := rigtest.New(r.T)
			other.Grant("issues.list")
			return other.Channel(rigtest.Member()), "issues.list", `{}`
		}, pipeline.CodeChannelUnknown, false},
		{"no assignment", func(r *rigtest.Rig) (*gateway.Channel, string, string) {
			return r.Channel(rigtest.Member()), "issues.list", `{}`
		}, authz.CodePermissionMissing, false},
		{"assignment for another capability", func(r *rigtest.Rig) (*gateway.Channel, string, string) {
			r.Grant("issues.create")
			return r.Channel(rigtest.Member()), "issues.list", `{}`
		}, authz.CodePermissionMissing, false},
		{"assignment in another project", func(r *rigtest.Rig) (*gateway.Channel, string, string) {
			r.Grant("issues.list")
			rc := rigtest.Member()
			rc.Project = "proj-2"
			return r.Channel(rc), "issues.list", `{}`
		}, authz.CodePermissionMissing, false},
		{"assignment revoked", func(r *rigtest.Rig) (*gateway.Channel, string, string) {
			a := r.Grant("issues.list")
			r.Assignments.Revoke(a.ID)
			return r.Channel(rigtest.Member()), "issues.list", `{}`
		}, authz.CodePermissionMissing, false},
		{"assignment expired", func(r *rigtest.Rig) (*gateway.Channel, string, string) {
			r.Grant("issues.list")
			ch := r.Channel(rigtest.Member())
			r.Clock.Advance(2 * time.Hour)
			return ch, "issues.list", `{}`
		}, authz.CodePermissionMissing, false},
		{"tool not in the profile", func(r *rigtest.Rig) (*gateway.Channel, string, string) {
			r.Grant("issues.list")
			r.Tools = r.Tools[1:]
			return r.Channel(rigtest.Member()), "issues.list", `{}`
		}, authz.CodePermissionMissing, false},
		{"capability not registered", func(r *rigtest.Rig) (*gateway.Channel, string, string) {
			r.Grant("issues.delete")
			r.Tools = append(r.Tools, gateway.ProfileTool{Capability: "issues.delete", Tool: "delete_issue", Operation: "DELETE", Resource: r.Base + "/v1/repos/acme/app/issues"})
			return r.Channel(rigtest.Member()), "issues.delete", `{}`
		}, authz.CodeCapabilityUnknown, false},
		{"profile descriptor names another resource", func(r *rigtest.Rig) (*gateway.Channel, string, string) {
			r.Grant("issues.list")
			r.Tools[0].Resource = "https://evil.example/steal"
			return r.Channel(rigtest.Member()), "issues.list", `{}`
		}, authz.CodeCapabilityMismatch, false},
		{"profile descriptor names another operation", func(r *rigtest.Rig) (*gateway.Channel, string, string) {
			r.Grant("issues.list")
			r.Tools[0].Operation = "POST"
			return r.Channel(rigtest.Member()), "issues.list", `{}`
		}, authz.CodeCapabilityMismatch, false},
		{"arguments outside the schema", func(r *rigtest.Rig) (*gateway.Channel, string, string) {
			r.Grant("issues.list")
			return r.Channel(rigtest.Member()), "issues.list", `{"state":"all","actor":"user:admin"}`
		}, authz.CodeArgumentsInvalid, false},
		{"arguments not strict JSON", func(r *rigtest.Rig) (*gateway.Channel, string, string) {
			r.Grant("issues.list")
			return r.Channel(rigtest.Member()), "issues.list", `{"state":"open","state":"closed"}`
		}, authz.CodeArgumentsInvalid, false},
		{"lease revoked", func(r *rigtest.Rig) (*gateway.Channel, string, string) {
			r.Grant("issues.list")
			_ = r.Leases.Revoke(r.Lease.ID)
			return r.Channel(rigtest.Member()), "issues.list", `{}`
		}, authz.CodeLeaseRevoked, false},
		{"lease of another actor", func(r *rigtest.Rig) (*gateway.Channel, string, string) {
			rc := rigtest.Member()
			rc.Actor = "user:dave"
			a := authz.PermissionAssignment{Role: "member", Capability: "issues.list", Tenant: rc.Tenant, Workspace: rc.Workspace, ExpiresAt: r.Clock.Now().Add(time.Hour)}
			if _, err := r.Assignments.Assign(a); err != nil {
				r.T.Fatal(err)
			}
			return r.Channel(rc), "issues.list", `{}`
		}, authz.CodeLeaseOutOfScope, false},
		{"external effect without approval", func(r *rigtest.Rig) (*gateway.Channel, string, string) {
			r.Grant("issues.create")
			return r.Channel(rigtest.Member()), "issues.create", `{"title":"bug"}`
		}, authz.CodeApprovalRequired, false},
		{"approval for other arguments", func(r *rigtest.Rig) (*gateway.Channel, string, string) {
			r.Grant("issues.create")
			r.Approve(`{"title":"something else"}`)
			return r.Channel(rigtest.Member()), "issues.create", `{"title":"bug"}`
		}, authz.CodeApprovalRequired, false},
		{"approval for another session", func(r *rigtest.Rig) (*gateway.Channel, string, string) {
			r.Grant("issues.create")
			r.Approve(`{"title":"bug"}`)
			rc := rigtest.Member()
			rc.Session = "sess-2"
			return r.Channel(rc), "issues.create", `{"title":"bug"}`
		}, authz.CodeApprovalRequired, false},
		{"outside the connection's rules", func(r *rigtest.Rig) (*gateway.Channel, string, string) {
			r.Grant("outside.rules")
			return r.Channel(rigtest.Member()), "outside.rules", `{}`
		}, egress.CodeNoRuleMatched, false},
		{"provider echoes the credential", func(r *rigtest.Rig) (*gateway.Channel, string, string) {
			r.Grant("echo")
			return r.Channel(rigtest.Member()), "echo", `{}`
		}, "credential_echoed", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rigtest.New(t)
			ch, capability, args := tc.setup(r)
			resp, err := r.Gateway.Call(context.Background(), ch, capability, json.RawMessage(args))
			if !errors.Is(err, tc.code) {
				t.Fatalf("Call = %+v, %v; want %s", resp, err, tc.code)
			}
			if resp != nil {
				t.Fatalf("a denied call returned %+v", resp)
			}
			noLeak(t, "the refusal", []byte(fmt.Sprintf("%v %+v %#v", err, err, err)))
			if tc.sent {
				if r.Hits.Load() == 0 {
					t.Fatal("the provider was never contacted")
				}
			} else {
				if n := r.Hits.Load(); n != 0 {
					t.Errorf("the provider was contacted %d times", n)
				}
				if n := r.Opens.Load(); n != 0 {
					t.Errorf("the credential was opened %d times", n)
				}
			}
			noLeak(t, "events", eventsJSON(t, r.Evidence.Events()))
			decisions, results := gatewayEvents(r)
			if tc.code == pipeline.CodeChannelUnknown {
				// A probe leaves a trace, and the trace claims nothing:
				// no context, no actor, nothing from the call.
				want := authz.Evidence{Kind: authz.EvidenceGatewayDecision, Label: checkfu.LabelMock, Time: r.Clock.Now(),
					Outcome: authz.OutcomeRefused, Code: pipeline.CodeChannelUnknown}
				if len(decisions) != 1 || len(results) != 0 || decisions[0] != want {
					t.Errorf("an unauthenticated call recorded decisions %+v results %+v, want one %+v", decisions, results, want)
				}
				return
			}
			if len(decisions) != 1 {
				t.Fatalf("decisions %+v", decisions)
			}
			d := decisions[0]
			if d.Request != ch.Context() {
				t.Errorf("decision carries %+v, want %+v", d.Request, ch.Context())
			}
			// The refusals of the provider's answer come after an allow
			// decision; the result records them. The rules refuse before
			// the decision (and the lease).
			if tc.sent {
				if d.Outcome != authz.OutcomeApproved || len(results) != 1 || results[0].Code != tc.code || results[0].Request != ch.Context() {
					t.Errorf("decision %+v results %+v", d, results)
				}
				return
			}
			if d.Outcome != authz.OutcomeRefused || d.Code != tc.code || len(results) != 0 {
				t.Errorf("decision %+v results %+v", d, results)
			}
			if tc.code == authz.CodePermissionMissing && (d.Capability != "" || d.Assignment != "") {
				t.Errorf("a permission denial recorded what it was about: %+v", d)
			}
		})
	}
}

// TestPermissionDenialIsUniform: whether the capability exists, is
// registered under another name, or is not listed, the refusal is the
// same text, so it tells sandbox code nothing about what exists.
func TestPermissionDenialIsUniform(t *testing.T) {
	r := rigtest.New(t)
	ch := r.Channel(rigtest.Member())
	var first string
	for _, c := range []string{"issues.list", "issues.create", "no.such.capability", "echo"} {
		_, err := ch.Call(context.Background(), c, json.RawMessage(`{}`))
		if !errors.Is(err, authz.CodePermissionMissing) {
			t.Fatalf("%s: %v", c, err)
		}
		if first == "" {
			first = err.Error()
		}
		if err.Error() != first || strings.Contains(err.Error(), c) {
			t.Errorf("%s: refusal %q (first %q)", c, err, first)
		}
	}
}

func TestOpenRefusesTokens(t *testing.T) {
	r := rigtest.New(t)
	good, err := r.Tokens.Issue(rigtest.Member(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Gateway.Open(context.Background(), gateway.ChannelConfig{Token: good}); err != nil {
		t.Fatalf("good token: %v", err)
	}
	other, _ := gateway.NewHMACTokens([]byte("another key, another key, 32 byt"), r.Clock.Now)
	foreign, _ := other.Issue(rigtest.Member(), time.Minute)
	body, sig, _ := strings.Cut(strings.TrimPrefix(good, "cft1."), ".")
	for name, tok := range map[string]string{
		"empty": "", "garbage": "cft1.x.y", "foreign key": foreign,
		"tampered payload": "cft1." + body[:len(body)-2] + "AA." + sig,
		"no prefix":        strings.TrimPrefix(good, "cft1."),
		"long":             strings.Repeat("a", gateway.MaxToken+1),
	} {
		if _, err := r.Gateway.Open(context.Background(), gateway.ChannelConfig{Token: tok}); !errors.Is(err, gateway.CodeTokenInvalid) {
			t.Errorf("%s: Open = %v, want %s", name, err, gateway.CodeTokenInvalid)
		}
	}
	r.Clock.Advance(time.Minute)
	if _, err := r.Gateway.Open(context.Background(), gateway.ChannelConfig{Token: good}); !errors.Is(err, gateway.CodeTokenExpired) {
		t.Errorf("expired: %v", err)
	}
	if _, err := gateway.NewHMACTokens([]byte("short"), nil); !errors.Is(err, checkfu.CodeConfigInvalid) {
		t.Errorf("short key: %v", err)
	}
	var zero gateway.Gateway
	if _, err := zero.Open(context.Background(), gateway.ChannelConfig{Token: good}); !errors.Is(err, pipeline.CodeChannelUnknown) {
		t.Errorf("zero gateway: %v", err)
	}
}

type failingSink struct{}

func (failingSink) Record(context.Context, authz.Evidence) error { return errors.New("disk full") }

// TestUnrecordedDecisionIsNoCall: when the decision cannot be recorded the
// call does not run; the provider is never contacted.
func TestUnrecordedDecisionIsNoCall(t *testing.T) {
	r := rigtest.New(t)
	r.Grant("issues.list")
	gw, err := gateway.New(gateway.Config{
		Authenticator: r.Tokens, Assignments: r.Assignments, Registry: r.Registry, Connections: []edge.Connection{r.Conn},
		Leases: r.Leases, Approvals: r.Approvals, Edge: r.Edge, Evidence: failingSink{}, Label: checkfu.LabelMock,
		Service: "runner", Name: "gateway-a", Now: r.Clock.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := r.Tokens.Issue(rigtest.Member(), time.Minute)
	ch, err := gw.Open(context.Background(), gateway.ChannelConfig{Token: tok, Lease: r.Lease.ID, Tools: r.Tools})
	if err != nil {
		t.Fatal(err)
	}
	_, err = ch.Call(context.Background(), "issues.list", json.RawMessage(`{}`))
	var ee *authz.EvidenceError
	if !errors.As(err, &ee) {
		t.Fatalf("Call = %v, want an EvidenceError", err)
	}
	if r.Hits.Load() != 0 || r.Opens.Load() != 0 {
		t.Fatalf("an unrecorded decision ran: %d hits, %d opens", r.Hits.Load(), r.Opens.Load())
	}
}

func TestNewRefusesIncompleteConfig(t *testing.T) {
	r := rigtest.New(t)
	good := gateway.Config{
		Authenticator: r.Tokens, Assignments: r.Assignments, Registry: r.Registry, Connections: []edge.Connection{r.Conn},
		Leases: r.Leases, Edge: r.Edge, Evidence: r.Evidence, Service: "runner", Name: "gateway-a",
	}
	if _, err := gateway.New(good); err != nil {
		t.Fatal(err)
	}
	for name, edit := range map[string]func(*gateway.Config){
		"no authenticator": func(c *gateway.Config) { c.Authenticator = nil },
		"no assignments":   func(c *gateway.Config) { c.Assignments = nil },
		"no registry":      func(c *gateway.Config) { c.Registry = nil },
		"no leases":        func(c *gateway.Config) { c.Leases = nil },
		"no edge":          func(c *gateway.Config) { c.Edge = nil },
		"no evidence":      func(c *gateway.Config) { c.Evidence = nil },
		"no service":       func(c *gateway.Config) { c.Service = "" },
		"bad label":        func(c *gateway.Config) { c.Label = 9 },
		"connection without rules": func(c *gateway.Config) {
			c.Connections = []edge.Connection{{Credential: rigtest.Cred}}
		},
	} {
		c := good
		edit(&c)
		if _, err := gateway.New(c); !errors.Is(err, checkfu.CodeConfigInvalid) {
			t.Errorf("%s: New = %v", name, err)
		}
	}
}
