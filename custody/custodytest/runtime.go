package custodytest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/internal/reveal"
)

// A RuntimeRig is one custody.IntegrationRuntime under test, with the
// controls TestRuntime needs. Build a fresh one per call of the factory.
type RuntimeRig struct {
	// Runtime is the implementation under test.
	Runtime custody.IntegrationRuntime
	// Enrolled is a binding the runtime holds a credential for.
	Enrolled custody.Binding
	// Unenrolled is a valid binding it holds nothing for.
	Unenrolled custody.Binding
	// Lifetime is how long a freshly refreshed credential stays usable.
	Lifetime time.Duration
	// Advance moves the runtime's clock forward by d.
	Advance func(d time.Duration)
	// Refreshes returns how many refresh exchanges the provider has
	// answered so far.
	Refreshes func() int
}

// TestRuntime runs the IntegrationRuntime conformance suite, with a fresh
// rig from newRig for every subtest.
//
// It checks that Open returns a usable credential as a fresh Secret each
// time (destroying one does not break the next), that the credential is
// cached until it expires and refreshed after, that Invalidate forces a
// refresh, that concurrent Opens of an expired credential share one
// refresh, that unknown bindings are refused with custody.CodeRecordNotFound,
// and that no text form of the returned Secret or of an error holds the
// credential bytes.
//
// It cannot prove that the runtime keeps its records encrypted at rest,
// that its refresh exchange goes through an egress client, or that it
// leaks nothing through channels the suite does not see (logs, its own
// storage): test those against the implementation.
func TestRuntime(t *testing.T, newRig func(t *testing.T) RuntimeRig) {
	t.Helper()
	ctx := context.Background()
	open := func(t *testing.T, rig RuntimeRig) []byte {
		t.Helper()
		s, err := rig.Runtime.Open(ctx, rig.Enrolled)
		if err != nil {
			t.Fatalf("Open(%s): %v", rig.Enrolled, err)
		}
		defer s.Destroy()
		b := revealed(t, s)
		if len(b) == 0 {
			t.Fatalf("Open(%s) returned an empty credential", rig.Enrolled)
		}
		checkRedacted(t, s, b)
		return b
	}

	t.Run("OpenReturnsCredential", func(t *testing.T) {
		open(t, newRig(t))
	})

	t.Run("FreshSecretPerOpen", func(t *testing.T) {
		rig := newRig(t)
		a, err := rig.Runtime.Open(ctx, rig.Enrolled)
		if err != nil {
			t.Fatal(err)
		}
		want := revealed(t, a)
		a.Destroy()
		if got := open(t, rig); !bytes.Equal(got, want) {
			t.Fatalf("second Open before expiry returned another credential")
		}
	})

	t.Run("CachedUntilExpiry", func(t *testing.T) {
		rig := newRig(t)
		open(t, rig)
		n := rig.Refreshes()
		rig.Advance(rig.Lifetime / 4)
		open(t, rig)
		if got := rig.Refreshes(); got != n {
			t.Fatalf("Open of an unexpired credential refreshed (%d -> %d)", n, got)
		}
	})

	t.Run("RefreshesExpired", func(t *testing.T) {
		rig := newRig(t)
		open(t, rig)
		n := rig.Refreshes()
		rig.Advance(rig.Lifetime)
		open(t, rig)
		if got := rig.Refreshes(); got != n+1 {
			t.Fatalf("Open of an expired credential made %d refreshes, want 1", got-n)
		}
	})

	t.Run("InvalidateForcesRefresh", func(t *testing.T) {
		rig := newRig(t)
		open(t, rig)
		n := rig.Refreshes()
		if err := rig.Runtime.Invalidate(ctx, rig.Enrolled); err != nil {
			t.Fatal(err)
		}
		open(t, rig)
		if got := rig.Refreshes(); got != n+1 {
			t.Fatalf("Open after Invalidate made %d refreshes, want 1", got-n)
		}
	})

	t.Run("ConcurrentOpensShareRefresh", func(t *testing.T) {
		rig := newRig(t)
		open(t, rig)
		rig.Advance(rig.Lifetime)
		n := rig.Refreshes()
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for range 8 {
			wg.Go(func() {
				s, err := rig.Runtime.Open(ctx, rig.Enrolled)
				if err != nil {
					errs <- err
					return
				}
				s.Destroy()
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if got := rig.Refreshes(); got != n+1 {
			t.Fatalf("8 concurrent Opens made %d refreshes, want 1", got-n)
		}
	})

	t.Run("UnknownBindingRefused", func(t *testing.T) {
		rig := newRig(t)
		s, err := rig.Runtime.Open(ctx, rig.Unenrolled)
		if s != nil || !errors.Is(err, custody.CodeRecordNotFound) {
			t.Fatalf("Open(unenrolled) = %v, %v; want record_not_found", s, err)
		}
		if err := rig.Runtime.Invalidate(ctx, rig.Unenrolled); !errors.Is(err, custody.CodeRecordNotFound) {
			t.Fatalf("Invalidate(unenrolled) = %v; want record_not_found", err)
		}
	})

	t.Run("CanceledRefreshFails", func(t *testing.T) {
		rig := newRig(t)
		cred := open(t, rig)
		rig.Advance(rig.Lifetime)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		s, err := rig.Runtime.Open(cctx, rig.Enrolled)
		if err == nil {
			s.Destroy()
			t.Fatal("Open with a canceled context refreshed and returned a credential")
		}
		for _, form := range CanaryForms(cred) {
			if bytes.Contains([]byte(err.Error()), []byte(form)) {
				t.Fatalf("refresh error %q holds the credential", err)
			}
		}
	})
}

// revealed returns a copy of s's bytes.
func revealed(t *testing.T, s *custody.Secret) []byte {
	t.Helper()
	var out []byte
	if err := reveal.With(s, func(b []byte) error { out = bytes.Clone(b); return nil }); err != nil {
		t.Fatalf("reveal: %v", err)
	}
	return out
}

// checkRedacted fails if any text form of s holds cred.
func checkRedacted(t *testing.T, s *custody.Secret, cred []byte) {
	t.Helper()
	j, _ := json.Marshal(s)
	for _, out := range []string{fmt.Sprint(s), fmt.Sprintf("%v %+v %#v %s %q %x", s, s, s, s, s, s), fmt.Sprintf("%v", *s), string(j)} {
		if leaks := FindLeaks(cred, []byte(out)); len(leaks) > 0 {
			t.Fatalf("a text form of the returned Secret holds the credential (%v)", leaks)
		}
	}
}
