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
	"github.com/checkfu/checkfu/internal/suitetest"
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
// rig from newRig for every subtest (T is *testing.T for an
// implementation's own tests).
//
// It checks that Open returns a usable credential as a fresh Secret each
// time (destroying one does not break the next), that the credential is
// cached until it expires and refreshed after, that Invalidate forces a
// refresh, that concurrent Opens of an expired credential share one
// refresh, that unknown bindings are refused with custody.CodeRecordNotFound,
// and that no text form of the returned Secret or of an error holds the
// credential bytes. Sequence drives ONE runtime through many Opens, clock
// advances and Invalidates and compares each Open with a model of the
// credential's age: it refreshes exactly once when the credential is
// invalidated or a Lifetime old, never while it is younger than half a
// Lifetime (a runtime may refresh early within its own skew), returns
// the same credential when it did not refresh and another one when it did.
// The rig's provider must therefore issue a different credential on every
// refresh (a counter in the token is enough).
//
// Proved to catch (the suite's own tests run it against each): a runtime
// that serves the credential it had while it refreshes (stale while
// revalidate, so the Open after Invalidate returns the rejected
// credential); one that ignores Invalidate; one that measures expiry from
// the first refresh instead of the last; one that does not cache; one
// that refreshes outside its lock (no single flight).
//
// It cannot prove that the runtime keeps its records encrypted at rest,
// that its refresh exchange goes through an egress client, or that it
// leaks nothing through channels the suite does not see (logs, its own
// storage): test those against the implementation.
func TestRuntime[T testing.TB](t T, newRig func(t T) RuntimeRig) {
	t.Helper()
	ctx := context.Background()
	open := func(t testing.TB, rig RuntimeRig) []byte {
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

	suitetest.Run(t, "OpenReturnsCredential", func(t T) {
		open(t, newRig(t))
	})

	suitetest.Run(t, "FreshSecretPerOpen", func(t T) {
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

	suitetest.Run(t, "CachedUntilExpiry", func(t T) {
		rig := newRig(t)
		open(t, rig)
		n := rig.Refreshes()
		rig.Advance(rig.Lifetime / 4)
		open(t, rig)
		if got := rig.Refreshes(); got != n {
			t.Fatalf("Open of an unexpired credential refreshed (%d -> %d)", n, got)
		}
	})

	suitetest.Run(t, "RefreshesExpired", func(t T) {
		rig := newRig(t)
		open(t, rig)
		n := rig.Refreshes()
		rig.Advance(rig.Lifetime)
		open(t, rig)
		if got := rig.Refreshes(); got != n+1 {
			t.Fatalf("Open of an expired credential made %d refreshes, want 1", got-n)
		}
	})

	suitetest.Run(t, "InvalidateForcesRefresh", func(t T) {
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

	suitetest.Run(t, "ConcurrentOpensShareRefresh", func(t T) {
		rig := newRig(t)
		open(t, rig)
		// Each round expires the credential and releases concurrentOpens
		// Opens at once, so they overlap however the machine schedules
		// them; one round with more than one refresh is enough.
		for round := range concurrentRounds {
			rig.Advance(rig.Lifetime)
			n := rig.Refreshes()
			var spawned, wg sync.WaitGroup
			start := make(chan struct{})
			errs := make(chan error, concurrentOpens)
			spawned.Add(concurrentOpens)
			for range concurrentOpens {
				wg.Go(func() {
					spawned.Done()
					<-start
					s, err := rig.Runtime.Open(ctx, rig.Enrolled)
					if err != nil {
						errs <- err
						return
					}
					s.Destroy()
				})
			}
			spawned.Wait()
			close(start)
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			if got := rig.Refreshes(); got != n+1 {
				t.Fatalf("round %d: %d concurrent Opens made %d refreshes, want 1", round, concurrentOpens, got-n)
			}
		}
	})

	suitetest.Run(t, "UnknownBindingRefused", func(t T) {
		rig := newRig(t)
		s, err := rig.Runtime.Open(ctx, rig.Unenrolled)
		if s != nil || !errors.Is(err, custody.CodeRecordNotFound) {
			t.Fatalf("Open(unenrolled) = %v, %v; want record_not_found", s, err)
		}
		if err := rig.Runtime.Invalidate(ctx, rig.Unenrolled); !errors.Is(err, custody.CodeRecordNotFound) {
			t.Fatalf("Invalidate(unenrolled) = %v; want record_not_found", err)
		}
	})

	suitetest.Run(t, "CanceledRefreshFails", func(t T) {
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

	suitetest.Run(t, "Sequence", func(t T) { testRuntimeSequence(t, newRig(t)) })
}

// ConcurrentOpensShareRefresh's rounds, and the Opens of each.
const (
	concurrentRounds = 3
	concurrentOpens  = 8
)

// revealed returns a copy of s's bytes.
func revealed(t testing.TB, s *custody.Secret) []byte {
	t.Helper()
	var out []byte
	if err := reveal.With(s, func(b []byte) error { out = bytes.Clone(b); return nil }); err != nil {
		t.Fatalf("reveal: %v", err)
	}
	return out
}

// checkRedacted fails if any text form of s holds cred.
func checkRedacted(t testing.TB, s *custody.Secret, cred []byte) {
	t.Helper()
	j, _ := json.Marshal(s)
	for _, out := range []string{fmt.Sprint(s), fmt.Sprintf("%v %+v %#v %s %q %x", s, s, s, s, s, s), fmt.Sprintf("%v", *s), string(j)} {
		if leaks := FindLeaks(cred, []byte(out)); len(leaks) > 0 {
			t.Fatalf("a text form of the returned Secret holds the credential (%v)", leaks)
		}
	}
}
