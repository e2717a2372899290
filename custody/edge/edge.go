package edge

import (
	"context"
	"crypto/x509"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/net/http/httpguts"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/internal/outbound"
	"github.com/checkfu/checkfu/custody/internal/reveal"
	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/internal/telemetry"
)

// MaxResponseBytes is the largest response body the edge returns.
const MaxResponseBytes = 8 << 20

// maxPresizeBytes bounds the buffer readBody makes up front from a
// response's declared Content-Length: a larger body (or a larger
// claim) is read into a buffer that grows as bytes arrive, so that a
// provider's header alone never costs more than this.
const maxPresizeBytes = 64 << 10

// readBody reads r to its end as io.ReadAll(io.LimitReader(r, limit+1))
// does, returning at most limit+1 bytes (one more than limit says the
// body is too large) and the first error other than io.EOF. When length
// (the declared Content-Length, -1 when unknown) is at most
// maxPresizeBytes, the buffer is made for it and one byte more at once,
// where io.ReadAll starts at 512 bytes and grows; length is only a size
// hint, never trusted as the body's length.
func readBody(r io.Reader, length int64, limit int) ([]byte, error) {
	size := 512
	if length >= 0 && length <= maxPresizeBytes {
		size = int(length) + 1
	}
	buf := make([]byte, 0, min(size, limit+1))
	for len(buf) <= limit {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		room := buf[len(buf):cap(buf)]
		room = room[:min(len(room), limit+1-len(buf))]
		n, err := r.Read(room)
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// A Connection is the trusted plane's record of one provider connection:
// the custody binding of its credential and the egress rules declared for
// it at authorization time.
type Connection struct {
	Credential custody.Binding
	Rules      *egress.Rules
}

// A Response is what the caller sees of a provider's answer. It never
// holds the credential: a response that echoes it is withheld with
// [CodeCredentialEchoed], and so is one whose body is in a content coding
// the edge cannot inspect ([CodeResponseEncoded]). Set-Cookie headers are
// dropped.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// EdgeConfig configures NewEdge.
type EdgeConfig struct {
	Leases    *authz.Leases     // required: the lease book the pipeline spends; the edge checks a call's lease still holds as the credential goes on
	Custodian custody.Custodian // required: *Native or an IntegrationRuntime

	// Evidence, when set, receives one EvidenceEdgeCall event per call,
	// labelled Label, with the authority the call ran under and its
	// terminal result. Now is its clock (nil means time.Now).
	Evidence authz.EvidenceSink
	Label    checkfu.Label
	Now      func() time.Time

	// Dialer, RootCAs and Timeout configure the egress clients (see
	// egress.ClientConfig). A nil Dialer dials public addresses with the
	// system resolver.
	Dialer  *egress.Dialer
	RootCAs *x509.CertPool
	Timeout time.Duration

	// CredentialHeader is the header the credential is attached in;
	// empty means "Authorization". CredentialPrefix is written before
	// the credential; empty means "Bearer " when CredentialHeader is
	// empty too, and nothing otherwise.
	CredentialHeader string
	CredentialPrefix string

	// Logger receives the operator's lines: each call that failed or was
	// refused at the edge, with its cause (checkfu.Cause of the error,
	// which never holds the credential), at debug level (the call
	// pipeline logs the same call's result at warn), and each edge_call
	// event that could not be recorded, at error. Nil discards them.
	Logger *slog.Logger

	// TracerProvider gives the tracer of each exchange's client span
	// ("checkfu.edge/send", and "checkfu.edge/stream" for a model call,
	// which ends with its stream: the registered host, the provider's
	// status, the code). Nil is the no-op provider. The span's W3C trace context
	// (traceparent, and tracestate when set) goes out to the provider
	// only when the Connection's egress rules allow those headers on the
	// request: a Connection declares it at authorization time by listing
	// Traceparent in a rule's Headers.
	TracerProvider trace.TracerProvider
}

// An Edge makes credentialed calls that the call pipeline (package
// custody/pipeline) has authorized, and nothing else: [Edge.Send] and
// [Edge.Remote] take only an [Authorized] value, which only the pipeline
// can make, after it has run every check in its order (channel,
// assignment, registration, arguments, egress rules, approval, lease).
// For every call the edge
//
//  1. takes the Authorized value once (the zero value, or one already
//     sent, is refused with [CodeNotAuthorized] before anything else);
//  2. opens the credential through the Custodian, and the egress client
//     of the Connection's rules (no proxy, public addresses only, no
//     redirects; none of it can be turned off) takes the request the
//     pipeline built and those rules allowed ([egress.Client.Send], which
//     decides again whatever other rules allowed), attaches the
//     credential in its post-decision hook, once the lease is seen to
//     hold still (not revoked or expired while the credential was
//     opened), and sends;
//  3. screens the answer: echoes of the credential, content codings it
//     cannot read, more than [MaxResponseBytes].
//
// The caller gets a [*Response] or an error: a [*checkfu.Refusal] for
// every policy "no", an [*egress.UpstreamError] for a failed exchange. No
// error or response holds the credential. An Edge is safe for concurrent
// use; the zero Edge refuses everything.
type Edge struct {
	leases    *authz.Leases
	custodian custody.Custodian
	dialer    *egress.Dialer
	rootCAs   *x509.CertPool
	timeout   time.Duration
	header    string
	prefix    string
	evidence  authz.EvidenceSink
	label     checkfu.Label
	now       func() time.Time
	log       *slog.Logger
	tracer    trace.Tracer

	mu      sync.Mutex
	clients map[*egress.Rules]*egress.Client // guarded by mu
}

// Authorized is one call the call pipeline (package custody/pipeline)
// authorized, spent the lease for and, for an external effect, carries
// the approval of: its action, the request built from it, the lease and
// the approval. It has no exported fields and only the pipeline can make
// one (its type lives in an internal package of custody): the compiler
// keeps every other caller from reaching [Edge.Send] or [Edge.Remote]
// with a call that did not pass the pipeline. A value is good for one
// call. The zero Authorized is refused.
type Authorized = outbound.Authorized

// NewEdge returns an Edge for cfg. A missing lease book or custodian, an
// invalid label or an unusable credential header is refused with
// [checkfu.CodeConfigInvalid].
func NewEdge(cfg EdgeConfig) (*Edge, error) {
	if cfg.Leases == nil || cfg.Custodian == nil {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "edge: NewEdge needs Leases and a Custodian")
	}
	e := &Edge{
		leases: cfg.Leases, custodian: cfg.Custodian,
		dialer: cfg.Dialer, rootCAs: cfg.RootCAs, timeout: cfg.Timeout,
		header: cfg.CredentialHeader, prefix: cfg.CredentialPrefix,
		evidence: cfg.Evidence, label: cfg.Label, now: cfg.Now, log: cfg.Logger,
		tracer:  telemetry.Tracer(cfg.TracerProvider),
		clients: map[*egress.Rules]*egress.Client{},
	}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	if e.now == nil {
		e.now = time.Now
	}
	if !e.label.Valid() {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "edge: NewEdge: %s is not an evidence label", e.label)
	}
	if e.header == "" {
		e.header = "Authorization"
		if e.prefix == "" {
			e.prefix = "Bearer "
		}
	}
	e.header = http.CanonicalHeaderKey(e.header)
	if e.header != "Authorization" && (!httpguts.ValidHeaderFieldName(e.header) || egress.HeaderDenied(e.header)) {
		// Any denylisted name other than Authorization is a routing,
		// cookie or metadata header: a credential never goes there.
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "edge: NewEdge: CredentialHeader %s is not a usable header name (use Authorization or an API-key header such as X-Api-Key)", checkfu.Quote(cfg.CredentialHeader))
	}
	return e, nil
}

