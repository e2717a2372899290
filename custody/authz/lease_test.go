package authz_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/authz"
)

// govClock is an injectable clock that only moves when told to.
type govClock struct {
	mu sync.Mutex
	t  time.Time
}

func newGovClock() *govClock { return &govClock{t: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)} }

func (c *govClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *govClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

var (
	govProvider = checkfu.ProviderRevision{Provider: "checkfu:github", Revision: "3"}
	govScope    = authz.LeaseScope{Service: "runner", Gateway: "gateway-a", Actor: "alice"}
)

func govLeases(t fataler, clock *govClock) *authz.Leases {
	t.Helper()
	cat, err := authz.NewCatalog(authz.ProviderEntry{Revision: govProvider, Capabilities: []string{"github.issues.create", "github.qualified.unregistered"}})
	if err != nil {
		t.Fatal(err)
	}
	l, err := authz.NewLeases(authz.LeaseConfig{Catalog: cat, Registry: govRegistry(t), Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func govLeaseRequest() authz.LeaseRequest {
	return authz.LeaseRequest{
		Provider:     govProvider,
		Capabilities: []string{"github.issues.create"},
		Scope:        govScope,
		Budget:       2,
		TTL:          10 * time.Minute,
	}
}

func TestIssueRefuses(t *testing.T) {
	l := govLeases(t, newGovClock())
	tests := []struct {
		name string
		mod  func(*authz.LeaseRequest)
		code checkfu.Code
	}{
		{"other revision", func(r *authz.LeaseRequest) { r.Provider.Revision = "2" }, authz.CodeProviderUnknown},
		{"other provider", func(r *authz.LeaseRequest) { r.Provider.Provider = "checkfu:gitlab" }, authz.CodeProviderUnknown},
		{"registered but unqualified", func(r *authz.LeaseRequest) { r.Capabilities = []string{"github.issues.list"} }, authz.CodeCapabilityUnqualified},
		{"unregistered", func(r *authz.LeaseRequest) { r.Capabilities = []string{"github.qualified.unregistered"} }, authz.CodeCapabilityUnqualified},
		{"no capability", func(r *authz.LeaseRequest) { r.Capabilities = nil }, authz.CodeLeaseRequestInvalid},
		{"duplicate capability", func(r *authz.LeaseRequest) {
			r.Capabilities = []string{"github.issues.create", "github.issues.create"}
		}, authz.CodeLeaseRequestInvalid},
		{"no service", func(r *authz.LeaseRequest) { r.Scope.Service = "" }, authz.CodeLeaseRequestInvalid},
		{"no gateway", func(r *authz.LeaseRequest) { r.Scope.Gateway = "" }, authz.CodeLeaseRequestInvalid},
		{"no actor", func(r *authz.LeaseRequest) { r.Scope.Actor = "" }, authz.CodeLeaseRequestInvalid},
		{"zero budget", func(r *authz.LeaseRequest) { r.Budget = 0 }, authz.CodeLeaseRequestInvalid},
		{"zero ttl", func(r *authz.LeaseRequest) { r.TTL = 0 }, authz.CodeLeaseRequestInvalid},
		{"long ttl", func(r *authz.LeaseRequest) { r.TTL = 2 * time.Hour }, authz.CodeLeaseRequestInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := govLeaseRequest()
			tt.mod(&r)
			_, err := l.Issue(r)
			wantCode(t, err, tt.code)
		})
	}
}

func TestLeaseUseRefuses(t *testing.T) {
	clock := newGovClock()
	l := govLeases(t, clock)
	issue := func() authz.Lease {
		t.Helper()
		lease, err := l.Issue(govLeaseRequest())
		if err != nil {
			t.Fatal(err)
		}
		return lease
	}
	use := authz.LeaseUse{Scope: govScope, Capability: "github.issues.create"}

	lease := issue()
	if _, err := l.Use(lease.ID, use); err != nil {
		t.Fatalf("first use: %v", err)
	}
	for _, s := range []authz.LeaseScope{
		{Service: "other", Gateway: "gateway-a", Actor: "alice"},
		{Service: "runner", Gateway: "gateway-b", Actor: "alice"},
		{Service: "runner", Gateway: "gateway-a", Actor: "bob"},
	} {
		_, err := l.Use(lease.ID, authz.LeaseUse{Scope: s, Capability: use.Capability})
		wantCode(t, err, authz.CodeLeaseOutOfScope)
	}
	_, err := l.Use(lease.ID, authz.LeaseUse{Scope: govScope, Capability: "github.issues.list"})
	wantCode(t, err, authz.CodeLeaseOutOfScope)
	if _, err := l.Use(lease.ID, use); err != nil {
		t.Fatalf("second use (refusals spend nothing): %v", err)
	}
	_, err = l.Use(lease.ID, use)
	wantCode(t, err, authz.CodeLeaseBudgetExhausted)

	revoked := issue()
	if err := l.Revoke(revoked.ID); err != nil {
		t.Fatal(err)
	}
	_, err = l.Use(revoked.ID, use)
	wantCode(t, err, authz.CodeLeaseRevoked)
	if n, _ := l.Remaining(revoked.ID); n != 0 {
		t.Fatalf("revoked lease has %d uses left", n)
	}

	expiring := issue()
	clock.Advance(10*time.Minute - time.Nanosecond)
	if _, err := l.Use(expiring.ID, use); err != nil {
		t.Fatalf("use just before expiry: %v", err)
	}
	clock.Advance(time.Nanosecond)
	_, err = l.Use(expiring.ID, use)
	wantCode(t, err, authz.CodeLeaseExpired)

	_, err = l.Use("lease_nope", use)
	wantCode(t, err, authz.CodeLeaseUnknown)
	wantCode(t, l.Revoke("lease_nope"), authz.CodeLeaseUnknown)
}

// Property: Lease.Check permits a use exactly when the time is inside the
// lifetime, every scope field is equal and the capability is held.
func TestLeaseCheckProperty(t *testing.T) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	str := rapid.SampledFrom([]string{"a", "b", ""})
	scope := rapid.Custom(func(t *rapid.T) authz.LeaseScope {
		return authz.LeaseScope{Service: str.Draw(t, "service"), Gateway: str.Draw(t, "gateway"), Actor: str.Draw(t, "actor")}
	})
	rapid.Check(t, func(t *rapid.T) {
		l := authz.Lease{
			ID:           "lease_x",
			Capabilities: rapid.SliceOfDistinct(rapid.SampledFrom([]string{"c1", "c2", "c3"}), rapid.ID[string]).Draw(t, "caps"),
			Scope:        scope.Draw(t, "lease scope"),
			IssuedAt:     base,
			ExpiresAt:    base.Add(time.Duration(rapid.Int64Range(0, 100).Draw(t, "ttl"))),
		}
		use := authz.LeaseUse{Scope: scope.Draw(t, "use scope"), Capability: rapid.SampledFrom([]string{"c1", "c2", "c3", "c4"}).Draw(t, "cap")}
		now := base.Add(time.Duration(rapid.Int64Range(-10, 110).Draw(t, "now")))
		held := false
		for _, c := range l.Capabilities {
			held = held || c == use.Capability
		}
		want := !now.Before(l.IssuedAt) && now.Before(l.ExpiresAt) &&
			l.Scope.Service != "" && l.Scope.Gateway != "" && l.Scope.Actor != "" &&
			use.Scope == l.Scope && held
		err := l.Check(use, now)
		if (err == nil) != want {
			t.Fatalf("Check(%+v, %v) on %+v = %v, want permitted=%v", use, now, l, err, want)
		}
		if err != nil {
			if _, ok := checkfu.CodeOf(err); !ok {
				t.Fatalf("untyped error %v", err)
			}
		}
	})
}

func TestLeasesConcurrentBudget(t *testing.T) {
	l := govLeases(t, newGovClock())
	r := govLeaseRequest()
	r.Budget = 10
	lease, err := l.Issue(r)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok := 0
	for range 50 {
		wg.Go(func() {
			if _, err := l.Use(lease.ID, authz.LeaseUse{Scope: govScope, Capability: "github.issues.create"}); err == nil {
				mu.Lock()
				ok++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if ok != 10 {
		t.Fatalf("%d uses succeeded on a budget of 10", ok)
	}
}

func TestNewLeasesNeedsCatalogAndRegistry(t *testing.T) {
	if _, err := authz.NewLeases(authz.LeaseConfig{}); err == nil {
		t.Fatal("NewLeases without catalog and registry succeeded")
	}
	if _, err := authz.NewCatalog(authz.ProviderEntry{Revision: govProvider}); err == nil {
		t.Fatal("catalog entry without capabilities accepted")
	}
}

// leaseModel is the reference model of one issued lease.
type leaseModel struct {
	scope   authz.LeaseScope
	caps    []string
	budget  int64
	used    int64
	revoked bool
	expires time.Time
}

// TestLeasesStateMachine drives Issue, Use, Revoke and the clock in random
// order and checks every Use against a reference model: the exact refusal
// code, and that refused uses spend nothing.
func TestLeasesStateMachine(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		clock := newGovClock()
		l := govLeases(t, clock)
		model := map[string]*leaseModel{}
		var ids []string
		scopes := []authz.LeaseScope{govScope, {Service: "runner", Gateway: "gateway-b", Actor: "alice"}, {Service: "runner", Gateway: "gateway-a", Actor: "bob"}}
		caps := []string{"github.issues.create", "github.qualified.unregistered", "github.issues.list"}
		t.Repeat(map[string]func(*rapid.T){
			"issue": func(t *rapid.T) {
				req := govLeaseRequest()
				req.Scope = rapid.SampledFrom(scopes).Draw(t, "scope")
				req.Budget = rapid.Int64Range(1, 3).Draw(t, "budget")
				req.TTL = time.Duration(rapid.IntRange(1, 5).Draw(t, "ttl minutes")) * time.Minute
				lease, err := l.Issue(req)
				if err != nil {
					t.Fatal(err)
				}
				model[lease.ID] = &leaseModel{scope: req.Scope, caps: req.Capabilities, budget: req.Budget, expires: clock.Now().Add(req.TTL)}
				ids = append(ids, lease.ID)
			},
			"use": func(t *rapid.T) {
				id := "lease_unknown"
				if len(ids) > 0 && rapid.IntRange(0, 9).Draw(t, "known") > 0 {
					id = rapid.SampledFrom(ids).Draw(t, "id")
				}
				use := authz.LeaseUse{Scope: govScope, Capability: "github.issues.create"}
				if m, ok := model[id]; ok {
					use.Scope = m.scope // mostly the lease's own scope and capability
				}
				if rapid.IntRange(0, 3).Draw(t, "off scope") == 0 {
					use.Scope = rapid.SampledFrom(scopes).Draw(t, "use scope")
				}
				if rapid.IntRange(0, 3).Draw(t, "off cap") == 0 {
					use.Capability = rapid.SampledFrom(caps).Draw(t, "cap")
				}
				_, err := l.Use(id, use)
				var want checkfu.Code
				m, ok := model[id]
				switch {
				case !ok:
					want = authz.CodeLeaseUnknown
				case m.revoked:
					want = authz.CodeLeaseRevoked
				case !clock.Now().Before(m.expires):
					want = authz.CodeLeaseExpired
				case use.Scope != m.scope || !slices.Contains(m.caps, use.Capability):
					want = authz.CodeLeaseOutOfScope
				case m.used >= m.budget:
					want = authz.CodeLeaseBudgetExhausted
				default:
					m.used++
				}
				got, _ := checkfu.CodeOf(err)
				if got != want || (want == "") != (err == nil) {
					t.Fatalf("Use(%s, %+v) = %v, want code %q", id, use, err, want)
				}
				if ok {
					n, _ := l.Remaining(id)
					wantN := m.budget - m.used
					if m.revoked {
						wantN = 0
					}
					if n != wantN {
						t.Fatalf("Remaining(%s) = %d, want %d", id, n, wantN)
					}
				}
			},
			"revoke": func(t *rapid.T) {
				if len(ids) == 0 {
					t.Skip("nothing to revoke")
				}
				id := rapid.SampledFrom(ids).Draw(t, "id")
				if err := l.Revoke(id); err != nil {
					t.Fatal(err)
				}
				model[id].revoked = true
			},
			"advance": func(t *rapid.T) {
				clock.Advance(time.Duration(rapid.IntRange(0, 120).Draw(t, "seconds")) * time.Second)
			},
		})
	})
}

// A clock that steps back (NTP, a restored VM) must not revive a lease
// before its start: the property test rarely draws such a time together
// with a matching scope, so this case is pinned.
func TestLeaseCheckRefusesBeforeIssue(t *testing.T) {
	issued := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := authz.Lease{ID: "lease_x", Capabilities: []string{"c1"}, Scope: govScope, Budget: 1, IssuedAt: issued, ExpiresAt: issued.Add(time.Minute)}
	use := authz.LeaseUse{Scope: govScope, Capability: "c1"}
	if err := l.Check(use, issued); err != nil {
		t.Fatalf("Check at issue = %v, want nil", err)
	}
	wantCode(t, l.Check(use, issued.Add(-time.Nanosecond)), authz.CodeLeaseExpired)
}

// Zero values fail closed with a typed refusal, never a panic.
func TestZeroLeasesAndApprovalsRefuse(t *testing.T) {
	var l authz.Leases
	_, err := l.Issue(govLeaseRequest())
	wantCode(t, err, authz.CodeProviderUnknown)
	_, err = l.Use("lease_x", authz.LeaseUse{Scope: govScope, Capability: "c1"})
	wantCode(t, err, authz.CodeLeaseUnknown)
	wantCode(t, l.Hold("lease_x", govScope), authz.CodeLeaseUnknown)

	var a authz.Approvals
	_, err = a.Decide(context.Background(), authz.ApprovalDecision{Binding: govBinding(), Approver: "bob", Approve: true, TTL: time.Minute})
	wantCode(t, err, authz.CodeApprovalInvalid)
	ran := false
	err = a.Carry(context.Background(), "approval_x", govBinding(), func(context.Context) error { ran = true; return nil })
	wantCode(t, err, authz.CodeApprovalUnknown)
	if ran {
		t.Fatal("the zero Approvals ran an effect")
	}
}
