package egress

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/checkfu/checkfu"
)

// defaultClientTimeout bounds one exchange when ClientConfig.Timeout is
// zero.
const defaultClientTimeout = 60 * time.Second

// ClientConfig configures [NewClient]. It has no field that could turn off
// either property a Client is built for: there is no proxy, transport,
// redirect or dial hook to set.
type ClientConfig struct {
	// Rules decides every request. Required.
	Rules *Rules
	// Dialer dials the destination. Nil means the zero Dialer: the
	// system resolver, public addresses only. No Dialer can dial a
	// non-public address outside the test blocks of
	// [DialerConfig.TreatAsPublicForTesting].
	Dialer *Dialer
	// RootCAs verifies servers' certificates. Nil means the system roots.
	RootCAs *x509.CertPool
	// Timeout bounds one exchange, response body included. Zero means 60
	// seconds.
	Timeout time.Duration
}

// A Client makes the credentialed outbound requests of a Connection: the
// trusted custody edge's HTTP client. Whatever its configuration, a Client
//
//   - decides every request with its [Rules] before anything else happens
//     (a refused request causes no DNS lookup and no connection), or
//     sends one those same Rules allowed ([Client.Send]);
//   - sends exactly the canonical request that was decided: the host
//     matched is the host dialled is the Host sent;
//   - never uses a proxy (environment proxies included), and dials only
//     public addresses, through a [Dialer];
//   - never follows a redirect: a 301, 302, 303, 307 or 308, and any other
//     3xx that carries a Location, comes back as a refusal with code
//     [CodeRedirectRefused] whose [*RedirectError] says what the rules
//     would decide for the target. A 3xx without a Location other than
//     those five (a 304, say) is returned as a response.
//
// The fields that carry these properties are unexported and set only by
// [NewClient]; the zero Client refuses every request. A Client is safe for
// concurrent use.
type Client struct {
	rules   *Rules
	hc      *http.Client
	timeout time.Duration
	// dial is what the transport dials with; tests swap it for a
	// recording dialer.
	dial func(ctx context.Context, network, address string) (net.Conn, error)
}