var (
	errZeroEdge      = checkfu.Refuse(authz.CodeCapabilityUnknown, "edge: the zero Edge refuses every call; build one with NewEdge")
	errNotAuthorized = checkfu.Refuse(CodeNotAuthorized, "edge: the call did not pass the call pipeline, or was sent already")
)

// Send makes one authorized call of a plain HTTPS registration: it opens
// the credential, attaches it in the egress client's hook once the lease
// is seen to hold (no proxy, public addresses only, no redirects), sends
// the request the pipeline built and decided, and screens the answer
// (echoes of the credential, content codings it cannot read, more than
// [MaxResponseBytes]). A value the pipeline did not make, or made and
// has sent already, is refused with [CodeNotAuthorized]; a remote MCP
// registration with [authz.CodeCapabilityMismatch] (it goes through
// [Edge.Remote]). When the Edge has an evidence sink, the call's
// edge_call evidence is recorded before Send returns; if recording fails,
// the response is withheld and the error includes an
// [*authz.EvidenceError] (the provider may have acted).
func (e *Edge) Send(ctx context.Context, a Authorized) (*Response, error) {
	if e == nil || e.leases == nil {
		return nil, errZeroEdge
	}
	c, ok := outbound.Take(a)
	if !ok {
		ev := e.edgeCall(ctx, &outbound.Call{})
		return e.record(ctx, &ev, nil, errNotAuthorized)
	}
	ev := e.edgeCall(ctx, c)
	resp, err := e.sendCall(ctx, c, &ev)
	return e.record(ctx, &ev, resp, err)
}

