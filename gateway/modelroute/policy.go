package modelroute

import (
	"context"
	"slices"
	"sync"

	"github.com/checkfu/checkfu"
)

// A Policy is what the session allows its agent's model calls: the exact
// model names (no pattern, no prefix).
type Policy struct {
	Models []string
}

// Check refuses, with [CodeModelNotAllowed], a request whose model is
// not exactly one of p.Models. The zero Policy allows no model.
func (p Policy) Check(r Request) error {
	if !slices.Contains(p.Models, r.Model) {
		return checkfu.Refuse(CodeModelNotAllowed, "modelroute: model %s is not allowed in this session", checkfu.Quote(r.Model))
	}
	return nil
}

// A Budget is a session's model budget: requests, and tokens as the
// provider reports them (input plus output). Zero in either allows
// nothing.
type Budget struct {
	Requests int64
	Tokens   int64
}

// A Meter spends a session's Budget. Reserve reserves one request before
// anything is sent; Settle adds the tokens the provider reported. A
// request that begins with tokens left may overrun the token budget by its own usage (the provider reports usage only at
// the end): the next request is then refused. Reserve also holds the
// most a request may spend until it settles, so requests sent at once
// cannot each overrun the budget: one that would begin while those in
// flight hold what is left waits for them.
type Meter struct {
	mu       sync.Mutex
	budget   Budget
	used     Budget
	reserved int64         // guarded by mu: tokens held by requests in flight
	settled  chan struct{} // guarded by mu: closed (and replaced) when a request settles
	waiting  int           // guarded by mu: requests waiting in Reserve
}

// NewMeter returns a Meter for b.
func NewMeter(b Budget) *Meter { return &Meter{budget: b, settled: make(chan struct{})} }

// Hold returns the most request r, with a body of bodyBytes bytes, is
// taken to spend: its body's length (a token is at least a byte of the
// text it stands for) plus its output cap, or the whole token budget
// when it names no cap. A token count (r.CountTokens) spends no tokens
// and holds none.
func (m *Meter) Hold(r Request, bodyBytes int) int64 {
	if r.CountTokens {
		return 0
	}
	if r.MaxOutput <= 0 {
		return m.budget.Tokens
	}
	return addTokens(int64(bodyBytes), r.MaxOutput)
}

// Reserve reserves one request and hold tokens for a request about to
// be sent, or refuses with [CodeModelBudgetExhausted] when the requests
// or the tokens are spent. While the tokens used and those held by
// requests in flight reach the budget, a request that holds tokens waits
// for one of those to settle, or for ctx to end (its error is returned);
// one that holds none (a token count) does not wait, since it can
// overrun nothing. A request with nothing else in flight is never
// refused for its own hold.
func (m *Meter) Reserve(ctx context.Context, hold int64) error {
	m.mu.Lock()
	for {
		if err := m.spent(); err != nil {
			m.mu.Unlock()
			return err
		}
		// A request's own hold is not counted against it: alone in
		// flight, it begins whenever the budget is not spent.
		if hold <= 0 || addTokens(m.used.Tokens, m.reserved) < m.budget.Tokens {
			m.used.Requests++
			m.reserved = addTokens(m.reserved, hold)
			m.mu.Unlock()
			return nil
		}
		settled := m.settled
		m.waiting++
		m.mu.Unlock()
		var err error
		select {
		case <-settled:
		case <-ctx.Done():
			err = ctx.Err()
		}
		m.mu.Lock()
		m.waiting--
		if err != nil {
			m.mu.Unlock()
			return err
		}
	}
}

// Allow refuses, with [CodeModelBudgetExhausted], what Reserve would
// refuse now, and reserves nothing: a check made before a request is
// decided, which Reserve repeats as the request leaves.
func (m *Meter) Allow() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.spent()
}

// spent refuses when the requests or the tokens are spent. m.mu is held.
func (m *Meter) spent() error {
	if m.used.Requests >= m.budget.Requests || m.used.Tokens >= m.budget.Tokens {
		return checkfu.Refuse(CodeModelBudgetExhausted, "modelroute: the session's model budget is spent (%d of %d requests, %d of %d tokens)",
			m.used.Requests, m.budget.Requests, m.used.Tokens, m.budget.Tokens)
	}
	return nil
}

// Settle ends request r, for which Reserve held hold tokens, whose
// answer had status and reported u, and returns the usage it was
// charged. The hold is given back, and the requests waiting in Reserve
// look again. A 2xx answer that ended without its
// final usage (u.Final false: the stream was cut, by the agent hanging
// up or the provider, or the provider reported none) produced input and
// output nobody counted: it is charged at least its body's length
// (r.Bytes) as input and its own output cap (r.MaxOutput) as output,
// or, when the request named no cap, the rest of the token budget. Any
// other answer (an error, no answer) is charged what it reported; a
// caller whose agent hung up on a request in flight before any answer
// settles it as a 2xx (see custody/pipeline).
//
// A token count (r.CountTokens) is charged no tokens, whatever its
// status or answer: the provider generates nothing for it, and the
// input_tokens its answer holds are the count asked for, not a use. It
// has spent its one request in Reserve.
func (m *Meter) Settle(r Request, hold int64, status int, u Usage) Usage {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reserved = max(m.reserved-max(hold, 0), 0)
	close(m.settled)
	m.settled = make(chan struct{})
	if r.CountTokens {
		return Usage{}
	}
	if status/100 == 2 && !u.Final {
		u.InputTokens = max(u.InputTokens, r.Bytes)
		if r.MaxOutput > 0 {
			u.OutputTokens = max(u.OutputTokens, r.MaxOutput)
		} else {
			rest := m.budget.Tokens - addTokens(m.used.Tokens, u.InputTokens)
			u.OutputTokens = max(u.OutputTokens, rest, 0)
		}
	}
	m.used.Tokens = addTokens(addTokens(m.used.Tokens, u.InputTokens), u.OutputTokens)
	return u
}

// Release gives back a reservation whose request never left (the call
// was refused after Reserve, before anything was sent): its one request
// and the hold tokens, so a refused call spends none of the budget. The
// requests waiting in Reserve look again. It is never called for a
// request that may have reached the provider: that one is settled.
func (m *Meter) Release(hold int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.used.Requests = max(m.used.Requests-1, 0)
	m.reserved -= min(max(hold, 0), m.reserved)
	wake := m.settled
	m.settled = make(chan struct{})
	close(wake)
}

// Used returns what has been spent.
func (m *Meter) Used() Budget {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.used
}
