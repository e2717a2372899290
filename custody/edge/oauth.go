package edge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/internal/reveal"
	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/internal/strictjson"
)

// OAuthRefresher is the reference [Refresher]: the OAuth 2.0 refresh-token
// grant (RFC 6749 section 6), sent through an egress client. The client's
// rules must allow POST to TokenURL with the Content-Type header; like
// every credentialed request, the exchange is decided before it is sent,
// never follows a redirect and dials only public addresses.
//
// TokenURL must be https: a refresh token is a credential, and Refresh
// refuses to send one in clear ([egress.CodePlaintextCredential]) before
// it reads the token, whatever the rules allow.
//
// The refresh token is written into the request body inside the Secret's
// reveal callback, percent-encoded byte by byte straight into the body
// buffer, and the buffer is zeroed when the exchange returns.
// The tokens in the response are decoded by encoding/json, so transient
// copies live in the Go heap until collected; a deployment that needs
// more should use a Refresher built on its own decoder.
type OAuthRefresher struct {
	Client   *egress.Client   // required
	TokenURL string           // required: the provider's token endpoint
	ClientID string           // sent as client_id when not empty
	Now      func() time.Time // the clock for expires_in; nil means time.Now
}

var _ Refresher = (*OAuthRefresher)(nil)

// maxTokenResponse bounds a token endpoint's answer.
const maxTokenResponse = 64 << 10

// Refresh trades refreshToken for an access token.
func (o *OAuthRefresher) Refresh(ctx context.Context, b custody.Binding, refreshToken *custody.Secret) (access, rotated *custody.Secret, expiresAt time.Time, err error) {
	if o == nil || o.Client == nil || o.TokenURL == "" {
		return nil, nil, time.Time{}, checkfu.Refuse(checkfu.CodeConfigInvalid, "edge: OAuthRefresher needs a Client and a TokenURL")
	}
	u, err := url.Parse(o.TokenURL)
	if err != nil || u.Host == "" {
		return nil, nil, time.Time{}, checkfu.Refuse(checkfu.CodeConfigInvalid, "edge: OAuthRefresher.TokenURL is not an absolute URL")
	}
	if u.Scheme != "https" {
		return nil, nil, time.Time{}, checkfu.Refuse(egress.CodePlaintextCredential, "edge: the token endpoint %s://%s is not https; a refresh token is never sent in clear", u.Scheme, u.Host)
	}
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	var body []byte
	err = reveal.With(refreshToken, func(rt []byte) error {
		v := url.Values{"grant_type": {"refresh_token"}}
		if o.ClientID != "" {
			v.Set("client_id", o.ClientID)
		}
		body = formBody(v.Encode()+"&refresh_token=", rt)
		return nil
	})
	defer clear(body)
	if err != nil {
		return nil, nil, time.Time{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, nil, time.Time{}, fmt.Errorf("token URL does not form a request")
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := o.Client.Do(req, nil)
	if err != nil {
		// A malformed answer can quote the request body back into the
		// transport's error text.
		return nil, nil, time.Time{}, withholdErrorEcho(refreshToken, b, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxTokenResponse))
	defer clear(raw)
	if err != nil {
		return nil, nil, time.Time{}, errors.New("reading the token response failed")
	}
	if resp.StatusCode != http.StatusOK {
		return nil, nil, time.Time{}, fmt.Errorf("the token endpoint answered %d", resp.StatusCode)
	}
	tr, err := parseTokenResponse(raw)
	if err != nil {
		return nil, nil, time.Time{}, errors.New("the token response is not the expected JSON")
	}
	if tr.AccessToken == "" || tr.ExpiresIn <= 0 {
		return nil, nil, time.Time{}, errors.New("the token response lacks access_token or a positive expires_in")
	}
	if tr.RefreshToken != "" {
		rotated = custody.NewSecret([]byte(tr.RefreshToken))
	}
	return custody.NewSecret([]byte(tr.AccessToken)), rotated, now().Add(time.Duration(tr.ExpiresIn) * time.Second), nil
}

// formBody returns prefix followed by rt percent-encoded for a form value,
// built in one buffer allocated for the longest encoding (three bytes for
// each byte of rt): an append that outgrew it would leave a copy of rt in
// the old array, which nothing zeroes.
func formBody(prefix string, rt []byte) []byte {
	body := make([]byte, 0, len(prefix)+3*len(rt))
	return appendFormEscaped(append(body, prefix...), rt)
}

// appendFormEscaped appends p to dst percent-encoded for a form value
// (what url.QueryEscape does), without making a string of p: a string's
// bytes cannot be zeroed.
func appendFormEscaped(dst, p []byte) []byte {
	const hexDigits = "0123456789ABCDEF"
	for _, c := range p {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_', c == '.', c == '~':
			dst = append(dst, c)
		case c == ' ':
			dst = append(dst, '+')
		default:
			dst = append(dst, '%', hexDigits[c>>4], hexDigits[c&15])
		}
	}
	return dst
}

// tokenResponse is the part of an RFC 6749 token response the refresher
// reads.
type tokenResponse struct {
	AccessToken  string
	TokenType    string
	ExpiresIn    int64
	RefreshToken string
}

// parseTokenResponse decodes a token response with internal/strictjson:
// exact-case member names and no duplicates (so no second access_token
// can hide behind the first, and no "ACCESS_TOKEN" stands in for it),
// valid UTF-8, nothing after the object. Members it does not read (scope,
// id_token, ...) are allowed, as RFC 6749 allows them; the members it
// reads must have their JSON types.
func parseTokenResponse(raw []byte) (tokenResponse, error) {
	v, err := strictjson.Parse(raw, strictjson.Options{MaxDepth: 16, MaxBytes: maxTokenResponse})
	if err != nil {
		return tokenResponse{}, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return tokenResponse{}, errors.New("not an object")
	}
	var tr tokenResponse
	str := func(name string, dst *string) error {
		x, present := m[name]
		if !present || x == nil {
			return nil
		}
		s, ok := x.(string)
		if !ok {
			return fmt.Errorf("%s is not a string", name)
		}
		*dst = s
		return nil
	}
	if err := errors.Join(str("access_token", &tr.AccessToken), str("token_type", &tr.TokenType), str("refresh_token", &tr.RefreshToken)); err != nil {
		return tokenResponse{}, err
	}
	if x, present := m["expires_in"]; present && x != nil {
		n, ok := x.(json.Number)
		if !ok {
			return tokenResponse{}, errors.New("expires_in is not a number")
		}
		if tr.ExpiresIn, err = n.Int64(); err != nil {
			return tokenResponse{}, errors.New("expires_in is not an integer")
		}
	}
	return tr, nil
}