// edgeCall returns the edge_call evidence of c, carrying the request
// context and the channel ctx holds; [Edge.Send] and [Edge.Remote] complete it.
func (e *Edge) edgeCall(ctx context.Context, c *outbound.Call) authz.Evidence {
	rc, _ := checkfu.RequestContextFrom(ctx)
	return authz.Evidence{Kind: authz.EvidenceEdgeCall, Request: rc, Label: e.label, Actor: c.Scope.Actor, Grant: c.Lease.ID,
		Provider: c.Lease.Provider, Approval: c.Approval, Scope: c.Session,
		Capability: c.Action.Capability, Tool: c.Tool, Action: c.Digest, Effect: c.Action.Effect,
		Channel: authz.ChannelFrom(ctx)}
}

func (e *Edge) sendCall(ctx context.Context, c *outbound.Call, ev *authz.Evidence) (*Response, error) {
	if c.Protocol != authz.HTTPS || c.Request == nil || c.Allowed == nil {
		return nil, errRemoteProtocol(c.Action.Capability)
	}
	client, err := e.client(c.Rules)
	if err != nil {
		return nil, err
	}
	return e.send(ctx, client, c.Rules, c.Request, c.Allowed, c.Credential, c.Lease.ID, c.Scope, &ev.Status)
}

// record completes ev from the call's outcome, logs a failure with its
// cause, and records ev when the Edge has a sink; a failed record
// withholds the response.
func (e *Edge) record(ctx context.Context, ev *authz.Evidence, resp *Response, err error) (*Response, error) {
	if err != nil {
		ev.Cause = checkfu.Cause(err)
		e.log.LogAttrs(ctx, slog.LevelDebug, "edge: call failed", slog.String("capability", ev.Capability), slog.String("action", ev.Action),
			slog.String("session", ev.Request.Session), slog.String("request", ev.Request.Request), slog.Int("status", ev.Status), slog.String("cause", ev.Cause))
	}
	if e.evidence == nil {
		return resp, err
	}
	ev.Time = e.now()
	switch {
	case err == nil:
		ev.Outcome = authz.OutcomeSucceeded
	default:
		ev.Outcome = authz.OutcomeFailed
		if code, ok := checkfu.CodeOf(err); ok {
			ev.Code = code
			// Refused before the provider answered: the call did not
			// run. A refusal of its answer (an echo, an oversized body,
			// a redirect) comes after the provider acted: it failed.
			if ev.Status == 0 {
				ev.Outcome = authz.OutcomeRefused
			}
		} else if uc, ok := egress.UpstreamCodeOf(err); ok {
			ev.Code = checkfu.Code(uc)
		}
	}
	if rerr := e.evidence.Record(context.WithoutCancel(ctx), *ev); rerr != nil {
		e.log.LogAttrs(context.WithoutCancel(ctx), slog.LevelError, "edge: evidence not recorded", slog.String("capability", ev.Capability),
			slog.String("session", ev.Request.Session), slog.String("request", ev.Request.Request), slog.String("cause", checkfu.Cause(rerr)))
		return nil, errors.Join(err, &authz.EvidenceError{Kind: authz.EvidenceEdgeCall, Err: rerr})
	}
	return resp, err
}

