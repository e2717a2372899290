package authz

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/checkfu/checkfu"
)

// An ApprovalBinding is everything an approval is bound to besides its
// expiry: the actor the action runs for, the grant it runs under (such as
// a lease id), the canonical action (its [Action.Digest]), the intended
// effect and the scope (such as a session id). Every field is compared
// exactly.
type ApprovalBinding struct {
	Actor  string
	Grant  string
	Action string
	Effect Effect
	Scope  string
}

func (b ApprovalBinding) complete() bool {
	return b.Actor != "" && b.Grant != "" && b.Action != "" && b.Effect.Valid() && b.Scope != ""
}

// An Approval is a recorded decision on one bound action.
type Approval struct {
	ID        string
	Binding   ApprovalBinding
	Approver  string
	Approved  bool
	DecidedAt time.Time
	ExpiresAt time.Time
}

// Check reports, as a typed refusal, whether attempted may run under a at
// time now: [CodeApprovalDenied] unless approved, [CodeApprovalExpired]
// outside [DecidedAt, ExpiresAt), [CodeApprovalMismatch] when any bound
// field differs. It is pure. The zero Approval permits nothing.
func (a Approval) Check(attempted ApprovalBinding, now time.Time) error {
	if !a.Approved {
		return checkfu.Refuse(CodeApprovalDenied, "authz: approval %s does not approve its action", checkfu.Quote(a.ID))
	}
	if !now.Before(a.ExpiresAt) || now.Before(a.DecidedAt) {
		return checkfu.Refuse(CodeApprovalExpired, "authz: approval %s is outside its lifetime", checkfu.Quote(a.ID))
	}
	if !a.Binding.complete() {
		return checkfu.Refuse(CodeApprovalMismatch, "authz: approval %s binds nothing", checkfu.Quote(a.ID))
	}
	for _, f := range []struct {
		name      string
		got, want string
	}{
		{"actor", attempted.Actor, a.Binding.Actor},
		{"grant", attempted.Grant, a.Binding.Grant},
		{"action", attempted.Action, a.Binding.Action},
		{"effect", attempted.Effect.String(), a.Binding.Effect.String()},
		{"scope", attempted.Scope, a.Binding.Scope},
	} {
		if f.got != f.want {
			return checkfu.Refuse(CodeApprovalMismatch, "authz: approval %s binds %s %s, not %s", checkfu.Quote(a.ID), f.name, checkfu.Quote(f.want), checkfu.Quote(f.got))
		}
	}
	return nil
}

// An ApprovalDecision is an approver's answer on one bound action.
type ApprovalDecision struct {
	Binding  ApprovalBinding
	Approver string
	Approve  bool
	TTL      time.Duration // how long an approval stays valid
}

// ApprovalConfig configures NewApprovals.
type ApprovalConfig struct {
	Evidence EvidenceSink     // required: decisions and results are recorded here
	Label    checkfu.Label    // the label on every recorded event
	Now      func() time.Time // the clock; nil means time.Now
	MaxTTL   time.Duration    // longest approval; zero means DefaultMaxApprovalTTL
}

// DefaultMaxApprovalTTL is the longest approval lifetime when
// ApprovalConfig.MaxTTL is zero.
const DefaultMaxApprovalTTL = 15 * time.Minute

// Approvals records action-bound approvals and runs effects under them.
// Each approval is spent by exactly one effect. It is safe for concurrent
// use. The zero Approvals records nothing and refuses every effect.
type Approvals struct {
	sink   EvidenceSink
	label  checkfu.Label
	now    func() time.Time
	maxTTL time.Duration

	mu        sync.Mutex
	approvals map[string]*approvalState // guarded by mu
}

type approvalState struct {
	approval Approval
	spent    bool
}

// NewApprovals returns an empty approval book. A missing evidence sink is
// refused with [checkfu.CodeConfigInvalid]: an unrecorded decision is no decision.
func NewApprovals(cfg ApprovalConfig) (*Approvals, error) {
	if cfg.Evidence == nil {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "authz: NewApprovals needs an EvidenceSink")
	}
	if !cfg.Label.Valid() {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "authz: NewApprovals: %s is not an evidence label", cfg.Label)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.MaxTTL == 0 {
		cfg.MaxTTL = DefaultMaxApprovalTTL
	}
	return &Approvals{sink: cfg.Evidence, label: cfg.Label, now: cfg.Now, maxTTL: cfg.MaxTTL, approvals: map[string]*approvalState{}}, nil
}

