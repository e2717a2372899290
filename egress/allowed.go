package egress

import (
	"io"
	"net/http"
)

// An Allowed is a request that [Rules.Allow] allowed: the canonical
// [Request] that was decided, which rules decided it, and the body of the
// request it was made from. Only Allow makes one. Its fields are
// unexported, so what was decided cannot be changed afterwards, and the
// Allowed shares nothing with the request it was made from but the body:
// changing that request's method, URL, Host or headers changes nothing
// [Client.Send] sends.
//
// An Allowed lets a caller decide a request once, before it spends
// anything on it, and have a [Client] holding the same Rules send it
// without canonicalising and deciding it again. Like the request it was
// made from, it is sent once: its body is read and closed by the first
// Send.
//
// The zero Allowed is not a request: Send decides it, and refuses it.
type Allowed struct {
	// by identifies the rules that allowed req ([Rules.set]); nil for
	// the zero Allowed.
	by  *rule
	req Request
	// The body of the request Allow was given, as http.Request holds it.
	body          io.ReadCloser
	getBody       func() (io.ReadCloser, error)
	contentLength int64
	close         bool
}

// Allow decides req as [CanonicalRequest] and [Rules.Decide] do and, when
// rs allows it, returns it as an [Allowed]: its canonical form, and req's
// body (Body, GetBody, ContentLength and Close), which the Allowed takes
// over (a copy of an Allowed is the same Allowed, body included). req's context is not kept: [Client.Send] takes the context to send
// under. The error is CanonicalRequest's or Decide's, and on refusal req
// is left as it was (its body is neither read nor closed). Like Decide,
// Allow does no I/O; a nil or zero Rules allows nothing.
func (rs *Rules) Allow(req *http.Request) (Allowed, error) {
	var a Allowed
	if err := rs.allow(req, &a); err != nil {
		return Allowed{}, err
	}
	return a, nil
}

// allow fills a with req when rs allows it: Allow, and Client.Do's
// decision.
func (rs *Rules) allow(req *http.Request, a *Allowed) error {
	creq, err := CanonicalRequest(req)
	if err != nil {
		return err
	}
	if _, err := rs.Decide(&creq); err != nil {
		return err
	}
	*a = Allowed{by: rs.set(), req: creq, body: req.Body, getBody: req.GetBody, contentLength: req.ContentLength, close: req.Close}
	return nil
}

// set returns what identifies the rules rs holds, for [Client.Send] to
// know an Allowed they allowed: the address of the first rule. NewRules
// allocates the rules of every Rules anew and nothing writes them after,
// and every way to change a Rules (UnmarshalJSON, or assigning another
// Rules to it) replaces them whole, so two Rules with the same set hold
// the same rules and decide alike. It is nil for a Rules with no rules,
// which allow nothing.
func (rs *Rules) set() *rule {
	if rs == nil || len(rs.rules) == 0 {
		return nil
	}
	return &rs.rules[0]
}

// Request returns a copy of the canonical request a allows. Changing the
// copy (its Header included) does not change a.
func (a *Allowed) Request() Request {
	r := a.req
	r.Header = r.Header.Clone()
	return r
}

// closeBody closes the body a holds, if any.
func (a *Allowed) closeBody() {
	if a.body != nil {
		a.body.Close()
	}
}
