package custodytest

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/internal/reveal"
)

// testRuntimeSequence drives ONE runtime through many Opens, clock
// advances and Invalidates, and compares every refresh with a model of
// the credential's age: an Open refreshes exactly once when the
// credential is invalidated or at least Lifetime old, never while it is
// younger than Lifetime/2 (between the two a runtime may refresh early,
// inside its own skew); an Open that did not refresh returns the same
// credential as the Open before it, and one that did returns another.
func testRuntimeSequence(t testing.TB, rig RuntimeRig) {
	ctx := context.Background()
	life := rig.Lifetime
	open := func(rt *rapid.T, what string) []byte {
		s, err := rig.Runtime.Open(ctx, rig.Enrolled)
		if err != nil {
			rt.Fatalf("%s: Open(%s): %v", what, rig.Enrolled, err)
		}
		defer s.Destroy()
		var out []byte
		err = reveal.With(s, func(b []byte) error { out = bytes.Clone(b); return nil })
		if err != nil || len(out) == 0 {
			rt.Fatalf("%s: Open(%s) returned an unusable credential", what, rig.Enrolled)
		}
		return out
	}
	rapid.Check(t, func(rt *rapid.T) {
		// Start each check from a known state, whatever the checks
		// before left: invalidated, then opened.
		before := open(rt, "Open before Invalidate")
		if err := rig.Runtime.Invalidate(ctx, rig.Enrolled); err != nil {
			rt.Fatalf("Invalidate: %v", err)
		}
		n := rig.Refreshes()
		last := open(rt, "first Open after Invalidate")
		if got := rig.Refreshes(); got != n+1 {
			rt.Fatalf("Open after Invalidate made %d refreshes, want 1", got-n)
		}
		if bytes.Equal(last, before) {
			rt.Fatalf("Open after Invalidate refreshed but returned the invalidated credential")
		}
		var age time.Duration
		invalid := false
		rt.Repeat(map[string]func(*rapid.T){
			"open": func(rt *rapid.T) {
				before := rig.Refreshes()
				cred := open(rt, "Open")
				refreshed := rig.Refreshes() - before
				must := invalid || age >= life
				mayNot := !invalid && age < life/2
				switch {
				case refreshed > 1:
					rt.Fatalf("one Open made %d refreshes", refreshed)
				case must && refreshed == 0:
					rt.Fatalf("Open of a credential %v old (lifetime %v, invalidated %v) did not refresh", age, life, invalid)
				case mayNot && refreshed == 1:
					rt.Fatalf("Open of a valid credential %v old (lifetime %v) refreshed", age, life)
				case refreshed == 0 && !bytes.Equal(cred, last):
					rt.Fatalf("Open without a refresh returned another credential than the Open before it")
				case refreshed == 1 && bytes.Equal(cred, last):
					rt.Fatalf("Open after a refresh (credential %v old, invalidated %v) returned the credential from before the refresh", age, invalid)
				}
				if refreshed == 1 {
					age, invalid = 0, false
				}
				last = cred
			},
			"advance": func(rt *rapid.T) {
				d := rapid.SampledFrom([]time.Duration{life / 8, life / 4, life / 2, life}).Draw(rt, "advance")
				rig.Advance(d)
				age += d
			},
			"invalidate": func(rt *rapid.T) {
				if err := rig.Runtime.Invalidate(ctx, rig.Enrolled); err != nil {
					rt.Fatalf("Invalidate: %v", err)
				}
				invalid = true
			},
			"open unenrolled": func(rt *rapid.T) {
				before := rig.Refreshes()
				s, err := rig.Runtime.Open(ctx, rig.Unenrolled)
				if s != nil || !errors.Is(err, custody.CodeRecordNotFound) {
					rt.Fatalf("Open(unenrolled) = %v, %v; want record_not_found", s, err)
				}
				if rig.Refreshes() != before {
					rt.Fatalf("Open(unenrolled) made a refresh")
				}
			},
		})
	})
}
