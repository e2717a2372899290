package authz

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/checkfu/checkfu"
)

// A ProviderEntry is one versioned provider entry of the catalog: an exact
// provider revision and the capability ids qualified for it.
type ProviderEntry struct {
	Revision     checkfu.ProviderRevision
	Capabilities []string
}

// A Catalog holds the versioned provider entries leases resolve against.
// It is fixed when built. The zero Catalog resolves nothing.
type Catalog struct {
	entries map[checkfu.ProviderRevision]map[string]bool
}

// NewCatalog validates and returns a catalog of entries. An entry without
// a provider, a revision or capabilities, or a duplicated revision, is
// refused with [CodeLeaseRequestInvalid].
func NewCatalog(entries ...ProviderEntry) (*Catalog, error) {
	c := &Catalog{entries: make(map[checkfu.ProviderRevision]map[string]bool, len(entries))}
	for _, e := range entries {
		if e.Revision.Provider == "" || e.Revision.Revision == "" || len(e.Capabilities) == 0 {
			return nil, checkfu.Refuse(CodeLeaseRequestInvalid, "authz: provider entry %s needs a provider, a revision and qualified capabilities", checkfu.Quote(e.Revision.String()))
		}
		if _, dup := c.entries[e.Revision]; dup {
			return nil, checkfu.Refuse(CodeLeaseRequestInvalid, "authz: provider entry %s is listed twice", checkfu.Quote(e.Revision.String()))
		}
		set := make(map[string]bool, len(e.Capabilities))
		for _, id := range e.Capabilities {
			set[id] = true
		}
		c.entries[e.Revision] = set
	}
	return c, nil
}

// A LeaseScope is who may use a lease: the trusted service, the model or
// gateway, and the actor. Every field is required and compared exactly.
type LeaseScope struct {
	Service string
	Gateway string
	Actor   string
}

func (s LeaseScope) complete() bool { return s.Service != "" && s.Gateway != "" && s.Actor != "" }

// A LeaseRequest asks for a credential lease.
type LeaseRequest struct {
	Provider     checkfu.ProviderRevision
	Capabilities []string
	Scope        LeaseScope
	Budget       int64         // uses allowed; must be positive
	TTL          time.Duration // lifetime; positive and at most the configured maximum
}

// A Lease is a scoped, budgeted, expiring authority to use a provider
// credential for a qualified capability set. It holds no credential; its
// ID names it to the Leases that issued it.
type Lease struct {
	ID           string
	Provider     checkfu.ProviderRevision
	Capabilities []string
	Scope        LeaseScope
	Budget       int64
	IssuedAt     time.Time
	ExpiresAt    time.Time
}

// A LeaseUse is one attempted use of a lease: who is using it and for
// which capability. The caller takes the scope from its authenticated
// context, never from the agent.
type LeaseUse struct {
	Scope      LeaseScope
	Capability string
}

// Check reports, as a typed refusal, whether use is outside the lease at
// time now: [CodeLeaseExpired] when now is not before ExpiresAt (or is
// before IssuedAt), [CodeLeaseOutOfScope] when any scope field differs or
// the capability is not held. It is pure; revocation and budget are kept
// by [Leases.Use]. The zero Lease permits nothing.
func (l Lease) Check(use LeaseUse, now time.Time) error {
	if err := l.checkHolder(use.Scope, now); err != nil {
		return err
	}
	if !slices.Contains(l.Capabilities, use.Capability) {
		return checkfu.Refuse(CodeLeaseOutOfScope, "authz: lease %s does not hold capability %s", checkfu.Quote(l.ID), checkfu.Quote(use.Capability))
	}
	return nil
}

// checkHolder checks the lifetime and the exact scope.
func (l Lease) checkHolder(scope LeaseScope, now time.Time) error {
	if !now.Before(l.ExpiresAt) || now.Before(l.IssuedAt) {
		return checkfu.Refuse(CodeLeaseExpired, "authz: lease %s is outside its lifetime", checkfu.Quote(l.ID))
	}
	if !l.Scope.complete() || scope != l.Scope {
		return checkfu.Refuse(CodeLeaseOutOfScope, "authz: lease %s is not scoped to service %s, gateway %s, actor %s", checkfu.Quote(l.ID), checkfu.Quote(scope.Service), checkfu.Quote(scope.Gateway), checkfu.Quote(scope.Actor))
	}
	return nil
}

