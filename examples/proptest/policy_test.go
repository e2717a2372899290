package proptest

import (
	"errors"
	"flag"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"pgregory.net/rapid"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/egress/egresstest"
)

// A decider is what the properties check: a Policy, or a broken variant.
type decider interface {
	Decide(req *egress.Request) (egress.Decision, error)
}

// newPolicy makes the decider under test from rules and a blocklist.
type newPolicy func(rules *egress.Rules, blocked ...string) decider

func correct(rules *egress.Rules, blocked ...string) decider { return New(rules, blocked...) }

// exactOnly is the deliberately broken variant: it blocks the blocked
// names themselves but forgets the names under them, so
// "api.tracker.example" passes a block of "tracker.example".
type exactOnly struct {
	rules   *egress.Rules
	blocked []string
}

func (p *exactOnly) Decide(req *egress.Request) (egress.Decision, error) {
	for _, b := range p.blocked {
		if req.Host == b {
			return egress.Decision{}, checkfu.Refuse(codeHostBlocked, "platform: host %s is blocked", checkfu.Quote(req.Host))
		}
	}
	return p.rules.Decide(req)
}

func broken(rules *egress.Rules, blocked ...string) decider {
	return &exactOnly{rules: rules, blocked: blocked}
}

// blockedDomain draws a domain that host is at or under: host itself or
// one of its parent domains, down to its top-level domain.
func blockedDomain(t *rapid.T, host string) string {
	labels := strings.Split(host, ".")
	return strings.Join(labels[rapid.IntRange(0, len(labels)-1).Draw(t, "cut"):], ".")
}

// neverWidens: whatever the policy allows, the rules alone allow, by the
// same rule.
func neverWidens(newP newPolicy) func(*rapid.T) {
	return func(t *rapid.T) {
		rs := egresstest.Rules(8).Draw(t, "rules")
		blocked := rapid.SliceOfN(egresstest.Host(), 0, 3).Draw(t, "blocked")
		req := egresstest.Request(rs).Draw(t, "request")
		d, _ := newP(rs, blocked...).Decide(req)
		bare, _ := rs.Decide(req)
		if d.Allowed() && d.Rule() != bare.Rule() {
			t.Fatalf("policy allowed %s %s by rule %d; the rules alone say %v", req.Method, req.URL(), d.Rule(), bare)
		}
	}
}

// blockedNeverAllowed: a request to a host at or under a blocked domain
// is never allowed, whatever the rules say. This is the security
// property.
func blockedNeverAllowed(newP newPolicy) func(*rapid.T) {
	return func(t *rapid.T) {
		rs := egresstest.Rules(8).Draw(t, "rules")
		req := egresstest.Request(rs).Draw(t, "request")
		block := blockedDomain(t, req.Host)
		if d, _ := newP(rs, block).Decide(req); d.Allowed() {
			t.Fatalf("policy blocking %q allowed %s %s (by rule %d)", block, req.Method, req.URL(), d.Rule())
		}
	}
}

// blockedRefusedAsBlocked: and it is refused with host_blocked, so the
// platform's log names the reason, not whatever the rules would have
// said.
func blockedRefusedAsBlocked(newP newPolicy) func(*rapid.T) {
	return func(t *rapid.T) {
		rs := egresstest.Rules(8).Draw(t, "rules")
		req := egresstest.Request(rs).Draw(t, "request")
		block := blockedDomain(t, req.Host)
		if _, err := newP(rs, block).Decide(req); !errors.Is(err, codeHostBlocked) {
			t.Fatalf("policy blocking %q refused %s with %v, want %s", block, req.URL(), err, codeHostBlocked)
		}
	}
}

// agreesOutsideBlocklist: for a host under no blocked domain, the policy
// decides exactly as the rules do (rule index and refusal code), also when
// a blocked name ends the host's name without being a domain above it.
func agreesOutsideBlocklist(newP newPolicy) func(*rapid.T) {
	return func(t *rapid.T) {
		rs := egresstest.Rules(8).Draw(t, "rules")
		blocked := rapid.SliceOfN(egresstest.Host(), 0, 3).Draw(t, "blocked")
		req := egresstest.Request(rs).Draw(t, "request")
		if first, _, _ := strings.Cut(req.Host, "."); len(first) > 1 && rapid.Bool().Draw(t, "near miss") {
			// A block that ends the host's name but is not a domain it is
			// under: "0.com" for "n0.com". Matching it is over-blocking.
			blocked = append(blocked, req.Host[1:])
		}
		for _, b := range blocked {
			if req.Host == b || strings.HasSuffix(req.Host, "."+b) {
				t.Skip("the request's host happens to be blocked")
			}
		}
		d, err := newP(rs, blocked...).Decide(req)
		bare, bareErr := rs.Decide(req)
		if d != bare || codeOf(err) != codeOf(bareErr) {
			t.Fatalf("policy says %v, %v for %s; the rules say %v, %v", d, err, req.URL(), bare, bareErr)
		}
	}
}

