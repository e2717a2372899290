package edge

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/internal/reveal"
	"github.com/checkfu/checkfu/egress"
)

// MaxResponseBytes is the largest response body the edge returns.
const MaxResponseBytes = 8 << 20

// A Connection is the trusted plane's record of one provider connection:
// the custody binding of its credential and the egress rules declared for
// it at authorization time.
type Connection struct {
	Credential custody.Binding
	Rules      *egress.Rules
}

// An Invocation is one credentialed tool call as the trusted plane hands
// it to the edge. Scope and ApprovalScope come from the plane's
// authenticated context; Call is the only part that came from the agent.
type Invocation struct {
	Connection    Connection
	Lease         string           // the lease to spend
	Scope         authz.LeaseScope // service, gateway and actor making the call
	Call          authz.ToolCall
	Approval      string // required for external_effect capabilities
	ApprovalScope string // the scope the approval must bind, e.g. a session id
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
	Registry  *authz.Registry   // required: the static capability registrations
	Leases    *authz.Leases     // required: every call spends a lease
	Custodian custody.Custodian // required: *Native or an IntegrationRuntime
	Approvals *authz.Approvals  // external_effect calls run only under an approval; nil refuses them

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
}

// An Edge compiles credentialed tool calls into outbound requests and
// makes them. For every call, in this order and with nothing skipped:
//
//  1. the tool call is resolved against its static registration, its
//     arguments validated against the tool's JSON Schema first
//     ([authz.Registry.Resolve]); the Connection's credential must be the one
//     registered;
//  2. the outbound request is built by the edge from the registration
//     (method, resource) and the canonical arguments, never from agent
//     supplied URLs or headers;
//  3. the Connection's egress rules decide it; a refused request is never
//     sent, spends no lease budget and never touches the credential;
//  4. an external_effect call without an approval is refused; then the
//     lease is spent ([authz.Leases.Use]) for the caller's scope;
//  5. an external_effect call runs under its action-bound approval,
//     revalidated immediately before the effect ([authz.Approvals.Carry]);
//  6. the Custodian opens the credential, and the egress client (no
//     proxy, public addresses only, no redirects; none of it can be
//     turned off) attaches it in its post-decision hook, once the lease
//     is seen to hold still (not revoked or expired while the credential
//     was opened), and sends.
//
// The caller gets a [*Response] or an error: a [*checkfu.Refusal] for
// every policy "no", an [*egress.UpstreamError] for a failed exchange. No
// error or response holds the credential. An Edge is safe for concurrent
// use; the zero Edge refuses everything.
type Edge struct {
	registry  *authz.Registry
	leases    *authz.Leases
	custodian custody.Custodian
	approvals *authz.Approvals
	dialer    *egress.Dialer
	rootCAs   *x509.CertPool
	timeout   time.Duration
	header    string
	prefix    string
	evidence  authz.EvidenceSink
	label     checkfu.Label
	now       func() time.Time

	mu      sync.Mutex
	clients map[*egress.Rules]*egress.Client // guarded by mu
}