// LeaseConfig configures NewLeases.
type LeaseConfig struct {
	Catalog  *Catalog         // required
	Registry *Registry        // required
	Now      func() time.Time // the clock; nil means time.Now
	MaxTTL   time.Duration    // longest lease; zero means DefaultMaxLeaseTTL
}

// DefaultMaxLeaseTTL is the longest lease lifetime when LeaseConfig.MaxTTL
// is zero.
const DefaultMaxLeaseTTL = time.Hour

// Leases issues, spends and revokes credential leases. It is safe for
// concurrent use. Revocation is by lease id alone: it does not depend on
// any conversation, session or transcript. The zero Leases issues nothing
// and refuses every use.
type Leases struct {
	catalog  *Catalog
	registry *Registry
	now      func() time.Time
	maxTTL   time.Duration

	mu     sync.Mutex
	leases map[string]*leaseState // guarded by mu
}

type leaseState struct {
	lease   Lease
	used    int64
	revoked bool
}

// NewLeases returns an empty lease issuer. A missing catalog or registry
// is refused with [checkfu.CodeConfigInvalid]: there is nothing to resolve a lease
// against.
func NewLeases(cfg LeaseConfig) (*Leases, error) {
	if cfg.Catalog == nil || cfg.Registry == nil {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "authz: NewLeases needs a Catalog and a Registry")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.MaxTTL == 0 {
		cfg.MaxTTL = DefaultMaxLeaseTTL
	}
	return &Leases{catalog: cfg.Catalog, registry: cfg.Registry, now: cfg.Now, maxTTL: cfg.MaxTTL, leases: map[string]*leaseState{}}, nil
}

