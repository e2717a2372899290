package runner

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/trace"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/admission"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/internal/telemetry"
)

// A Session is one session of the Runner: the request context its
// server-owned token stands for, its admission, and, once launched, its
// sandbox instance, gateway channel and broker. Its log is the session
// log named by the context's Session field.
type Session struct {
	r  *Runner
	rc checkfu.RequestContext
	// token is the server-owned token, a bearer credential: held behind
	// a pointer so that fmt and slog print an address, never the token.
	token *string
	// refusals bounds and coalesces the refusals its agents cause.
	refusals *refusals
	// parent is the span the session's tool calls and permission
	// requests are traced under: the last Launch's or Prompt's.
	parent atomic.Pointer[trace.SpanContext]

	mu       sync.Mutex // guards the fields below
	profile  *admission.Published
	record   *admission.Record
	plane    *plane // built by the first Launch
	instance adapters.Instance
	agents   map[*Agent]bool // launched and not yet closed
	closed   bool
	// destroyed: the instance's Destroy has succeeded once, so no later
	// Close asks the provider again.
	destroyed bool
}

// PlaneSession is the log the Runner appends to for what happens before
// any session exists: a refused [Runner.Open].
const PlaneSession = "checkfu-plane"

// Open authenticates the server-owned token the application server
// presented and returns the session it names. The token is the only
// source of the request context: every event of the session carries it,
// and the gateway channel the session opens is bound to it. A token the
// Runner did not issue, or one expired, is refused with the gateway's
// codes. No session is established, so the refusal is appended to the
// [PlaneSession] log as a denial with its code and no request context
// (nothing about the caller was authenticated), never the token; the
// refusal stands if that append fails.
func (r *Runner) Open(ctx context.Context, token string) (*Session, error) {
	rc, err := r.tokens.Authenticate(ctx, token)
	if err == nil {
		err = eventlog.CheckSession(rc.Session)
	}
	if err != nil {
		return nil, r.refuseOpen(ctx, err)
	}
	return &Session{r: r, rc: rc, token: &token, refusals: newRefusals()}, nil
}

// refuseOpen appends a refused Open to the plane log and returns err,
// joined with the append's failure if it failed.
func (r *Runner) refuseOpen(ctx context.Context, err error) error {
	ev := eventlog.Event{Kind: eventlog.KindDenial, Label: r.cfg.Label, Decision: eventlog.DecisionDeny,
		Code: codeOf(err), Result: string(CodeRefused), Release: r.cfg.Release}
	r.cfg.Logger.LogAttrs(ctx, slog.LevelInfo, "runner: open refused", slog.String("code", ev.Code), slog.String("cause", checkfu.Cause(err)))
	if _, lerr := r.log.Append(context.WithoutCancel(ctx), PlaneSession, ev); lerr != nil {
		r.cfg.Logger.LogAttrs(ctx, slog.LevelError, "runner: event not recorded", slog.String("session", PlaneSession), slog.String("cause", checkfu.Cause(lerr)))
		return errors.Join(err, lerr)
	}
	return err
}

// bearer returns the server-owned token.
func (s *Session) bearer() string { return *s.token }

// Context returns the session's request context.
func (s *Session) Context() checkfu.RequestContext { return s.rc }

// ID returns the session's id, the name of its log.
func (s *Session) ID() string { return s.rc.Session }

// Publish is step 1: it decodes a SandboxProfile document strictly and
// publishes it as the version after prev (nil for the first), with the
// built-in preset catalog, so that every convenience becomes exact hosts
// with their grants. The decision is appended to the session log;
// a refusal keeps admission's code.
func (s *Session) Publish(ctx context.Context, doc []byte, prev *admission.Published) (*admission.Published, error) {
	ctx, span := s.step(ctx, "publish")
	v, err := s.publish(ctx, doc, prev)
	telemetry.End(span, spanCode(err))
	return v, err
}

// publish is Publish inside its span.
func (s *Session) publish(ctx context.Context, doc []byte, prev *admission.Published) (*admission.Published, error) {
	p, err := admission.ParseProfile(doc)
	var v *admission.Published
	if err == nil {
		v, err = admission.Publish(prev, p, nil)
	}
	ev := eventlog.Event{Kind: eventlog.KindAdmission}
	if v != nil {
		ev.Profile = profileRevision(v)
	}
	if lerr := s.decide(ctx, ev, err, CodePublished); lerr != nil {
		return nil, lerr
	}
	if err != nil {
		return nil, err
	}
	return v, nil
}

