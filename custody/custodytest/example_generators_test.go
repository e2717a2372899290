package custodytest_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/address"
	"github.com/checkfu/checkfu/custody/custodytest"
	"github.com/checkfu/checkfu/custody/edge"
)

// The generators feed an integrator's rapid properties; this one checks
// that a record sealed at one binding opens at no other. It needs a
// test's *testing.T, so it is compiled, not run.
func Example_property() {
	testMoved := func(t *testing.T) {
		keys := custody.GenerateKeyset()
		rapid.Check(t, func(t *rapid.T) {
			home := custodytest.Bindings().Draw(t, "home")
			other := custody.Binding{
				Namespace:   custodytest.Names().Draw(t, "namespace"),
				Integration: custodytest.Names().Draw(t, "integration"),
				Handle:      custodytest.Handles().Draw(t, "handle"),
			}
			if other == home {
				t.Skip("same binding")
			}
			sealed, err := keys.Seal(home, custody.NewSecret([]byte("canary-credential")))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := keys.Open(other, sealed); err == nil {
				t.Fatalf("a record sealed for %v opened at %v", home, other)
			}
		})
	}
	_ = testMoved // func TestMoved(t *testing.T) in a _test.go file
}

// Outside rapid.Check, Example draws one value for a given seed.
func ExampleBindings() {
	for i := range 20 {
		if err := custodytest.Bindings().Example(i).Validate(); err != nil {
			fmt.Println(err)
		}
	}
	fmt.Println("all valid")
	// Output: all valid
}

func ExampleHandles() {
	// Deterministic for a seed, unlike address.NewHandle, so rapid can
	// shrink a failing case.
	a, b := custodytest.Handles().Example(7), custodytest.Handles().Example(7)
	fmt.Println(a == b, a.IsZero())
	// Output: true false
}

func ExampleNames() {
	ok := true
	for i := range 50 {
		name := custodytest.Names().Example(i)
		b := custody.Binding{Namespace: name, Integration: name, Handle: address.NewHandle()}
		ok = ok && b.Validate() == nil
	}
	fmt.Println(ok)
	// Output: true
}

func ExampleNewBinding() {
	a := custodytest.NewBinding("acme", "github")
	b := custodytest.NewBinding("acme", "github")
	fmt.Println(a.Validate(), a == b) // fresh handle each time
	// Output: <nil> false
}

// CanaryForms lists what a leak check looks for; FindLeaks does the
// looking. A canary credential must never appear in any of these forms in
// logs, errors or API output.
func ExampleCanaryForms() {
	forms := custodytest.CanaryForms([]byte("canary-1"))
	names := make([]string, 0, len(forms))
	for name := range forms {
		names = append(names, name)
	}
	slices.Sort(names)
	fmt.Println(strings.Join(names, " "))
	fmt.Println(forms["hex"], forms["base64"])

	// A log line printed with a Secret holds none of them.
	var out strings.Builder
	s := custody.NewSecret([]byte("canary-credential"))
	slog.New(slog.NewJSONHandler(&out, nil)).Info("attached", "credential", s)
	fmt.Println(custodytest.FindLeaks([]byte("canary-credential"), []byte(out.String())))
	// Output:
	// HEX base64 base64-raw base64url base64url-raw decimal decimal-comma decimal-list hex quoted raw
	// 63616e6172792d31 Y2FuYXJ5LTE=
	// []
}

// staticRefresher answers every refresh with "access-N", valid for an
// hour of the rig's clock.
type staticRefresher struct {
	mu  sync.Mutex
	n   int
	now func() time.Time
}

func (r *staticRefresher) Refresh(context.Context, custody.Binding, *custody.Secret) (access, rotated *custody.Secret, expiresAt time.Time, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n++
	return custody.NewSecret(fmt.Appendf(nil, "access-token-%d", r.n)), nil, r.now().Add(time.Hour), nil
}

func (r *staticRefresher) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}

// An IntegrationRuntime runs the conformance suite from its own tests,
// here the reference edge.TokenRuntime. It needs a test's *testing.T,
// so it is compiled, not run.
func ExampleTestRuntime() {
	testConformance := func(t *testing.T) {
		custodytest.TestRuntime(t, func(t *testing.T) custodytest.RuntimeRig {
			var mu sync.Mutex
			now := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
			clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
			refresher := &staticRefresher{now: clock}
			rt, err := edge.NewTokenRuntime(edge.TokenRuntimeConfig{
				Keys: custody.GenerateKeyset(), Store: custody.NewMemoryStore(), Refresher: refresher, Now: clock,
			})
			if err != nil {
				t.Fatal(err)
			}
			enrolled := custodytest.NewBinding("acme", "github")
			if err := rt.Enroll(context.Background(), enrolled, custody.NewSecret([]byte("refresh-token-canary"))); err != nil {
				t.Fatal(err)
			}
			return custodytest.RuntimeRig{
				Runtime:    rt,
				Enrolled:   enrolled,
				Unenrolled: custodytest.NewBinding("acme", "github"),
				Lifetime:   time.Hour,
				Advance:    func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() },
				Refreshes:  refresher.count,
			}
		})
	}
	_ = testConformance // func TestConformance(t *testing.T) in a _test.go file
}

// LoadModule loads the exported API of every package of the module for
// CheckExposure. It runs the go command, so this example is compiled, not
// run.
func ExampleLoadModule() {
	testExposure := func(t *testing.T) {
		m, err := custodytest.LoadModule(".")
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("checking %d packages of %s", len(m.Packages), m.Path)
		rules := custodytest.ExposureRules{Boundary: []string{m.Path + "/custody"}}
		for _, v := range custodytest.CheckExposure(m.Packages, rules) {
			t.Error(v) // "OBJECT: PATH"
		}
	}
	_ = testExposure
}