// Issue resolves the request's exact provider revision in the catalog and
// each requested capability in that entry's qualified set and in the
// registry, then issues a lease. Nothing is issued on any refusal.
func (s *Leases) Issue(req LeaseRequest) (Lease, error) {
	if s.zero() {
		return Lease{}, checkfu.Refuse(CodeProviderUnknown, "authz: the zero Leases issues nothing; build one with NewLeases")
	}
	qualified, ok := s.catalog.entries[req.Provider]
	if !ok {
		return Lease{}, checkfu.Refuse(CodeProviderUnknown, "authz: no provider entry for %s", checkfu.Quote(req.Provider.String()))
	}
	if len(req.Capabilities) == 0 {
		return Lease{}, checkfu.Refuse(CodeLeaseRequestInvalid, "authz: a lease needs at least one capability")
	}
	for i, id := range req.Capabilities {
		if slices.Contains(req.Capabilities[:i], id) {
			return Lease{}, checkfu.Refuse(CodeLeaseRequestInvalid, "authz: capability %s is requested twice", checkfu.Quote(id))
		}
		if !qualified[id] {
			return Lease{}, checkfu.Refuse(CodeCapabilityUnqualified, "authz: capability %s is not qualified for %s", checkfu.Quote(id), checkfu.Quote(req.Provider.String()))
		}
		if _, ok := s.registry.Lookup(id); !ok {
			return Lease{}, checkfu.Refuse(CodeCapabilityUnqualified, "authz: capability %s is not registered", checkfu.Quote(id))
		}
	}
	switch {
	case !req.Scope.complete():
		return Lease{}, checkfu.Refuse(CodeLeaseRequestInvalid, "authz: a lease scope needs service, gateway and actor")
	case req.Budget <= 0:
		return Lease{}, checkfu.Refuse(CodeLeaseRequestInvalid, "authz: lease budget %d is not positive", req.Budget)
	case req.TTL <= 0 || req.TTL > s.maxTTL:
		return Lease{}, checkfu.Refuse(CodeLeaseRequestInvalid, "authz: lease lifetime %v is not in (0, %v]", req.TTL, s.maxTTL)
	}
	id, err := newID("lease_")
	if err != nil {
		return Lease{}, err
	}
	now := s.now()
	l := Lease{
		ID:           id,
		Provider:     req.Provider,
		Capabilities: slices.Clone(req.Capabilities),
		Scope:        req.Scope,
		Budget:       req.Budget,
		IssuedAt:     now,
		ExpiresAt:    now.Add(req.TTL),
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.leases[id] = &leaseState{lease: l}
	return cloneLease(l), nil
}

// Use spends one unit of the lease's budget for use, after checking in
// order that the lease exists ([CodeLeaseUnknown]), is not revoked
// ([CodeLeaseRevoked]), passes [Lease.Check] at the current time, and has
// budget left ([CodeLeaseBudgetExhausted]). A refused use spends nothing.
func (s *Leases) Use(id string, use LeaseUse) (Lease, error) {
	return s.use(id, use, true)
}

// Usable reports, as the refusal [Leases.Use] would return, whether use
// of the lease would be allowed now, and returns the lease. It spends
// nothing: the call pipeline checks the lease with it before it decides,
// and spends it with Use only when the call is about to leave.
func (s *Leases) Usable(id string, use LeaseUse) (Lease, error) {
	return s.use(id, use, false)
}

func (s *Leases) use(id string, use LeaseUse, spend bool) (Lease, error) {
	if s.zero() {
		return Lease{}, errZeroLeases(id)
	}
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.leases[id]
	if !ok {
		return Lease{}, checkfu.Refuse(CodeLeaseUnknown, "authz: no lease %s", checkfu.Quote(id))
	}
	if st.revoked {
		return Lease{}, checkfu.Refuse(CodeLeaseRevoked, "authz: lease %s is revoked", checkfu.Quote(id))
	}
	if err := st.lease.Check(use, now); err != nil {
		return Lease{}, err
	}
	if st.used >= st.lease.Budget {
		return Lease{}, checkfu.Refuse(CodeLeaseBudgetExhausted, "authz: lease %s has spent its budget of %d", checkfu.Quote(id), st.lease.Budget)
	}
	if spend {
		st.used++
	}
	return cloneLease(st.lease), nil
}

// Hold reports, as a typed refusal, whether the lease is live for scope:
// known, not revoked, inside its lifetime and scoped exactly to scope. It
// spends no budget and names no capability; mount resolution uses it to
// check a session's own lease before each file body is served.
func (s *Leases) Hold(id string, scope LeaseScope) error {
	if s.zero() {
		return errZeroLeases(id)
	}
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.leases[id]
	if !ok {
		return checkfu.Refuse(CodeLeaseUnknown, "authz: no lease %s", checkfu.Quote(id))
	}
	if st.revoked {
		return checkfu.Refuse(CodeLeaseRevoked, "authz: lease %s is revoked", checkfu.Quote(id))
	}
	return st.lease.checkHolder(scope, now)
}

// Revoke revokes the lease now. Revoking twice is not an error; an unknown
// id is refused with [CodeLeaseUnknown].
func (s *Leases) Revoke(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.leases[id]
	if !ok {
		return checkfu.Refuse(CodeLeaseUnknown, "authz: no lease %s", checkfu.Quote(id))
	}
	st.revoked = true
	return nil
}

// Remaining returns how many uses the lease has left (zero once revoked).
func (s *Leases) Remaining(id string) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.leases[id]
	if !ok {
		return 0, checkfu.Refuse(CodeLeaseUnknown, "authz: no lease %s", checkfu.Quote(id))
	}
	if st.revoked {
		return 0, nil
	}
	return st.lease.Budget - st.used, nil
}

// zero reports whether s is nil or the zero Leases, which was not built
// by NewLeases and holds no leases.
func (s *Leases) zero() bool { return s == nil || s.catalog == nil }

func errZeroLeases(id string) error {
	return checkfu.Refuse(CodeLeaseUnknown, "authz: no lease %s: the zero Leases holds none; build one with NewLeases", checkfu.Quote(id))
}

func cloneLease(l Lease) Lease {
	l.Capabilities = slices.Clone(l.Capabilities)
	return l
}

// newID returns prefix followed by 128 random bits in hex.
func newID(prefix string) (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("authz: random id: %w", err)
	}
	return prefix + hex.EncodeToString(b[:]), nil
}