// Admit is step 2: it admits the session on the Runner's provider for the
// published version v, in lane with provenance: the provider's grade
// (adapters.Grade: its advertisement capped by its receipt) must meet the
// profile's egress requirement and the lane's rule must hold against the
// enrollment's effective capability (admission.Admit). The record is
// then frozen under the deployment key, loaded back as any Runner would
// load it, and re-checked at placement (admission.Place). The decision is
// appended to the session log; a refusal keeps admission's code, and the
// session may Admit again with another version until its first Launch
// (after which Admit is refused with checkfu.CodeConfigInvalid).
func (s *Session) Admit(ctx context.Context, v *admission.Published, lane admission.Lane, provenance admission.Provenance) error {
	ctx, span := s.step(ctx, "admit")
	err := s.admitStep(ctx, v, lane, provenance)
	if span.IsRecording() && v != nil {
		span.SetAttributes(telemetry.KeyProfileDigest.String(v.ProfileDigest()))
	}
	telemetry.End(span, spanCode(err))
	return err
}

// admitStep is Admit inside its span.
func (s *Session) admitStep(ctx context.Context, v *admission.Published, lane admission.Lane, provenance admission.Provenance) error {
	r := s.r
	s.mu.Lock()
	launched := s.plane != nil || s.instance != nil
	s.mu.Unlock()
	if launched {
		return checkfu.Refuse(checkfu.CodeConfigInvalid, "runner: session %s already launched under its admission", checkfu.Quote(s.rc.Session))
	}
	rec, err := s.admit(v, lane, provenance)
	ev := eventlog.Event{Kind: eventlog.KindAdmission, Provider: r.enrollment.Target()}
	if v != nil {
		ev.Profile = profileRevision(v)
	}
	if rec != nil {
		ev.Scope = "lane:" + rec.Facts().Lane.String()
	}
	if lerr := s.decide(ctx, ev, err, CodeAdmitted); lerr != nil {
		return lerr
	}
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.profile, s.record = v, rec
	return nil
}

func (s *Session) admit(v *admission.Published, lane admission.Lane, provenance admission.Provenance) (*admission.Record, error) {
	r := s.r
	if v == nil {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "runner: Admit needs a published profile")
	}
	if err := admission.CheckPlacement(r.placement(), r.desc.Capability); err != nil {
		return nil, err
	}
	rec, err := admission.Admit(admission.AdmitRequest{
		Deployment: r.deployment, Session: s.rc.Session, Profile: v, Lane: lane, Provenance: provenance,
		Providers: []admission.ProviderOffer{{Enrollment: r.enrollment, Receipt: r.cfg.Receipt}},
		Harness:   "acp", Now: r.now(),
	})
	if err != nil {
		return nil, err
	}
	env, err := admission.SignRecord(r.signer, rec)
	if err != nil {
		return nil, err
	}
	loaded, err := admission.LoadRecord(env, r.deployment, s.rc.Session, r.trusted)
	if err != nil {
		return nil, err
	}
	if err := admission.Place(loaded, v, r.enrollment, r.cfg.Receipt); err != nil {
		return nil, err
	}
	return loaded, nil
}

// Record returns the session's frozen admission record, or nil before a
// successful Admit.
func (s *Session) Record() *admission.Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.record
}

// decide appends ev as the outcome err decided: allow with result ok for
// nil; deny with err's code otherwise, ev.Result naming what was refused
// (CodeRefused when empty). An event that cannot be appended is an error
// of its own: an unrecorded decision is no decision.
func (s *Session) decide(ctx context.Context, ev eventlog.Event, err error, ok ResultCode) error {
	ev.Decision = eventlog.DecisionAllow
	if err == nil {
		ev.Result = string(ok)
	} else {
		ev.Decision = eventlog.DecisionDeny
		ev.Code = codeOf(err)
		if ev.Result == "" {
			ev.Result = string(CodeRefused)
		}
		s.r.cfg.Logger.LogAttrs(ctx, slog.LevelInfo, "runner: step refused", slog.String("kind", ev.Kind.String()), slog.String("code", ev.Code),
			slog.String("result", ev.Result), slog.String("session", s.rc.Session), slog.String("request", s.rc.Request), slog.String("cause", checkfu.Cause(err)))
	}
	return s.append(ctx, ev)
}

