package runner

import (
	"context"
	"errors"
	"strconv"
	"sync"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/internal/refusalbudget"
)

// Bounds on the refusals an agent can cause over ACP: the permission
// requests the Runner denies and those acp denies alone. Each is a
// record in the session log, so without a bound a permission loop is a
// write amplifier into the log (1,890 denials a second were measured).
const (
	// MaxRefusals is a session's refusal budget, over all its agents.
	// The refusal that spends it is followed by one more record,
	// [CodeAgentRefusalsExceeded]; then the Runner closes the ACP client of
	// every agent of the session (its channel: the agent's input ends
	// and its turn fails), and denies every later permission request
	// without asking the Approver or recording it.
	MaxRefusals = 64
	// RefusalsPerSecond bounds the rate of refusals: once a burst of
	// that many is spent, the Runner waits before it handles the next
	// permission request (or records the next refusal acp decided
	// alone) until the rate allows one more.
	RefusalsPerSecond = 16
	// MaxCoalesced bounds the kinds of refusal the Runner coalesces in
	// a session. The first refusal of a kind (its event with every
	// envelope field but the time) is recorded in full; each identical
	// one after it is only counted, and the count is recorded as one
	// event, the same with Result "<result>_repeated_<n>", when the
	// agent closes, the session closes, or the budget is spent. A kind
	// past the first MaxCoalesced is recorded each time.
	MaxCoalesced = 16
)

// refusalKind is what makes two refusals identical: every envelope
// field the Runner sets on a refusal, but the time.
type refusalKind struct {
	kind                                 eventlog.Kind
	code, result, action, grant, channel string
}

// coalesced is one kind of refusal recorded in full, and how many
// identical ones were counted since it or its last count was recorded.
type coalesced struct {
	ev      eventlog.Event
	key     refusalKind
	repeats int
}

// refusals is a session's refusal budget and rate (a token bucket of
// RefusalsPerSecond tokens refilled at RefusalsPerSecond a second), and
// its coalesced kinds.
type refusals struct {
	budget *refusalbudget.Budget

	mu     sync.Mutex // guards kinds, and orders the records
	kinds  []coalesced
	closed chan struct{} // closed when the budget is spent and recorded
}

func newRefusals() *refusals {
	return &refusals{budget: refusalbudget.New(MaxRefusals, RefusalsPerSecond), closed: make(chan struct{})}
}

// errRefusalsExceeded is the refusal of a request made once the budget
// is spent.
var errRefusalsExceeded = checkfu.Refuse(CodeAgentRefusalsExceeded, "runner: the session's refusal budget of %d is spent", MaxRefusals)

// pace waits until the rate allows one more refusal, or ctx ends (then
// it returns ctx's error), or the budget is spent (then it returns
// errRefusalsExceeded).
func (r *refusals) pace(ctx context.Context) error {
	err := r.budget.Pace(ctx)
	if errors.Is(err, refusalbudget.ErrSpent) {
		return errRefusalsExceeded
	}
	return err
}

// refuse spends one refusal of the budget and records ev (a denial
// with err's code) in s's log, coalesced with the identical refusals
// before it. A nil ev spends without recording: the refusal was
// recorded elsewhere (a declined approval). Once the budget is spent it
// records nothing and returns errRefusalsExceeded; the refusal that
// spends it flushes every count, records CodeAgentRefusalsExceeded and
// closes r.closed.
func (s *Session) refuse(ctx context.Context, ev *eventlog.Event, err error) error {
	r := s.refusals
	r.mu.Lock()
	defer r.mu.Unlock()
	ok, last := r.budget.Spend()
	if !ok {
		return errRefusalsExceeded
	}
	ctx = context.WithoutCancel(ctx)
	var lerr error
	if ev != nil {
		e := *ev
		if e.Channel == "" {
			// The agent whose request it was: kept with a coalesced
			// kind, whose count is recorded later, at a close.
			e.Channel = authz.ChannelFrom(ctx)
		}
		lerr = r.record(ctx, s, e, err)
	}
	if last {
		lerr = errors.Join(lerr, r.flush(ctx, s),
			s.decide(ctx, eventlog.Event{Kind: eventlog.KindDenial, Result: string(CodeRefusedBudget)}, errRefusalsExceeded, ""))
		close(r.closed)
	}
	return lerr
}

// record appends ev, or counts it when a refusal of its kind was
// recorded before. The caller holds mu.
func (r *refusals) record(ctx context.Context, s *Session, ev eventlog.Event, err error) error {
	ev.Decision, ev.Code = eventlog.DecisionDeny, codeOf(err)
	key := refusalKind{kind: ev.Kind, code: ev.Code, result: ev.Result, action: ev.Action, grant: ev.Grant, channel: ev.Channel}
	for i := range r.kinds {
		if r.kinds[i].key == key {
			r.kinds[i].repeats++
			return nil
		}
	}
	if len(r.kinds) < MaxCoalesced {
		r.kinds = append(r.kinds, coalesced{ev: ev, key: key})
	}
	return s.decide(ctx, ev, err, "")
}

// flush records the count of every kind counted since its last record,
// in the order the kinds were first recorded. The caller holds mu.
func (r *refusals) flush(ctx context.Context, s *Session) error {
	var lerr error
	for i := range r.kinds {
		c := &r.kinds[i]
		if c.repeats == 0 {
			continue
		}
		ev := c.ev
		ev.Result += "_repeated_" + strconv.Itoa(c.repeats)
		c.repeats = 0
		if err := s.append(ctx, ev); err != nil && lerr == nil {
			lerr = err
		}
	}
	return lerr
}

// flushRefusals records the counts of the session's coalesced refusals.
func (s *Session) flushRefusals(ctx context.Context) error {
	s.refusals.mu.Lock()
	defer s.refusals.mu.Unlock()
	return s.refusals.flush(ctx, s)
}

// refusedByACP records a permission request acp denied alone (a foreign
// session, over its pending bound, too many options, undecodable
// params), paced and counted against the budget like the Runner's own.
// channel is the ID of the asking agent's channel, which the record
// names.
func (s *Session) refusedByACP(err error, channel string) {
	ctx := authz.WithChannel(checkfu.WithRequestContext(context.Background(), s.rc), channel)
	if s.refusals.pace(ctx) != nil {
		return
	}
	_ = s.refuse(ctx, &eventlog.Event{Kind: eventlog.KindDenial, Result: string(CodeRefusedACPPermission)}, err)
}

// exhausted reports whether the budget is spent.
func (r *refusals) exhausted() bool { return r.budget.Exhausted() }
