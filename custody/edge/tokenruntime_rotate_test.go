package edge

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/internal/reveal"
)

// rotatingRefresher rotates the refresh token on every exchange, as OAuth
// providers that rotate do: once it has answered, the token it was given
// is dead. It records which token each exchange presented.
type rotatingRefresher struct {
	mu        sync.Mutex
	n         int
	presented []string
	cancel    func()        // when set, called before answering (the caller gave up)
	expiresIn time.Duration // of the access token
}

func (f *rotatingRefresher) Refresh(ctx context.Context, b custody.Binding, rt *custody.Secret) (*custody.Secret, *custody.Secret, time.Time, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := reveal.With(rt, func(p []byte) error { f.presented = append(f.presented, string(p)); return nil }); err != nil {
		return nil, nil, time.Time{}, err
	}
	f.n++
	if f.cancel != nil {
		f.cancel()
	}
	return custody.NewSecret([]byte(fmt.Sprintf("at-%d", f.n))), custody.NewSecret([]byte(fmt.Sprintf("rt-%d", f.n))), time.Now().Add(f.expiresIn), nil
}

// A provider that rotates has already retired the refresh token it was
// sent when its answer arrives. The rotated token must be kept whatever
// happens next: the caller's context being cancelled (another Open may be
// waiting on this shared refresh), or the access token in the same answer
// being unusable. Losing it locks the binding out for good.
//
// Mutants: storing the rotated token with the caller's context, or only
// after the access token was found usable, makes this test fail.
func TestTokenRuntimeKeepsRotatedRefreshToken(t *testing.T) {
	for _, tc := range []struct {
		name      string
		cancel    bool
		expiresIn time.Duration
	}{
		{"caller cancelled", true, time.Hour},
		{"unusable access token", false, -time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &rotatingRefresher{expiresIn: tc.expiresIn}
			rt, err := NewTokenRuntime(TokenRuntimeConfig{Keys: custody.GenerateKeyset(), Store: custody.NewMemoryStore(), Refresher: f})
			if err != nil {
				t.Fatal(err)
			}
			b := testBinding()
			if err := rt.Enroll(context.Background(), b, custody.NewSecret([]byte("rt-0"))); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancel {
				f.cancel = cancel
			}
			if s, err := rt.Open(ctx, b); err == nil {
				s.Destroy()
			}
			f.cancel, f.expiresIn = nil, time.Hour
			if err := rt.Invalidate(context.Background(), b); err != nil {
				t.Fatal(err)
			}
			s, err := rt.Open(context.Background(), b)
			if err != nil {
				t.Fatalf("second Open: %v", err)
			}
			s.Destroy()
			if want := []string{"rt-0", "rt-1"}; len(f.presented) != 2 || f.presented[0] != want[0] || f.presented[1] != want[1] {
				t.Fatalf("refresh tokens presented: %q, want %q (the rotated token was lost)", f.presented, want)
			}
		})
	}
}
