package egress

import (
	"sync"
	"sync/atomic"
)

// This file holds the guard's memo of canonical targets. Canonicalising an
// authority (IDNA mapping for a name, parsing for an IP literal) is a pure
// function of the text the workload sent, so its result can be kept: the
// memo holds no DNS answer and no policy decision. Every request is still
// checked against the policy, and every address dialled is still resolved
// and checked by the Dialer at connect time.

// Bounds of a targetCache: authorities longer than maxCachedAuthority are
// canonicalised every time, and once maxCachedTargets are held, new ones
// are canonicalised every time and not kept (a workload spraying names
// cannot grow the guard's memory).
const (
	maxCachedTargets   = 1024
	maxCachedAuthority = 255
)

// A guardTarget is a canonical destination: what the policy matches
// (host, port), what is dialled (authority) and what is sent as Host
// (hostHeader).
type guardTarget struct {
	host       string
	port       uint16
	authority  string
	hostHeader string
}

// A targetCache memoises canonicalTarget for one scheme. Only successes
// are kept. It is safe for concurrent use; its zero value is empty.
type targetCache struct {
	scheme string
	m      sync.Map // raw authority -> guardTarget
	n      atomic.Int32
}

// get returns the canonical target of authority for c's scheme, exactly
// as canonicalTarget computes it.
func (c *targetCache) get(authority string) (guardTarget, error) {
	if v, ok := c.m.Load(authority); ok {
		return v.(guardTarget), nil
	}
	req, err := canonicalTarget(c.scheme, authority)
	if err != nil {
		return guardTarget{}, err
	}
	t := guardTarget{host: req.Host, port: req.Port, authority: req.Authority(), hostHeader: req.hostHeader()}
	if len(authority) <= maxCachedAuthority && c.n.Load() < maxCachedTargets {
		if _, loaded := c.m.LoadOrStore(authority, t); !loaded {
			c.n.Add(1)
		}
	}
	return t, nil
}
