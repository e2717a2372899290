package edge

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody"
)

// A Refresher performs a provider's refresh exchange: it trades a refresh
// token for an access token valid until expiresAt and, when the provider
// rotates it, a new refresh token (rotated is nil otherwise). The caller
// owns and destroys the returned Secrets. Implementations send the
// exchange through an egress client, like every other credentialed
// request. [OAuthRefresher] is the reference implementation.
type Refresher interface {
	Refresh(ctx context.Context, b custody.Binding, refreshToken *custody.Secret) (access, rotated *custody.Secret, expiresAt time.Time, err error)
}

// RefresherFunc adapts a function to a [Refresher], as http.HandlerFunc
// adapts one to a Handler: a stand-in for a provider's token endpoint in
// a test or an example, or an exchange of the caller's own. A nil
// RefresherFunc refuses every refresh with [checkfu.CodeConfigInvalid].
type RefresherFunc func(ctx context.Context, b custody.Binding, refreshToken *custody.Secret) (access, rotated *custody.Secret, expiresAt time.Time, err error)

// Refresh calls f.
func (f RefresherFunc) Refresh(ctx context.Context, b custody.Binding, refreshToken *custody.Secret) (access, rotated *custody.Secret, expiresAt time.Time, err error) {
	if f == nil {
		return nil, nil, time.Time{}, checkfu.Refuse(checkfu.CodeConfigInvalid, "edge: a nil RefresherFunc")
	}
	return f(ctx, b, refreshToken)
}

// A RefreshError reports that a refresh exchange failed. It is a failure,
// not a refusal; its text never holds a token.
type RefreshError struct {
	Binding custody.Binding
	Err     error
}

// Error returns "edge: refreshing BINDING: CAUSE".
func (e *RefreshError) Error() string {
	return fmt.Sprintf("edge: refreshing %s: %v", e.Binding, e.Err)
}

// Unwrap returns the cause.
func (e *RefreshError) Unwrap() error { return e.Err }

// TokenRuntimeConfig configures NewTokenRuntime.
type TokenRuntimeConfig struct {
	Keys      *custody.Keyset  // required: seals refresh tokens at rest, on the runtime's side
	Store     custody.Store    // required: holds the sealed refresh tokens
	Refresher Refresher        // required
	Now       func() time.Time // the clock; nil means time.Now
	Skew      time.Duration    // refresh this long before expiry; zero means DefaultRefreshSkew
}

// DefaultRefreshSkew is how long before its expiry an access token is
// refreshed when TokenRuntimeConfig.Skew is zero.
const DefaultRefreshSkew = 30 * time.Second

// TokenRuntime is the reference [custody.IntegrationRuntime]: in-process,
// runtime-backed custody with token refresh. It keeps each binding's
// refresh token sealed in its own Store (under its own Keyset, with the
// same address binding as native custody) and the current access token in
// memory, sealed under the same Keyset (so no Secret is held in a struct
// field). Open returns a new Secret opened from it, refreshing
// it first when it is missing, invalidated, or expires within the skew;
// concurrent Opens of one binding share one refresh.
type TokenRuntime struct {
	keys      *custody.Keyset
	sealed    *custody.Native
	refresher Refresher
	now       func() time.Time
	skew      time.Duration

	mu      sync.Mutex
	entries map[custody.Binding]*tokenEntry // guarded by mu
}

type tokenEntry struct {
	mu      sync.Mutex // held across a refresh, so one refresh serves all waiters
	access  []byte     // guarded by mu; the sealed access token, nil until the first refresh
	expires time.Time  // guarded by mu
	invalid bool       // guarded by mu; set by Invalidate
}

var _ custody.IntegrationRuntime = (*TokenRuntime)(nil)

// NewTokenRuntime returns a TokenRuntime for cfg. Missing keys, store or
// refresher are refused with [checkfu.CodeConfigInvalid].
func NewTokenRuntime(cfg TokenRuntimeConfig) (*TokenRuntime, error) {
	if cfg.Keys == nil || cfg.Store == nil || cfg.Refresher == nil {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "edge: NewTokenRuntime needs Keys, a Store and a Refresher")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Skew == 0 {
		cfg.Skew = DefaultRefreshSkew
	}
	return &TokenRuntime{
		keys:      cfg.Keys,
		sealed:    custody.NewNative(cfg.Keys, cfg.Store),
		refresher: cfg.Refresher,
		now:       cfg.Now,
		skew:      cfg.Skew,
		entries:   map[custody.Binding]*tokenEntry{},
	}, nil
}