// NewClient returns a Client for cfg. It refuses a missing or empty rule
// set with [CodeRulesInvalid].
func NewClient(cfg ClientConfig) (*Client, error) {
	if cfg.Rules == nil || cfg.Rules.Len() == 0 {
		return nil, checkfu.Refuse(CodeRulesInvalid, "egress: a client needs a Connection's rules")
	}
	d := cfg.Dialer
	if d == nil {
		d = &Dialer{}
	}
	c := &Client{rules: cfg.Rules, dial: d.DialContext, timeout: cfg.Timeout}
	if c.timeout <= 0 {
		c.timeout = defaultClientTimeout
	}
	transport := &http.Transport{
		Proxy:                 nil, // never a proxy, whatever the environment says
		DialContext:           func(ctx context.Context, n, a string) (net.Conn, error) { return c.dial(ctx, n, a) },
		TLSClientConfig:       &tls.Config{RootCAs: cfg.RootCAs, MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2:     true,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: c.timeout,
	}
	c.hc = &http.Client{
		Transport: transport,
		// Never follow: the response comes back to Do, which refuses it.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       c.timeout,
	}
	return c, nil
}

// Do decides req with the Client's rules and, when they allow it, sends
// its canonical form. attach, when not nil, is called with the outbound
// headers after the decision and only for an allowed https request (an
// allowed plain-http request with an attach hook is refused with
// [CodePlaintextCredential]): it is where the custody edge adds the
// credential. What attach adds is never seen by the rules, and never
// appears in an error Do returns. When attach returns an error, nothing is
// sent and Do returns that error as is; it must not carry the credential.
//
// req must carry an absolute URL (see [CanonicalRequest]); its body, if
// any, is sent as is and, as with http.Client.Do, always closed, also
// when the request is refused before it is sent. The error is a [*checkfu.Refusal] when policy
// refused (the request, its destination address, or a redirect in the
// response) and an [*UpstreamError] when the exchange failed. On a
// refusal no response is returned; otherwise the caller closes the
// response body.
func (c *Client) Do(req *http.Request, attach func(http.Header) error) (*http.Response, error) {
	if c == nil || c.hc == nil {
		closeBody(req)
		return nil, errZeroClient
	}
	var a Allowed
	if err := c.rules.allow(req, &a); err != nil {
		closeBody(req)
		return nil, err
	}
	return c.send(req.Context(), &a, attach)
}

// Send sends a, a request [Rules.Allow] allowed, under ctx, exactly as
// [Client.Do] sends a request its rules allow: attach, the https-only
// credential, redirects, errors and the closing of the body are Do's.
//
// Send does not decide a again when the Client's own rules allowed it
// (the [Rules] given to NewClient, holding the rules they held when they
// allowed it). It decides any other Allowed (one that other Rules allowed,
// or the zero Allowed) with the Client's rules first, as Do decides a
// request, and refuses what they refuse: Send never sends a request the
// Client's rules did not allow. A nil a is refused with
// [CodeRequestInvalid]. It panics if ctx is nil, as
// http.Request.WithContext does.
func (c *Client) Send(ctx context.Context, a *Allowed, attach func(http.Header) error) (*http.Response, error) {
	if a == nil {
		return nil, errNilAllowed
	}
	if c == nil || c.hc == nil {
		a.closeBody()
		return nil, errZeroClient
	}
	if a.by == nil || a.by != c.rules.set() {
		// Not allowed by these rules as they are now: decided here, as
		// Do decides. The Request is canonical (only Allow makes an
		// Allowed), so deciding it is what Do would decide.
		if _, err := c.rules.Decide(&a.req); err != nil {
			a.closeBody()
			return nil, err
		}
	}
	return c.send(ctx, a, attach)
}

var (
	errZeroClient = checkfu.Refuse(CodeRulesInvalid, "egress: the zero Client refuses every request; build one with NewClient")
	errNilAllowed = refuseRequest("egress: no request to send (a nil Allowed)")
)

// closeBody closes req's body, if any: Do owns it from the start.
func closeBody(req *http.Request) {
	if req != nil && req.Body != nil {
		req.Body.Close()
	}
}

// send sends a, which the Client's rules allowed, under ctx: what Do and
// Send do after the decision. It closes a's body when it does not send it.
func (c *Client) send(ctx context.Context, a *Allowed, attach func(http.Header) error) (*http.Response, error) {
	sent := false // once sent, the transport owns the body and closes it
	defer func() {
		if !sent {
			a.closeBody()
		}
	}()
	creq := &a.req
	if attach != nil && creq.Scheme != "https" {
		return nil, checkfu.Refuse(CodePlaintextCredential, "egress: a credential is attached only to https requests, and %s://%s is not one", creq.Scheme, creq.Authority())
	}
	u := creq.URL()
	out := (&http.Request{
		Method:        creq.Method,
		URL:           u,
		Host:          u.Host,
		Header:        creq.Header.Clone(),
		Body:          a.body,
		GetBody:       a.getBody,
		ContentLength: a.contentLength,
		Close:         a.close,
	}).WithContext(ctx)
	if out.Header == nil {
		out.Header = http.Header{}
	}
	if attach != nil {
		if err := attach(out.Header); err != nil {
			return nil, err
		}
	}
	sent = true
	resp, err := c.hc.Do(out)
	if err != nil {
		return nil, c.classify(creq.Authority(), err)
	}
	if isRedirect(resp) {
		io.CopyN(io.Discard, resp.Body, 4<<10) //nolint:errcheck // drained only to reuse the connection
		resp.Body.Close()
		return nil, c.redirectRefusal(creq, resp, secretsOf(out.Header, creq.Header))
	}
	return resp, nil
}

// isRedirect reports whether resp is refused as a redirect: a 301, 302,
// 303, 307 or 308 with or without a Location, and any other 3xx that
// carries one.
func isRedirect(resp *http.Response) bool {
	switch resp.StatusCode {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return resp.StatusCode/100 == 3 && resp.Header.Get("Location") != ""
}

// CloseIdleConnections closes the Client's idle connections.
func (c *Client) CloseIdleConnections() {
	if c != nil && c.hc != nil {
		c.hc.CloseIdleConnections()
	}
}

// classify turns a transport error into the refusal or the upstream
// failure inside it. The url.Error wrapper, which quotes the whole URL, is
// dropped: only "host:port" is reported.
func (c *Client) classify(target string, err error) error {
	var ref *checkfu.Refusal
	if errors.As(err, &ref) {
		return ref
	}
	var ue *UpstreamError
	if errors.As(err, &ue) {
		return ue
	}
	var uerr interface{ Unwrap() error }
	if errors.As(err, &uerr) {
		if inner := uerr.Unwrap(); inner != nil {
			err = inner
		}
	}
	return &UpstreamError{Code: CodeUpstreamFailed, Target: target, Err: err}
}

// A RedirectError is the detail of a [CodeRedirectRefused] refusal: what
// the destination asked for, and what the rules decide for the target
// after rechecking it. It never holds the Location's path, query or
// userinfo, nor anything the attach hook added.
type RedirectError struct {
	// Status is the redirect status code.
	Status int
	// Target is "scheme://host:port" of the Location, or "" when the
	// Location is missing, does not parse, or echoes an attached header.
	Target string
	// Decision is what the rules decide for the target with the
	// request's own headers: allowed (Decision.Rule names the rule) or
	// denied.
	Decision Decision
	// Refusal is the target's refusal when Decision denies it.
	Refusal error
}

// Error describes the redirect and the target's decision.
func (e *RedirectError) Error() string {
	t := e.Target
	if t == "" {
		t = "an unusable or withheld location"
	}
	if e.Decision.Allowed() {
		return fmt.Sprintf("redirect %d to %s: the target would be %s, but redirects are never followed", e.Status, t, e.Decision)
	}
	return fmt.Sprintf("redirect %d to %s: the target would be refused: %v", e.Status, t, e.Refusal)
}

// redirectRefusal rechecks the Location of resp against the rules, as the
// request that following it would make, and returns the refusal.
func (c *Client) redirectRefusal(creq *Request, resp *http.Response, secrets []string) error {
	re := &RedirectError{Status: resp.StatusCode}
	loc := resp.Header.Get("Location")
	unescaped, _ := url.PathUnescape(loc)
	withheld := checkfu.Refuse(CodeRequestInvalid, "egress: location withheld: it echoes an attached header")
	if echoes(loc, secrets) || echoes(unescaped, secrets) {
		loc = ""
		re.Refusal = withheld
	}
	if loc != "" {
		target, err := creq.URL().Parse(loc)
		if err != nil {
			re.Refusal = checkfu.Refuse(CodeRequestInvalid, "egress: location does not parse")
		} else {
			method := creq.Method
			if resp.StatusCode == http.StatusSeeOther || (resp.StatusCode <= http.StatusFound && method == http.MethodPost) {
				method = http.MethodGet
			}
			next, err := CanonicalRequest(&http.Request{Method: method, URL: target, Header: creq.Header})
			if err != nil {
				// The canonicaliser's message may quote the location's
				// path or query: keep only its code.
				code, _ := checkfu.CodeOf(err)
				re.Refusal = checkfu.Refuse(code, "egress: the location is not a request this package can send (userinfo, bad host, port, path or query)")
			} else if echoes(next.Host, secrets) {
				// Hosts are case- and width-folded, so a Location that
				// spells the credential differently can canonicalise
				// back into it.
				re.Refusal = withheld
			} else {
				re.Target = next.Scheme + "://" + next.Authority()
				re.Decision, re.Refusal = c.rules.Decide(&next)
			}
		}
	} else if re.Refusal == nil {
		re.Refusal = checkfu.Refuse(CodeRequestInvalid, "egress: redirect without a location")
	}
	return &checkfu.Refusal{
		Code:    CodeRedirectRefused,
		Message: fmt.Sprintf("egress: %s %s answered %d; redirects are never followed", creq.Method, creq.Authority(), resp.StatusCode),
		Err:     re,
	}
}

// echoes reports whether text holds one of secrets, ignoring case: a
// Location's host is case-folded before it is reported, so a credential
// echoed there in another case would come back in its own.
func echoes(text string, secrets []string) bool {
	lower := strings.ToLower(text)
	for _, s := range secrets {
		if strings.Contains(text, s) || strings.Contains(lower, strings.ToLower(s)) {
			return true
		}
	}
	return false
}

// secretsOf returns the values attach added to out beyond base, so that a
// Location echoing one can be withheld.
func secretsOf(out, base http.Header) []string {
	var s []string
	for k, vs := range out {
		for _, v := range vs {
			if len(v) >= 4 && !contains(base[k], v) {
				s = append(s, v)
				// Also the token after a scheme word ("Bearer x").
				if _, tok, ok := strings.Cut(v, " "); ok && len(tok) >= 4 {
					s = append(s, tok)
				}
			}
		}
	}
	return s
}
