package gateway

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/internal/strictjson"
)

// An Authenticator resolves the server-owned token an application server
// presents to the plane into the request context it stands for. It is the
// one place a RequestContext is established: every later hop takes the
// context from the channel the token opened. An implementation must
// refuse, with a *checkfu.Refusal, any token it did not issue, and must
// return only valid contexts.
type Authenticator interface {
	Authenticate(ctx context.Context, token string) (checkfu.RequestContext, error)
}

// HMACTokens is the reference Authenticator: tokens are the request
// context and an expiry, MACed with HMAC-SHA-256 under a key the plane and
// the application server share. A token is
//
//	"cft1." base64url(payload) "." base64url(mac)
//
// where payload is strict JSON {"context":{...},"expires":UNIX} and mac is
// HMAC-SHA-256(key, "checkfu/gateway/token/v1\x00" || payload). It is safe
// for concurrent use.
type HMACTokens struct {
	key []byte
	now func() time.Time
}

var _ Authenticator = (*HMACTokens)(nil)

// MinTokenKey is the shortest HMAC key NewHMACTokens accepts, in bytes.
const MinTokenKey = 32

// MaxToken is the longest token Authenticate reads, in bytes.
const MaxToken = 4096

const tokenPrefix = "cft1."

var tokenDomain = []byte("checkfu/gateway/token/v1\x00")

// NewHMACTokens returns the Authenticator for key (at least [MinTokenKey]
// bytes; copied), with now as its clock (nil means time.Now). A short key
// is refused with [checkfu.CodeConfigInvalid].
func NewHMACTokens(key []byte, now func() time.Time) (*HMACTokens, error) {
	if len(key) < MinTokenKey {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "gateway: an HMAC token key is at least %d bytes", MinTokenKey)
	}
	if now == nil {
		now = time.Now
	}
	return &HMACTokens{key: append([]byte(nil), key...), now: now}, nil
}

type tokenContext struct {
	Actor     string `json:"actor"`
	Role      string `json:"role,omitempty"`
	Tenant    string `json:"tenant"`
	Workspace string `json:"workspace"`
	Project   string `json:"project,omitempty"`
	Session   string `json:"session"`
	Request   string `json:"request"`
	Run       string `json:"run,omitempty"`
	Release   string `json:"release"`
}

type tokenPayload struct {
	Context tokenContext `json:"context"`
	Expires int64        `json:"expires"`
}

// Issue returns a token for rc that expires after ttl. It is what the
// application server does; the plane only authenticates.
func (h *HMACTokens) Issue(rc checkfu.RequestContext, ttl time.Duration) (string, error) {
	if err := rc.Validate(); err != nil {
		return "", err
	}
	if ttl <= 0 {
		return "", checkfu.Refuse(checkfu.CodeConfigInvalid, "gateway: a token lifetime is positive")
	}
	p, err := json.Marshal(tokenPayload{Context: tokenContext(rc), Expires: h.now().Add(ttl).Unix()})
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	return tokenPrefix + enc.EncodeToString(p) + "." + enc.EncodeToString(h.mac(p)), nil
}

func (h *HMACTokens) mac(payload []byte) []byte {
	m := hmac.New(sha256.New, h.key)
	m.Write(tokenDomain)
	m.Write(payload)
	return m.Sum(nil)
}

var errToken = checkfu.Refuse(CodeTokenInvalid, "gateway: the token is not one this plane issued")

// Authenticate implements Authenticator. The MAC is checked, in constant
// time, before the payload is parsed; the payload is then strict JSON
// holding a valid request context and an expiry after now. Every refusal
// but expiry is the same [CodeTokenInvalid], and none quotes the token.
func (h *HMACTokens) Authenticate(_ context.Context, token string) (checkfu.RequestContext, error) {
	if h == nil || len(h.key) == 0 || len(token) > MaxToken || !strings.HasPrefix(token, tokenPrefix) {
		return checkfu.RequestContext{}, errToken
	}
	body, sig, ok := strings.Cut(token[len(tokenPrefix):], ".")
	if !ok {
		return checkfu.RequestContext{}, errToken
	}
	enc := base64.RawURLEncoding.Strict()
	p, err1 := enc.DecodeString(body)
	mac, err2 := enc.DecodeString(sig)
	if err1 != nil || err2 != nil || !hmac.Equal(mac, h.mac(p)) {
		return checkfu.RequestContext{}, errToken
	}
	var tp tokenPayload
	if err := strictjson.Unmarshal(p, &tp, strictjson.Options{MaxDepth: 3, MaxBytes: MaxToken}); err != nil {
		return checkfu.RequestContext{}, errToken
	}
	rc := checkfu.RequestContext(tp.Context)
	if rc.Validate() != nil {
		return checkfu.RequestContext{}, errToken
	}
	if !h.now().Before(time.Unix(tp.Expires, 0)) {
		return checkfu.RequestContext{}, checkfu.Refuse(CodeTokenExpired, "gateway: the token has expired")
	}
	return rc, nil
}