// Enroll seals refreshToken for b in the runtime's store, replacing any
// earlier enrollment and forgetting b's cached access token. The caller
// keeps ownership of refreshToken.
func (r *TokenRuntime) Enroll(ctx context.Context, b custody.Binding, refreshToken *custody.Secret) error {
	if err := r.usable(); err != nil {
		return err
	}
	if err := r.sealed.Put(ctx, b, refreshToken); err != nil {
		return err
	}
	e := r.entry(b)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.drop()
	return nil
}

// Remove deletes b's refresh token and forgets its access token.
func (r *TokenRuntime) Remove(ctx context.Context, b custody.Binding) error {
	if err := r.usable(); err != nil {
		return err
	}
	e := r.entry(b)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.drop()
	return r.sealed.Delete(ctx, b)
}

func (e *tokenEntry) drop() {
	clear(e.access)
	e.access, e.expires, e.invalid = nil, time.Time{}, false
}

// usable refuses the zero or nil TokenRuntime.
func (r *TokenRuntime) usable() error {
	if r == nil || r.sealed == nil || r.entries == nil {
		return checkfu.Refuse(checkfu.CodeConfigInvalid, "edge: the zero TokenRuntime holds nothing; build one with NewTokenRuntime")
	}
	return nil
}

func (r *TokenRuntime) entry(b custody.Binding) *tokenEntry {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.entries[b]
	if !ok {
		e = &tokenEntry{}
		r.entries[b] = e
	}
	return e
}

// Open returns a fresh copy of b's access token, refreshing it first when
// needed. An unenrolled binding is refused with [custody.CodeRecordNotFound].
func (r *TokenRuntime) Open(ctx context.Context, b custody.Binding) (*custody.Secret, error) {
	if err := r.usable(); err != nil {
		return nil, err
	}
	if err := b.Validate(); err != nil {
		return nil, err
	}
	e := r.entry(b)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.access == nil || e.invalid || !r.now().Add(r.skew).Before(e.expires) {
		if err := r.refresh(ctx, b, e); err != nil {
			return nil, err
		}
	}
	return r.keys.Open(b, e.access)
}

// refresh runs the exchange for b; e.mu is held.
func (r *TokenRuntime) refresh(ctx context.Context, b custody.Binding, e *tokenEntry) error {
	rt, err := r.sealed.Open(ctx, b)
	if err != nil {
		return err
	}
	defer rt.Destroy()
	access, rotated, expires, err := r.refresher.Refresh(ctx, b, rt)
	if rotated != nil {
		defer rotated.Destroy()
	}
	if access != nil {
		defer access.Destroy()
	}
	if rotated != nil && !rotated.Destroyed() {
		// The provider retired the token it was sent when it rotated:
		// keep the new one whatever else is wrong with the answer, and
		// even if the caller gave up meanwhile (other Opens may be
		// waiting on this refresh).
		if perr := r.sealed.Put(context.WithoutCancel(ctx), b, rotated); perr != nil {
			return perr
		}
	}
	if err != nil {
		if _, ok := checkfu.CodeOf(err); ok {
			return err
		}
		return &RefreshError{Binding: b, Err: err}
	}
	if access == nil || access.Destroyed() || !r.now().Before(expires) {
		return &RefreshError{Binding: b, Err: errors.New("the refresher returned no usable access token")}
	}
	sealed, err := r.keys.Seal(b, access)
	if err != nil {
		return err
	}
	e.drop()
	e.access, e.expires = sealed, expires
	return nil
}

// Invalidate makes the next Open of b refresh first. An unenrolled
// binding is refused with [custody.CodeRecordNotFound].
func (r *TokenRuntime) Invalidate(ctx context.Context, b custody.Binding) error {
	if err := r.usable(); err != nil {
		return err
	}
	s, err := r.sealed.Open(ctx, b)
	if err != nil {
		return err
	}
	s.Destroy()
	e := r.entry(b)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.invalid = true
	return nil
}