// NewEdge returns an Edge for cfg. A missing registry, lease book or
// custodian, an invalid label or an unusable credential header is refused
// with [checkfu.CodeConfigInvalid].
func NewEdge(cfg EdgeConfig) (*Edge, error) {
	if cfg.Registry == nil || cfg.Leases == nil || cfg.Custodian == nil {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "edge: NewEdge needs a Registry, Leases and a Custodian")
	}
	e := &Edge{
		registry: cfg.Registry, leases: cfg.Leases, custodian: cfg.Custodian, approvals: cfg.Approvals,
		dialer: cfg.Dialer, rootCAs: cfg.RootCAs, timeout: cfg.Timeout,
		header: cfg.CredentialHeader, prefix: cfg.CredentialPrefix,
		evidence: cfg.Evidence, label: cfg.Label, now: cfg.Now,
		clients: map[*egress.Rules]*egress.Client{},
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

var errZeroEdge = checkfu.Refuse(authz.CodeCapabilityUnknown, "edge: the zero Edge refuses every call; build one with NewEdge")

// Call compiles inv into an outbound request and, if every check passes,
// makes it with the credential attached at the outbound edge. It is the
// whole path for a caller without a gateway: it resolves the call, checks
// the lease and the approval in the order the type documentation gives,
// and sends through [Edge.Send]'s steps. The gateway orders those checks
// itself and calls Send. When the Edge has an evidence sink, the call's
// evidence is recorded before Call returns; if recording fails, the
// response is withheld and the error includes an [*authz.EvidenceError]
// (the provider may have acted).
func (e *Edge) Call(ctx context.Context, inv Invocation) (*Response, error) {
	if e == nil || e.registry == nil {
		return nil, errZeroEdge
	}
	rc, _ := checkfu.RequestContextFrom(ctx)
	ev := authz.Evidence{Kind: authz.EvidenceEdgeCall, Request: rc, Label: e.label, Actor: inv.Scope.Actor, Approval: inv.Approval, Scope: inv.ApprovalScope}
	resp, err := e.call(ctx, inv, &ev)
	return e.record(ctx, &ev, resp, err)
}

// An Outbound is one call that the caller (the gateway) has already
// authorized: the Connection it goes through, the canonical Action
// resolved from its registration, and the lease and scope it runs under.
// The edge checks again only what it needs to attach the credential: that
// the action is the registered one for this credential, that the
// Connection's rules allow the request, and, as the credential goes on,
// that the lease still holds.
type Outbound struct {
	Connection Connection
	Action     authz.Action
	Lease      string
	Scope      authz.LeaseScope
}

// Send makes one authorized call: it builds the request from out.Action
// alone, lets the Connection's egress rules decide it (a refused request
// is never sent and never opens the credential), opens the credential,
// attaches it in the egress client's hook once the lease is seen to hold
// (no proxy, public addresses only, no redirects), sends, and screens the
// answer (echoes of the credential, content codings it cannot read, more
// than [MaxResponseBytes]). It spends no lease budget and runs no approval:
// the caller has done both, in its own order. An action that is not the
// registration of its capability with out.Connection's credential is
// refused with [authz.CodeCapabilityMismatch] before anything else. Evidence
// is recorded as for [Edge.Call].
func (e *Edge) Send(ctx context.Context, out Outbound) (*Response, error) {
	if e == nil || e.registry == nil {
		return nil, errZeroEdge
	}
	ev := e.edgeCall(ctx, out)
	resp, err := e.sendOutbound(ctx, out, &ev)
	return e.record(ctx, &ev, resp, err)
}

// edgeCall returns the edge_call evidence of out, carrying the request
// context ctx holds; [Edge.Send] and [Edge.Remote] complete it.
func (e *Edge) edgeCall(ctx context.Context, out Outbound) authz.Evidence {
	rc, _ := checkfu.RequestContextFrom(ctx)
	a := out.Action
	return authz.Evidence{Kind: authz.EvidenceEdgeCall, Request: rc, Label: e.label, Actor: out.Scope.Actor, Grant: out.Lease,
		Capability: a.Capability, Action: a.Digest(), Effect: a.Effect}
}

// registered returns the registration out.Action is: the registration of
// its capability, with the same operation, resource and effect, for
// out.Connection's credential; anything else is refused with
// [authz.CodeCapabilityMismatch]. The caller checks the protocol.
func (e *Edge) registered(out Outbound) (authz.Registration, error) {
	a := out.Action
	reg, ok := e.registry.Lookup(a.Capability)
	if !ok || reg.Operation != a.Operation || reg.Resource != a.Resource || reg.Effect != a.Effect || reg.Credential != out.Connection.Credential {
		return authz.Registration{}, checkfu.Refuse(authz.CodeCapabilityMismatch, "edge: action for %s is not its registration with this credential", checkfu.Quote(a.Capability))
	}
	return reg, nil
}

func (e *Edge) sendOutbound(ctx context.Context, out Outbound, ev *authz.Evidence) (*Response, error) {
	a := out.Action
	reg, err := e.registered(out)
	if err != nil {
		return nil, err
	}
	if reg.Protocol != authz.HTTPS {
		return nil, errRemoteProtocol(a.Capability)
	}
	ev.Tool = reg.Tool.Name
	req, client, err := e.prepare(ctx, out.Connection, a)
	if err != nil {
		return nil, err
	}
	return e.send(ctx, client, req, out.Connection.Credential, out.Lease, out.Scope, &ev.Status)
}

// record completes ev from the call's outcome and records it when the
// Edge has a sink; a failed record withholds the response.
func (e *Edge) record(ctx context.Context, ev *authz.Evidence, resp *Response, err error) (*Response, error) {
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
		return nil, errors.Join(err, &authz.EvidenceError{Kind: authz.EvidenceEdgeCall, Err: rerr})
	}
	return resp, err
}