// encoded reports whether h declares a content coding other than identity.
// The edge asks for identity, so the transport decodes nothing and any
// coding here is one the edge would pass on unseen.
func encoded(h http.Header) bool {
	for _, v := range h.Values("Content-Encoding") {
		for _, c := range strings.Split(v, ",") {
			if c = strings.TrimSpace(c); c != "" && !strings.EqualFold(c, "identity") {
				return true
			}
		}
	}
	return false
}

// maxEdgeClients bounds the egress clients an Edge keeps, one per
// Connection's Rules, so that a caller building new Rules for every call
// cannot grow the cache without limit.
const maxEdgeClients = 256

// client returns the egress client for rules, building it once. When the
// cache is full it closes the cached clients' idle connections and starts
// over: a client is cheap to rebuild, and keeping it only saves reconnects.
func (e *Edge) client(rules *egress.Rules) (*egress.Client, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if c, ok := e.clients[rules]; ok {
		return c, nil
	}
	if len(e.clients) >= maxEdgeClients {
		for _, c := range e.clients {
			c.CloseIdleConnections()
		}
		clear(e.clients)
	}
	c, err := egress.NewClient(egress.ClientConfig{Rules: rules, Dialer: e.dialer, RootCAs: e.rootCAs, Timeout: e.timeout})
	if err != nil {
		return nil, err
	}
	e.clients[rules] = c
	return c, nil
}

// CloseIdleConnections closes the idle connections of every egress client
// the Edge built.
func (e *Edge) CloseIdleConnections() {
	if e == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, c := range e.clients {
		c.CloseIdleConnections()
	}
}

// attach returns the egress client's post-decision hook that puts the
// credential of secret (bound at b) in header, after prefix, once the
// lease is seen to hold still.
func (e *Edge) attach(secret *custody.Secret, b custody.Binding, lease string, scope authz.LeaseScope, header, prefix string) func(http.Header) error {
	return func(h http.Header) error {
		// Opening can take a while (a runtime may refresh first): the
		// lease must still hold at the moment the credential goes on.
		if err := e.leases.Hold(lease, scope); err != nil {
			return err
		}
		attachErr := reveal.With(secret, func(tok []byte) error {
			// The header value is made once, as the string the
			// request carries (the transport writes strings).
			v := prefix + string(tok)
			if len(tok) == 0 || !httpguts.ValidHeaderFieldValue(v) {
				return checkfu.Refuse(CodeCredentialUnusable, "edge: the credential at %s is not a valid header value", b)
			}
			setCredential(h, header, v)
			return nil
		})
		if attachErr != nil {
			if _, ok := checkfu.CodeOf(attachErr); !ok || errors.Is(attachErr, custody.CodeSecretDestroyed) {
				attachErr = checkfu.Refuse(CodeCredentialUnusable, "edge: the credential at %s cannot be attached", b)
			}
		}
		return attachErr
	}
}

// setCredential sets header to v in h, replacing any value under its
// canonical name, as h.Set does; and Accept-Encoding to identity: the
// transport would otherwise ask for gzip and decode one layer itself,
// hiding how many codings the provider declared. Any coding left is
// then withheld, since the echo check cannot see inside it. The two
// values share one allocation, each capped so that an append to one
// cannot reach the other.
func setCredential(h http.Header, header, v string) {
	vals := make([]string, 2)
	vals[0], vals[1] = "identity", v
	h["Accept-Encoding"] = vals[0:1:1]
	h[http.CanonicalHeaderKey(header)] = vals[1:2:2]
}

// send is one exchange of req, which rules allowed as a, inside its client
// span; see exchange.
func (e *Edge) send(ctx context.Context, client *egress.Client, rules *egress.Rules, req *http.Request, a *egress.Allowed, b custody.Binding, lease string, scope authz.LeaseScope, status *int) (*Response, error) {
	ctx, span := telemetry.StartClient(ctx, e.tracer, "checkfu.edge/send")
	if span.IsRecording() {
		span.SetAttributes(telemetry.KeyServer.String(req.URL.Hostname()))
	}
	resp, err := e.exchange(ctx, client, req.URL.Host, tracedAllowed(ctx, req, a, rules), b, lease, scope, status)
	endSpan(span, *status, err)
	return resp, err
}

