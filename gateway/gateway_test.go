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
	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/gateway"
)

// noLeak fails if any form of the canary appears in the bytes.
func noLeak(t *testing.T, what string, b []byte) {
	t.Helper()
	if leaks := custodytest.FindLeaks([]byte(canary), b); len(leaks) > 0 {
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
func gatewayEvents(r *rig) (decisions, results []authz.Evidence) {
	for _, ev := range r.evidence.Events() {
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
	r := newRig(t)
	a := r.grant("issues.list")
	ch := r.channel(member())
	// The caller's Go context claims to be someone else: the channel's
	// context wins.
	forged := member()
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
	if d.Request != member() || res.Request != member() {
		t.Errorf("events carry %+v / %+v, want the channel's context", d.Request, res.Request)
	}
	if d.Outcome != authz.OutcomeApproved || d.Assignment != a.ID || d.Capability != "issues.list" || d.Grant != r.lease.ID {
		t.Errorf("decision %+v", d)
	}
	if res.Outcome != authz.OutcomeSucceeded || res.Status != 200 {
		t.Errorf("result %+v", res)
	}
	noLeak(t, "events", eventsJSON(t, r.evidence.Events()))
}

func TestGatewayAllowedExternalEffect(t *testing.T) {
	r := newRig(t)
	r.grant("issues.create")
	ch := r.channel(member())
	args := `{"title":"bug"}`
	r.approve(args)
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
	for _, ev := range r.evidence.Events() {
		kinds = append(kinds, string(ev.Kind)+":"+string(ev.Outcome))
		if ev.Kind == authz.EvidenceApprovalResult && ev.Request != member() {
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
		setup func(*rig) (*gateway.Channel, string, string)
		code  checkfu.Code
		// sent: the provider was contacted (the refusal is of its answer)
		sent bool
	}{
		{"channel closed", func(r *rig) (*gateway.Channel, string, string) {
			r.grant("issues.list")
			ch := r.channel(member())
			ch.Close()
			return ch, "issues.list", `{}`
		}, gateway.CodeChannelUnknown, false},
		{"channel of another gateway", func(r *rig) (*gateway.Channel, string, string) {
			r.grant("issues.list")
			other := newRig(r.t)
			other.grant("issues.list")
			return other.channel(member()), "issues.list", `{}`
		}, gateway.CodeChannelUnknown, false},
		{"no assignment", func(r *rig) (*gateway.Channel, string, string) {
			return r.channel(member()), "issues.list", `{}`
		}, authz.CodePermissionMissing, false},
		{"assignment for another capability", func(r *rig) (*gateway.Channel, string, string) {
			r.grant("issues.create")
			return r.channel(member()), "issues.list", `{}`
		}, authz.CodePermissionMissing, false},
		{"assignment in another project", func(r *rig) (*gateway.Channel, string, string) {
			r.grant("issues.list")
			rc := member()
			rc.Project = "proj-2"
			return r.channel(rc), "issues.list", `{}`
		}, authz.CodePermissionMissing, false},
		{"assignment revoked", func(r *rig) (*gateway.Channel, string, string) {
			a := r.grant("issues.list")
			r.assignments.Revoke(a.ID)
			return r.channel(member()), "issues.list", `{}`
		}, authz.CodePermissionMissing, false},
		{"assignment expired", func(r *rig) (*gateway.Channel, string, string) {
			r.grant("issues.list")
			ch := r.channel(member())
			r.clock.Advance(2 * time.Hour)
			return ch, "issues.list", `{}`
		}, authz.CodePermissionMissing, false},
		{"tool not in the profile", func(r *rig) (*gateway.Channel, string, string) {
			r.grant("issues.list")
			r.tools = r.tools[1:]
			return r.channel(member()), "issues.list", `{}`
		}, authz.CodePermissionMissing, false},
		{"capability not registered", func(r *rig) (*gateway.Channel, string, string) {
			r.grant("issues.delete")
			r.tools = append(r.tools, gateway.ProfileTool{Capability: "issues.delete", Tool: "delete_issue", Operation: "DELETE", Resource: r.base + "/v1/repos/acme/app/issues"})
			return r.channel(member()), "issues.delete", `{}`
		}, authz.CodeCapabilityUnknown, false},
		{"profile descriptor names another resource", func(r *rig) (*gateway.Channel, string, string) {
			r.grant("issues.list")
			r.tools[0].Resource = "https://evil.example/steal"
			return r.channel(member()), "issues.list", `{}`
		}, authz.CodeCapabilityMismatch, false},
		{"profile descriptor names another operation", func(r *rig) (*gateway.Channel, string, string) {
			r.grant("issues.list")
			r.tools[0].Operation = "POST"
			return r.channel(member()), "issues.list", `{}`
		}, authz.CodeCapabilityMismatch, false},
		{"arguments outside the schema", func(r *rig) (*gateway.Channel, string, string) {
			r.grant("issues.list")
			return r.channel(member()), "issues.list", `{"state":"all","actor":"user:admin"}`
		}, authz.CodeArgumentsInvalid, false},
		{"arguments not strict JSON", func(r *rig) (*gateway.Channel, string, string) {
			r.grant("issues.list")
			return r.channel(member()), "issues.list", `{"state":"open","state":"closed"}`
		}, authz.CodeArgumentsInvalid, false},
		{"lease revoked", func(r *rig) (*gateway.Channel, string, string) {
			r.grant("issues.list")
			_ = r.leases.Revoke(r.lease.ID)
			return r.channel(member()), "issues.list", `{}`
		}, authz.CodeLeaseRevoked, false},
		{"lease of another actor", func(r *rig) (*gateway.Channel, string, string) {
			rc := member()
			rc.Actor = "user:dave"
			a := authz.PermissionAssignment{Role: "member", Capability: "issues.list", Tenant: rc.Tenant, Workspace: rc.Workspace, ExpiresAt: r.clock.Now().Add(time.Hour)}
			if _, err := r.assignments.Assign(a); err != nil {
				r.t.Fatal(err)
			}
			return r.channel(rc), "issues.list", `{}`
		}, authz.CodeLeaseOutOfScope, false},
		{"external effect without approval", func(r *rig) (*gateway.Channel, string, string) {
			r.grant("issues.create")
			return r.channel(member()), "issues.create", `{"title":"bug"}`
		}, authz.CodeApprovalRequired, false},
		{"approval for other arguments", func(r *rig) (*gateway.Channel, string, string) {
			r.grant("issues.create")
			r.approve(`{"title":"something else"}`)
			return r.channel(member()), "issues.create", `{"title":"bug"}`
		}, authz.CodeApprovalRequired, false},
		{"approval for another session", func(r *rig) (*gateway.Channel, string, string) {
			r.grant("issues.create")
			r.approve(`{"title":"bug"}`)
			rc := member()
			rc.Session = "sess-2"
			return r.channel(rc), "issues.create", `{"title":"bug"}`
		}, authz.CodeApprovalRequired, false},
		{"outside the connection's rules", func(r *rig) (*gateway.Channel, string, string) {
			r.grant("outside.rules")
			return r.channel(member()), "outside.rules", `{}`
		}, egress.CodeNoRuleMatched, false},
		{"provider echoes the credential", func(r *rig) (*gateway.Channel, string, string) {
			r.grant("echo")
			return r.channel(member()), "echo", `{}`
		}, "credential_echoed", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t)
			ch, capability, args := tc.setup(r)
			resp, err := r.gw.Call(context.Background(), ch, capability, json.RawMessage(args))
			if !errors.Is(err, tc.code) {
				t.Fatalf("Call = %+v, %v; want %s", resp, err, tc.code)
			}
			if resp != nil {
				t.Fatalf("a denied call returned %+v", resp)
			}
			noLeak(t, "the refusal", []byte(fmt.Sprintf("%v %+v %#v", err, err, err)))
			if tc.sent {
				if r.hits.Load() == 0 {
					t.Fatal("the provider was never contacted")
				}
			} else {
				if n := r.hits.Load(); n != 0 {
					t.Errorf("the provider was contacted %d times", n)
				}
				if n := r.custodian.opens.Load(); n != 0 {
					t.Errorf("the credential was opened %d times", n)
				}
			}
			noLeak(t, "events", eventsJSON(t, r.evidence.Events()))
			decisions, results := gatewayEvents(r)
			if tc.code == gateway.CodeChannelUnknown {
				if len(decisions)+len(results) != 0 {
					t.Errorf("an unauthenticated channel's call was recorded with a context: %v", decisions)
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
			// The refusals of the edge come after an allow decision; the
			// result records them.
			if tc.code == egress.CodeNoRuleMatched || tc.sent {
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
	r := newRig(t)
	ch := r.channel(member())
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
	r := newRig(t)
	good, err := r.tokens.Issue(member(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.gw.Open(context.Background(), gateway.ChannelConfig{Token: good}); err != nil {
		t.Fatalf("good token: %v", err)
	}
	other, _ := gateway.NewHMACTokens([]byte("another key, another key, 32 byt"), r.clock.Now)
	foreign, _ := other.Issue(member(), time.Minute)
	body, sig, _ := strings.Cut(strings.TrimPrefix(good, "cft1."), ".")
	for name, tok := range map[string]string{
		"empty": "", "garbage": "cft1.x.y", "foreign key": foreign,
		"tampered payload": "cft1." + body[:len(body)-2] + "AA." + sig,
		"no prefix":        strings.TrimPrefix(good, "cft1."),
		"long":             strings.Repeat("a", gateway.MaxToken+1),
	} {
		if _, err := r.gw.Open(context.Background(), gateway.ChannelConfig{Token: tok}); !errors.Is(err, gateway.CodeTokenInvalid) {
			t.Errorf("%s: Open = %v, want %s", name, err, gateway.CodeTokenInvalid)
		}
	}
	r.clock.Advance(time.Minute)
	if _, err := r.gw.Open(context.Background(), gateway.ChannelConfig{Token: good}); !errors.Is(err, gateway.CodeTokenExpired) {
		t.Errorf("expired: %v", err)
	}
	if _, err := gateway.NewHMACTokens([]byte("short"), nil); !errors.Is(err, checkfu.CodeConfigInvalid) {
		t.Errorf("short key: %v", err)
	}
	var zero gateway.Gateway
	if _, err := zero.Open(context.Background(), gateway.ChannelConfig{Token: good}); !errors.Is(err, gateway.CodeChannelUnknown) {
		t.Errorf("zero gateway: %v", err)
	}
}