// CheckRules reports whether c's egress rules allow the request the edge
// builds from a (its method, its URL with the query a bodiless
// operation's arguments make, its headers), as the refusal [Edge.Send]
// would return for it, or nil. It is pure: nothing is sent, no
// credential is opened and no lease is read. The gateway calls it before
// it spends a lease, so that a call the rules refuse costs no budget;
// Send decides again, with the same code, when it sends.
func (c Connection) CheckRules(a authz.Action) error {
	_, err := c.request(context.Background(), a)
	return err
}

// request builds the outbound request from a alone and lets c's egress
// rules decide it (no rules refuse everything). Nothing is sent and the
// credential is not touched.
func (c Connection) request(ctx context.Context, a authz.Action) (*http.Request, error) {
	req, err := buildRequest(ctx, a)
	if err != nil {
		return nil, err
	}
	if err := decide(c.Rules, req); err != nil {
		return nil, err
	}
	return req, nil
}

// decide lets rules decide req before anything is sent or opened (no
// rules refuse everything); the egress client decides again as it sends.
func decide(rules *egress.Rules, req *http.Request) error {
	creq, err := egress.CanonicalRequest(req)
	if err != nil {
		return err
	}
	_, err = rules.Decide(&creq)
	return err
}

// prepare builds the outbound request with [Connection.request] and the
// egress client for the Connection's rules.
func (e *Edge) prepare(ctx context.Context, conn Connection, action authz.Action) (*http.Request, *egress.Client, error) {
	req, err := conn.request(ctx, action)
	if err != nil {
		return nil, nil, err
	}
	client, err := e.client(conn.Rules)
	if err != nil {
		return nil, nil, err
	}
	return req, client, nil
}

