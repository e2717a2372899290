package egresstest_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/egress/egresstest"
	"github.com/checkfu/checkfu/internal/suitetest"
)

// A memo is the decision cache an integrator might wrap around the rules,
// keyed by key: a key that leaves out part of the request is the bug.
type memo struct {
	rules *egress.Rules
	key   func(*egress.Request) string

	mu   sync.Mutex
	seen map[string]memoEntry // guarded by mu
}

type memoEntry struct {
	d   egress.Decision
	err error
}

func (m *memo) Decide(req *egress.Request) (egress.Decision, error) {
	k := m.key(req)
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.seen[k]; ok {
		return e.d, e.err
	}
	d, err := m.rules.Decide(req)
	if m.seen == nil {
		m.seen = map[string]memoEntry{}
	}
	m.seen[k] = memoEntry{d, err}
	return d, err
}

func headerKey(req *egress.Request) string {
	ks := make([]string, 0, len(req.Header))
	for k := range req.Header {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return strings.Join(ks, ",")
}

// lastGood falls back, when the rules refuse or fail, to the last
// decision that allowed something: "fail open, the rules were fine a
// moment ago".
type lastGood struct {
	rules *egress.Rules
	mu    sync.Mutex
	good  *egress.Decision // guarded by mu
}

func (l *lastGood) Decide(req *egress.Request) (egress.Decision, error) {
	d, err := l.rules.Decide(req)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err == nil {
		l.good = &d
		return d, nil
	}
	if l.good != nil {
		return *l.good, nil
	}
	return d, err
}

// brokenDeciders are the bugs TestDecider is proved to catch.
var brokenDeciders = []struct {
	name string
	make func(*egress.Rules) egresstest.Decider
}{
	{"header-blind cache (method and URL)", func(rs *egress.Rules) egresstest.Decider {
		return &memo{rules: rs, key: func(r *egress.Request) string { return r.Method + " " + r.URL().String() }}
	}},
	{"cache that ignores the port", func(rs *egress.Rules) egresstest.Decider {
		return &memo{rules: rs, key: func(r *egress.Request) string {
			return fmt.Sprint(r.Method, " ", r.Scheme, "://", r.Host, r.Path, "?", r.RawQuery, " ", headerKey(r)) // u.Hostname(): no port
		}}
	}},
	{"cache that folds path case", func(rs *egress.Rules) egresstest.Decider {
		return &memo{rules: rs, key: func(r *egress.Request) string {
			return r.Method + " " + strings.ToLower(r.URL().String()) + " " + headerKey(r)
		}}
	}},
	{"allows when the rules error (last good decision)", func(rs *egress.Rules) egresstest.Decider {
		return &lastGood{rules: rs}
	}},
}

func TestDeciderRejectsBrokenDeciders(t *testing.T) {
	suitetest.QuietRapid(t)
	suitetest.Accepts(t, "a correct cache", func(r *suitetest.Recorder) {
		egresstest.TestDecider(r, func(rs *egress.Rules) egresstest.Decider {
			return &memo{rules: rs, key: func(r *egress.Request) string {
				return r.Method + " " + r.URL().String() + " " + headerKey(r)
			}}
		})
	})
	for _, b := range brokenDeciders {
		suitetest.Rejects(t, b.name, func(r *suitetest.Recorder) { egresstest.TestDecider(r, b.make) })
	}
}
