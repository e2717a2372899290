package edge

import (
	"context"
	"errors"
	"io"
	"net/http"

	"golang.org/x/net/http/httpguts"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/internal/outbound"
	"github.com/checkfu/checkfu/custody/internal/reveal"
	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/internal/telemetry"
)

// A Stream is a model provider's answer as it arrives, handed to the
// reader [Edge.Stream] was given while the edge still holds the
// credential: the status, the headers (already screened for the
// credential, Set-Cookie dropped), the body unread, and the screen every
// byte of the body must pass before it reaches the caller.
type Stream struct {
	Status int
	Header http.Header
	Body   io.Reader
	// Screen refuses, with [CodeCredentialEchoed], bytes that carry the
	// credential in any form the edge looks for in an answer, or that
	// complete one begun in the bytes it passed before: it is given the
	// body in order, a piece at a time, and carries from one piece to
	// the next the tail of the text and the text an agent assembles
	// from the events' string values (a model's deltas). When a piece
	// passes, hold is how many of the bytes passed so far, at their
	// end, the caller must not write yet: those from the start of the
	// event (after a blank line) where the raw text, or a text an
	// agent assembles, ends with a prefix of at least [MinHeldPrefix]
	// bytes of a form (as sent, escapes not decoded). The next piece
	// tells: refused when it completes the form (the held bytes are
	// then never written), else a smaller hold. At the stream's end the
	// caller writes what is held (the form never completed). It never
	// holds bytes it let be written before. Not safe for concurrent
	// use.
	Screen func(p []byte) (hold int, err error)
}

// Stream makes one authorized model call (a registration of Protocol
// [authz.ModelAPI]): it opens the credential, attaches it in the
// dialect's key header in the egress client's hook once the lease is
// seen to hold (no proxy, public addresses only, no redirects), sends
// the request the pipeline built as the Connection's rules allowed it
// ([egress.Client.Send], which decides again only what other rules
// allowed), screens the answer's headers, and hands the answer to read
// as it arrives. The body is not
// bounded here: read bounds it (the model route bounds each event).
//
// A value the pipeline did not make, or made and has sent already, is
// refused with [CodeNotAuthorized]; any other protocol with
// [authz.CodeCapabilityMismatch]; an answer whose headers echo the
// credential with [CodeCredentialEchoed], and one in a content coding
// with [CodeResponseEncoded], before read sees it. Unlike [Edge.Send],
// the answer reaches the caller before the edge_call evidence is
// recorded (a stream is not held back); a failure to record is still
// returned. The trace context goes to the provider as with Send: only
// where the Connection's rules allow it.
func (e *Edge) Stream(ctx context.Context, a Authorized, read func(*Stream) error) error {
	if e == nil || e.leases == nil {
		return errZeroEdge
	}
	c, ok := outbound.Take(a)
	if !ok {
		ev := e.edgeCall(ctx, &outbound.Call{})
		_, err := e.record(ctx, &ev, nil, errNotAuthorized)
		return err
	}
	ev := e.edgeCall(ctx, c)
	err := e.tracedStream(ctx, c, &ev.Status, read)
	_, err = e.record(ctx, &ev, nil, err)
	return err
}

// tracedStream is streamCall inside its client span, which ends when
// read has returned: the span covers the whole stream.
func (e *Edge) tracedStream(ctx context.Context, c *outbound.Call, status *int, read func(*Stream) error) error {
	ctx, span := telemetry.StartClient(ctx, e.tracer, "checkfu.edge/stream")
	if span.IsRecording() && c.Request != nil && c.Request.URL != nil {
		span.SetAttributes(telemetry.KeyServer.String(c.Request.URL.Hostname()))
	}
	err := e.streamCall(ctx, c, status, read)
	endSpan(span, *status, err)
	return err
}

// streamCall sends c and hands its answer to read. It sets *status as
// soon as the provider has answered.
func (e *Edge) streamCall(ctx context.Context, c *outbound.Call, status *int, read func(*Stream) error) error {
	if c.Protocol != authz.ModelAPI || c.Request == nil || c.Allowed == nil {
		return checkfu.Refuse(authz.CodeCapabilityMismatch, "edge: capability %s is not a model registration", checkfu.Quote(c.Action.Capability))
	}
	header := http.CanonicalHeaderKey(c.KeyHeader)
	if header != "Authorization" && (!httpguts.ValidHeaderFieldName(header) || egress.HeaderDenied(header)) {
		return checkfu.Refuse(checkfu.CodeConfigInvalid, "edge: the model key header %s is not usable", checkfu.Quote(c.KeyHeader))
	}
	client, err := e.client(c.Rules)
	if err != nil {
		return err
	}
	secret, err := e.custodian.Open(ctx, c.Credential)
	if err != nil {
		return err
	}
	defer secret.Destroy()
	hresp, err := client.Send(ctx, tracedAllowed(ctx, c.Request, c.Allowed, c.Rules), e.attach(secret, c.Credential, c.Lease.ID, c.Scope, header, c.KeyPrefix))
	if err != nil {
		if re := (*egress.RedirectError)(nil); errors.As(err, &re) {
			*status = re.Status
		}
		return withholdErrorEcho(secret, c.Credential, err)
	}
	defer hresp.Body.Close()
	*status = hresp.StatusCode
	if err := refuseEcho(secret, c.Credential, hresp.Header, nil); err != nil {
		return err
	}
	if encoded(hresp.Header) {
		return checkfu.Refuse(CodeResponseEncoded, "edge: the response from %s has a content coding the edge cannot inspect for the credential; it is withheld", c.Request.URL.Host)
	}
	h := hresp.Header.Clone()
	h.Del("Set-Cookie")
	// The echo forms are made once for the whole stream, inside the
	// reveal callback, and zeroed when the reader is done: a stream's
	// events are many and small.
	return reveal.With(secret, func(tok []byte) error {
		list, buf := echoForms(tok)
		defer clear(buf) // forms[0] is tok itself, which reveal clears
		screen := newStreamScreen(list)
		defer screen.clear()
		return read(&Stream{
			Status: hresp.StatusCode, Header: h, Body: hresp.Body,
			Screen: func(p []byte) (int, error) {
				if screen.screen(p) {
					return 0, checkfu.Refuse(CodeCredentialEchoed, "edge: the provider's answer for %s echoes the credential; the stream is cut", c.Credential)
				}
				return int(screen.hold()), nil
			},
		})
	})
}