// call runs the steps of Call, filling ev as facts become known.
func (e *Edge) call(ctx context.Context, inv Invocation, ev *authz.Evidence) (*Response, error) {
	action, err := e.registry.Resolve(inv.Call, inv.Connection.Credential)
	if err != nil {
		return nil, err
	}
	ev.Capability, ev.Tool, ev.Action, ev.Effect = action.Capability, inv.Call.Tool, action.Digest(), action.Effect
	if reg, _ := e.registry.Lookup(action.Capability); reg.Protocol != authz.HTTPS {
		return nil, errRemoteProtocol(action.Capability)
	}
	req, client, err := e.prepare(ctx, inv.Connection, action)
	if err != nil {
		return nil, err
	}
	external := action.Effect != authz.ReadOnly
	if external && (e.approvals == nil || inv.Approval == "") {
		return nil, checkfu.Refuse(authz.CodeApprovalRequired, "edge: capability %s has an external effect and runs only under an approval", checkfu.Quote(action.Capability))
	}
	lease, err := e.leases.Use(inv.Lease, authz.LeaseUse{Scope: inv.Scope, Capability: action.Capability})
	if err != nil {
		return nil, err
	}
	ev.Grant, ev.Provider = lease.ID, lease.Provider
	var resp *Response
	send := func(ctx context.Context) error {
		var err error
		resp, err = e.send(ctx, client, req, inv.Connection.Credential, lease.ID, inv.Scope, &ev.Status)
		return err
	}
	if external {
		bound := authz.ApprovalBinding{Actor: inv.Scope.Actor, Grant: lease.ID, Action: action.Digest(), Effect: action.Effect, Scope: inv.ApprovalScope}
		err = e.approvals.Carry(ctx, inv.Approval, bound, send)
	} else {
		err = send(ctx)
	}
	if err != nil {
		return nil, err
	}
	return resp, nil
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

// buildRequest builds the outbound request from the resolved action only.
func buildRequest(ctx context.Context, a authz.Action) (*http.Request, error) {
	target := a.Resource
	var body io.Reader
	if bodiless(a.Operation) {
		q, err := queryOf(a.Body)
		if err != nil {
			return nil, err
		}
		if q != "" {
			target += "?" + q
		}
	} else {
		body = bytes.NewReader(a.Body)
	}
	req, err := http.NewRequestWithContext(ctx, a.Operation, target, body)
	if err != nil {
		return nil, checkfu.Refuse(authz.CodeCapabilityMismatch, "edge: capability %s: the registered resource does not form a request", checkfu.Quote(a.Capability))
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// queryOf turns canonical object arguments of scalars into a query string
// with sorted keys.
func queryOf(body []byte) (string, error) {
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return "", checkfu.Refuse(authz.CodeArgumentsInvalid, "edge: query arguments are not an object")
	}
	v := url.Values{}
	for k, x := range m {
		switch x := x.(type) {
		case string:
			v.Set(k, x)
		case json.Number:
			v.Set(k, x.String())
		case bool:
			if x {
				v.Set(k, "true")
			} else {
				v.Set(k, "false")
			}
		default:
			return "", checkfu.Refuse(authz.CodeArgumentsInvalid, "edge: query argument %s is not a scalar", checkfu.Quote(k))
		}
	}
	return v.Encode(), nil
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

// send opens the credential, lets the egress client attach it after its
// own rule decision and a last check that the lease still holds, and reads
// the response. It sets *status to the provider's status as soon as the
// provider has answered, even when the answer is then refused.
func (e *Edge) send(ctx context.Context, client *egress.Client, req *http.Request, b custody.Binding, lease string, scope authz.LeaseScope, status *int) (*Response, error) {
	secret, err := e.custodian.Open(ctx, b)
	if err != nil {
		return nil, err
	}
	defer secret.Destroy()
	hresp, err := client.Do(req.WithContext(ctx), func(h http.Header) error {
		// Opening can take a while (a runtime may refresh first): the
		// lease must still hold at the moment the credential goes on.
		if err := e.leases.Hold(lease, scope); err != nil {
			return err
		}
		attachErr := reveal.With(secret, func(tok []byte) error {
			v := make([]byte, 0, len(e.prefix)+len(tok))
			v = append(append(v, e.prefix...), tok...)
			defer clear(v)
			if len(tok) == 0 || !httpguts.ValidHeaderFieldValue(string(v)) {
				return checkfu.Refuse(CodeCredentialUnusable, "edge: the credential at %s is not a valid header value", b)
			}
			// Ask for the body as is: the transport would otherwise ask
			// for gzip and decode one layer itself, hiding how many
			// codings the provider declared. Any coding left is then
			// withheld below, since the echo check cannot see inside it.
			h.Set("Accept-Encoding", "identity")
			h.Set(e.header, string(v))
			return nil
		})
		if attachErr != nil {
			if _, ok := checkfu.CodeOf(attachErr); !ok || errors.Is(attachErr, custody.CodeSecretDestroyed) {
				attachErr = checkfu.Refuse(CodeCredentialUnusable, "edge: the credential at %s cannot be attached", b)
			}
		}
		return attachErr
	})
	if err != nil {
		if re := (*egress.RedirectError)(nil); errors.As(err, &re) {
			*status = re.Status
		}
		return nil, withholdErrorEcho(secret, b, err)
	}
	defer hresp.Body.Close()
	*status = hresp.StatusCode
	body, err := io.ReadAll(io.LimitReader(hresp.Body, MaxResponseBytes+1))
	if err != nil {
		return nil, &egress.UpstreamError{Code: egress.CodeUpstreamFailed, Target: req.URL.Host, Err: errors.New("reading the response body failed")}
	}
	if len(body) > MaxResponseBytes {
		return nil, checkfu.Refuse(CodeResponseTooLarge, "edge: the response from %s is larger than %d bytes", req.URL.Host, MaxResponseBytes)
	}
	if err := refuseEcho(secret, b, hresp.Header, body); err != nil {
		return nil, err
	}
	if len(body) > 0 && encoded(hresp.Header) {
		// refuseEcho saw only compressed bytes; the caller would see
		// what they inflate to.
		return nil, checkfu.Refuse(CodeResponseEncoded, "edge: the response from %s has a content coding the edge cannot inspect for the credential; it is withheld", req.URL.Host)
	}
	if hresp.StatusCode == http.StatusUnauthorized {
		if rt, ok := e.custodian.(custody.IntegrationRuntime); ok {
			// Best effort: the next Open refreshes. The 401 itself is
			// the caller's answer.
			_ = rt.Invalidate(context.WithoutCancel(ctx), b)
		}
	}
	h := hresp.Header.Clone()
	h.Del("Set-Cookie")
	return &Response{Status: hresp.StatusCode, Header: h, Body: body}, nil
}

// bodiless reports whether op sends its arguments in the query rather
// than a body: the rule authz applies when it validates a registration.
func bodiless(op string) bool { return op == "GET" || op == "HEAD" || op == "DELETE" }