// endSpan ends the client span of an exchange that got status (0 for
// none) and err: the status, and err's refusal or upstream code, or
// "failed", never its text.
func endSpan(span trace.Span, status int, err error) {
	if span.IsRecording() && status != 0 {
		span.SetAttributes(telemetry.KeyStatus.Int(status))
	}
	code := ""
	if err != nil {
		code = "failed"
		if c, ok := checkfu.CodeOf(err); ok {
			code = string(c)
		} else if uc, ok := egress.UpstreamCodeOf(err); ok {
			code = string(uc)
		}
	}
	telemetry.End(span, code)
}

// tracedAllowed returns req, which rules allowed as a, carrying the W3C
// trace context of ctx's span, as rules allow it, when they allow its
// headers on req; and a itself otherwise (no span, or a Connection that
// did not list them). The traced request carries headers the pipeline
// never decided: rules decide it anew.
func tracedAllowed(ctx context.Context, req *http.Request, a *egress.Allowed, rules *egress.Rules) *egress.Allowed {
	if out := withTrace(ctx, req, rules); out != nil {
		if t, err := rules.Allow(out); err == nil {
			return &t
		}
	}
	return a
}

// withTrace returns a copy of req carrying the W3C trace context of ctx's
// span, undecided, or nil when there is no span or rules list no
// traceparent header.
func withTrace(ctx context.Context, req *http.Request, rules *egress.Rules) *http.Request {
	if !trace.SpanContextFromContext(ctx).IsValid() || !listsTraceparent(rules) {
		return nil
	}
	h := req.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(h))
	out := req.Clone(ctx)
	out.Header = h
	return out
}

// listsTraceparent reports whether a rule of rules lists the traceparent
// header: only then can the rules allow the trace context on a request.
func listsTraceparent(rules *egress.Rules) bool {
	if rules == nil {
		return false
	}
	for i := range rules.Len() {
		for _, h := range rules.Rule(i).Headers {
			if strings.EqualFold(h, "Traceparent") {
				return true
			}
		}
	}
	return false
}

// exchange opens the credential, has the egress client send a (which the
// client's own rules allowed, or which it decides again) and attach the
// credential after a last check that the lease still holds, and reads the
// response from host. It sets *status to the provider's status as soon as
// the provider has answered, even when the answer is then refused.
func (e *Edge) exchange(ctx context.Context, client *egress.Client, host string, a *egress.Allowed, b custody.Binding, lease string, scope authz.LeaseScope, status *int) (*Response, error) {
	secret, err := e.custodian.Open(ctx, b)
	if err != nil {
		return nil, err
	}
	defer secret.Destroy()
	hresp, err := client.Send(ctx, a, e.attach(secret, b, lease, scope, e.header, e.prefix))
	if err != nil {
		if re := (*egress.RedirectError)(nil); errors.As(err, &re) {
			*status = re.Status
		}
		return nil, withholdErrorEcho(secret, b, err)
	}
	defer hresp.Body.Close()
	*status = hresp.StatusCode
	body, err := readBody(hresp.Body, hresp.ContentLength, MaxResponseBytes)
	if err != nil {
		return nil, &egress.UpstreamError{Code: egress.CodeUpstreamFailed, Target: host, Err: errors.New("reading the response body failed")}
	}
	if len(body) > MaxResponseBytes {
		return nil, checkfu.Refuse(CodeResponseTooLarge, "edge: the response from %s is larger than %d bytes", host, MaxResponseBytes)
	}
	if err := refuseEcho(secret, b, hresp.Header, body); err != nil {
		return nil, err
	}
	if len(body) > 0 && encoded(hresp.Header) {
		// refuseEcho saw only compressed bytes; the caller would see
		// what they inflate to.
		return nil, checkfu.Refuse(CodeResponseEncoded, "edge: the response from %s has a content coding the edge cannot inspect for the credential; it is withheld", host)
	}
	if hresp.StatusCode == http.StatusUnauthorized {
		if rt, ok := e.custodian.(custody.IntegrationRuntime); ok {
			// Best effort: the next Open refreshes. The 401 itself is
			// the caller's answer.
			_ = rt.Invalidate(context.WithoutCancel(ctx), b)
		}
	}
	// The header is this response's own (net/http makes one per
	// response and keeps no reference to it): it is handed on, not
	// copied, once the cookie is gone.
	h := hresp.Header
	h.Del("Set-Cookie")
	return &Response{Status: hresp.StatusCode, Header: h, Body: body}, nil
}