// Decide records d as decision evidence and then keeps it. The approver
// may not be the actor the action runs for. A denial withdraws every
// earlier approval of exactly the same binding that no effect has
// carried yet: [Approvals.Pending] no longer finds it and
// [Approvals.Carry] refuses it as used, so the last decision on an
// action stands. When the sink fails, the decision is not kept (and
// withdraws nothing) and an [*EvidenceError] is returned.
func (s *Approvals) Decide(ctx context.Context, d ApprovalDecision) (Approval, error) {
	switch {
	case !d.Binding.complete():
		return Approval{}, checkfu.Refuse(CodeApprovalInvalid, "authz: an approval binds actor, grant, action, effect and scope; all are required")
	case d.Approver == "":
		return Approval{}, checkfu.Refuse(CodeApprovalInvalid, "authz: an approval needs an approver")
	case d.Approver == d.Binding.Actor:
		return Approval{}, checkfu.Refuse(CodeApprovalInvalid, "authz: actor %s may not approve its own action", checkfu.Quote(d.Approver))
	case d.TTL <= 0 || d.TTL > s.maxTTL:
		return Approval{}, checkfu.Refuse(CodeApprovalInvalid, "authz: approval lifetime %v is not in (0, %v]", d.TTL, s.maxTTL)
	}
	id, err := newID("approval_")
	if err != nil {
		return Approval{}, err
	}
	now := s.now()
	a := Approval{ID: id, Binding: d.Binding, Approver: d.Approver, Approved: d.Approve, DecidedAt: now, ExpiresAt: now.Add(d.TTL)}
	outcome := OutcomeDenied
	if a.Approved {
		outcome = OutcomeApproved
	}
	if err := s.record(ctx, EvidenceApprovalDecision, a.ID, a.Approver, d.Binding, outcome, "", now); err != nil {
		return Approval{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !d.Approve {
		// The approver's last word on the action stands: a "no" withdraws
		// every earlier "yes" to exactly this binding not yet carried.
		for _, st := range s.approvals {
			if st.approval.Binding == d.Binding {
				st.spent = true
			}
		}
	}
	s.approvals[id] = &approvalState{approval: a}
	return a, nil
}

// Carry runs effect under the approval id for the attempted binding. It
// revalidates immediately before the effect, under the lock that spends
// the approval: the approval must exist ([CodeApprovalUnknown]), be unspent
// ([CodeApprovalUsed]) and pass [Approval.Check] at that instant. A refused
// attempt is recorded as result evidence with [OutcomeRefused] and the
// effect does not run. Otherwise the approval is spent, effect runs, and
// its result is recorded as evidence separate from the decision.
func (s *Approvals) Carry(ctx context.Context, id string, attempted ApprovalBinding, effect func(context.Context) error) error {
	if s == nil || s.sink == nil {
		// Nowhere to record the refusal, and nothing to run under.
		return checkfu.Refuse(CodeApprovalUnknown, "authz: no approval %s: the zero Approvals holds none; build one with NewApprovals", checkfu.Quote(id))
	}
	a, err := s.spend(id, attempted)
	if err != nil {
		code, _ := checkfu.CodeOf(err)
		if rerr := s.record(ctx, EvidenceApprovalResult, id, a.Approver, attempted, OutcomeRefused, code, s.now()); rerr != nil {
			return errors.Join(err, rerr)
		}
		return err
	}
	effErr := effect(ctx)
	outcome := OutcomeSucceeded
	var code checkfu.Code
	if effErr != nil {
		outcome = OutcomeFailed
		code, _ = checkfu.CodeOf(effErr)
	}
	if rerr := s.record(context.WithoutCancel(ctx), EvidenceApprovalResult, id, a.Approver, attempted, outcome, code, s.now()); rerr != nil {
		return errors.Join(effErr, rerr)
	}
	return effErr
}

func (s *Approvals) spend(id string, attempted ApprovalBinding) (Approval, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.approvals[id]
	if !ok {
		return Approval{}, checkfu.Refuse(CodeApprovalUnknown, "authz: no approval %s", checkfu.Quote(id))
	}
	if st.spent {
		return st.approval, checkfu.Refuse(CodeApprovalUsed, "authz: approval %s was already used", checkfu.Quote(id))
	}
	if err := st.approval.Check(attempted, s.now()); err != nil {
		return st.approval, err
	}
	st.spent = true
	return st.approval, nil
}

func (s *Approvals) record(ctx context.Context, kind EvidenceKind, id, approver string, b ApprovalBinding, o Outcome, code checkfu.Code, at time.Time) error {
	rc, _ := checkfu.RequestContextFrom(ctx)
	ev := Evidence{
		Kind: kind, Request: rc, Label: s.label, Time: at, Approval: id, Approver: approver,
		Actor: b.Actor, Grant: b.Grant, Action: b.Action, Effect: b.Effect, Scope: b.Scope,
		Outcome: o, Code: code, Channel: ChannelFrom(ctx),
	}
	if err := s.sink.Record(ctx, ev); err != nil {
		return &EvidenceError{Kind: kind, Err: err}
	}
	return nil
}