// append stamps ev with the session's request context, the Runner's
// label and release, and, unless ev names one, the channel ctx names (the
// agent whose request ev records), and appends it.
func (s *Session) append(ctx context.Context, ev eventlog.Event) error {
	ev.Label = s.r.cfg.Label
	if ev.Channel == "" {
		ev.Channel = authz.ChannelFrom(ctx)
	}
	ev.RequestID, ev.RunID, ev.Actor = s.rc.Request, s.rc.Run, s.rc.Actor
	ev.Role, ev.Tenant, ev.Workspace, ev.Project, ev.SessionID = s.rc.Role, s.rc.Tenant, s.rc.Workspace, s.rc.Project, s.rc.Session
	if ev.Release == "" {
		ev.Release = s.r.cfg.Release
		if ev.Release == "" {
			ev.Release = s.rc.Release
		}
	}
	_, err := s.r.log.Append(ctx, s.rc.Session, ev)
	if err != nil {
		s.r.cfg.Logger.LogAttrs(ctx, slog.LevelError, "runner: event not recorded", slog.String("kind", ev.Kind.String()),
			slog.String("session", s.rc.Session), slog.String("cause", checkfu.Cause(err)))
	}
	return err
}

// step starts the span of the session step name, under ctx's span (the
// host's), with the request context's identifiers.
func (s *Session) step(ctx context.Context, name string) (context.Context, trace.Span) {
	ctx, span := telemetry.Start(ctx, s.r.tracer, "checkfu.runner/"+name)
	if span.IsRecording() {
		span.SetAttributes(telemetry.Request(s.rc)...)
	}
	return ctx, span
}

// spanCode is codeOf for a span: "" for nil.
func spanCode(err error) string {
	if err == nil {
		return ""
	}
	return codeOf(err)
}

// codeOf returns err's refusal or upstream code, "failed" for anything
// else: free text never reaches an envelope.
func codeOf(err error) string {
	if c, ok := checkfu.CodeOf(err); ok {
		return string(c)
	}
	var ee *authz.EvidenceError
	if errors.As(err, &ee) {
		return "evidence_unrecorded"
	}
	return "failed"
}

func profileRevision(v *admission.Published) eventlog.ProfileRevision {
	return eventlog.ProfileRevision{Profile: v.Name(), Revision: strconv.Itoa(v.Version())}
}

// Close ends the session: it ends the ACP client of every agent not yet
// closed and kills its process (logging the end of its turn in flight,
// if any, and of the process), destroys the instance (giving the
// provider ExitGrace), closes the gateway channel, stops the broker and
// revokes the lease. A later Close does nothing and returns nil, except
// that an instance whose Destroy failed (a provider that could not be
// reached, or took longer than ExitGrace) is destroyed again, and that
// Destroy's error returned: a host that calls Close until it returns nil
// leaves no sandbox running.
func (s *Session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return s.destroyInstance()
	}
	s.closed = true
	// End the agents first, and not through the instance alone: a
	// provider whose Destroy fails must not leave an agent spoken to.
	var err error
	for a := range s.agents {
		// The turn ends here, before the client does: an answer the
		// agent sends as its input closes is not the turn's end.
		_, terr := a.endTurn(context.Background(), CodeClosed, nil)
		// A process that ended on its own is logged with its status, not
		// as killed by Close.
		result := CodeKilled
		select {
		case <-a.waited:
			if a.werr == nil {
				result = exitResult(a.code)
			}
		default:
		}
		a.client.Close()
		a.proc.Kill()
		err = errors.Join(err, terr, a.exited(context.Background(), result))
	}
	s.agents = nil
	err = errors.Join(err, s.flushRefusals(context.Background()))
	err = errors.Join(err, s.destroyInstance())
	if s.plane != nil {
		s.plane.close()
	}
	return err
}

// destroyInstance destroys the session's instance, if it has one that
// no earlier call destroyed, giving the provider ExitGrace: a provider
// that never finishes a Destroy cannot hold Close. It runs under s.mu.
func (s *Session) destroyInstance() error {
	if s.instance == nil || s.destroyed {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), ExitGrace)
	defer cancel()
	if err := s.instance.Destroy(ctx); err != nil {
		return err
	}
	s.destroyed = true
	return nil
}