func codeOf(err error) checkfu.Code {
	c, _ := checkfu.CodeOf(err)
	return c
}

func TestNeverWidens(t *testing.T)             { rapid.Check(t, neverWidens(correct)) }
func TestBlockedNeverAllowed(t *testing.T)     { rapid.Check(t, blockedNeverAllowed(correct)) }
func TestBlockedRefusedAsBlocked(t *testing.T) { rapid.Check(t, blockedRefusedAsBlocked(correct)) }
func TestAgreesOutsideBlocklist(t *testing.T)  { rapid.Check(t, agreesOutsideBlocklist(correct)) }

// TestDeciderSuite runs checkfu's own property suite on the policy. The
// suite compares every decision with a reference implementation of the
// rules, so the blocklist names a domain the generators never produce
// (.invalid); the policy must then be indistinguishable from its rules,
// also in long sequences of near-identical requests on one instance.
func TestDeciderSuite(t *testing.T) {
	egresstest.TestDecider(t, func(rs *egress.Rules) egresstest.Decider { return New(rs, "blocked.invalid") })
}

// TestPropertyCatchesBrokenVariant: the property fails on the broken
// variant, so it can fail at all. It runs under a recorder, so the
// failure it must find does not fail this test.
func TestPropertyCatchesBrokenVariant(t *testing.T) {
	quietRapid(t)
	r := record(t.Name(), func(tb rapid.TB) { rapid.Check(tb, blockedNeverAllowed(broken)) })
	if !r.Failed() {
		t.Fatal("blockedNeverAllowed passed the exact-match blocklist, which lets every name under a blocked domain through")
	}
	t.Logf("caught, as it must be: %s", r.first)
	// The control: the same recorder passes the correct policy.
	if r := record(t.Name(), func(tb rapid.TB) { rapid.Check(tb, blockedNeverAllowed(correct)) }); r.Failed() {
		t.Fatalf("the recorder failed the correct policy: %s", r.first)
	}
}

// A recorder is a rapid.TB that records failures instead of failing the
// test, so a test can assert that a property fails. FailNow and SkipNow
// end the calling goroutine, as testing.T's do; record runs the property
// on a goroutine of its own.
type recorder struct {
	name string

	mu      sync.Mutex // guards the fields below
	failed  bool
	skipped bool
	first   string // the first failure message
}

func record(name string, f func(rapid.TB)) *recorder {
	r := &recorder{name: name}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return r
}

func (r *recorder) Helper()              {}
func (r *recorder) Name() string         { return r.name }
func (r *recorder) Logf(string, ...any)  {}
func (r *recorder) Log(...any)           {}
func (r *recorder) Skipf(string, ...any) { r.SkipNow() }
func (r *recorder) Skip(...any)          { r.SkipNow() }
func (r *recorder) SkipNow() {
	r.mu.Lock()
	r.skipped = true
	r.mu.Unlock()
	runtime.Goexit()
}
func (r *recorder) Errorf(format string, args ...any) { r.fail(fmt.Sprintf(format, args...)) }
func (r *recorder) Error(args ...any)                 { r.fail(fmt.Sprint(args...)) }
func (r *recorder) Fatalf(format string, args ...any) { r.Errorf(format, args...); r.FailNow() }
func (r *recorder) Fatal(args ...any)                 { r.Error(args...); r.FailNow() }
func (r *recorder) FailNow()                          { r.Fail(); runtime.Goexit() }
func (r *recorder) Fail()                             { r.fail("") }
func (r *recorder) Failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failed
}

func (r *recorder) fail(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = true
	if r.first == "" {
		r.first = msg
	}
}

// quietRapid stops rapid writing a fail file into testdata/ for a failure
// the test expects, and bounds its shrinking.
func quietRapid(t *testing.T) {
	for name, value := range map[string]string{"rapid.nofailfile": "true", "rapid.shrinktime": "1s"} {
		f := flag.Lookup(name)
		if f == nil {
			t.Fatalf("rapid has no -%s flag", name)
		}
		old := f.Value.String()
		if err := f.Value.Set(value); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Value.Set(old) })
	}
}
