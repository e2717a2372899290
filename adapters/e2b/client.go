package e2b

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters/internal/vendorkit"
	"github.com/checkfu/checkfu/admission"
	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/internal/strictjson"
)

// DefaultBaseURL is E2B's control plane (servers in spec/openapi.yml).
const DefaultBaseURL = "https://api.e2b.app"

// DefaultDomain is the base domain of sandbox traffic when the control
// plane names none.
const DefaultDomain = "e2b.app"

// envdPort is envd's port inside every sandbox.
const envdPort = "49983"

// maxBody bounds every JSON body read from E2B.
const maxBody = 1 << 20

// A Config configures a [Client]. Edge, Credential and Template are
// required; every other field has the default its comment gives.
type Config struct {
	// Edge sends control-plane requests with the API key attached.
	// Required.
	Edge Edge
	// Credential is the opaque handle Edge resolves to the API key.
	// Required. It is a name, never the key.
	Credential string
	// Template is the E2B template (templateID) sandboxes start from.
	// Required.
	Template string
	// BaseURL is the control plane; empty means [DefaultBaseURL]. It
	// must be https unless it is a loopback address.
	BaseURL string
	// Timeout is the sandbox's time to live; zero means 5 minutes.
	Timeout time.Duration
	// Envd returns the base URL of a sandbox's envd; nil means
	// https://49983-<sandboxID>.<domain>.
	Envd func(sandboxID, domain string) string
	// Data sends envd requests, which carry no plane credential (only
	// the sandbox's own envd token); nil means a client that waits at
	// most 30 s for an answer's headers and has no overall timeout
	// (process streams are long). New uses a copy that follows no
	// redirect.
	Data *http.Client
	// User is the sandbox user processes run as; empty means "user".
	User string
	// Label is the label of the evidence this client reports; the zero
	// Label is mock. Only a Runner talking to the real E2B may say
	// production.
	Label checkfu.Label
}

// A Client creates E2B sandboxes. It is safe for concurrent use.
type Client struct {
	cfg  Config
	base string
}

// New checks cfg and returns a Client. A missing Edge, Credential or
// Template, or a BaseURL that is not https (or loopback http), is
// refused with checkfu.CodeConfigInvalid.
func New(cfg Config) (*Client, error) {
	if cfg.Edge == nil || cfg.Credential == "" || cfg.Template == "" {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "e2b: a Config needs an Edge, a Credential handle and a Template")
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	if err := checkURL(cfg.BaseURL); err != nil {
		return nil, err
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Minute
	}
	if cfg.Timeout < time.Second || cfg.Timeout > 24*time.Hour {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "e2b: Timeout %s is outside 1s-24h", cfg.Timeout)
	}
	if cfg.Data == nil {
		cfg.Data = &http.Client{Transport: &http.Transport{ResponseHeaderTimeout: 30 * time.Second, ForceAttemptHTTP2: true}}
	}
	// envd runs in the sandbox, where the workload may answer for it: a
	// redirect would carry the envd token, and the Runner's request, to
	// any host it names (the Runner's own loopback included), so none is
	// followed. The caller's client is copied, not changed.
	data := *cfg.Data
	data.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	cfg.Data = &data
	if cfg.User == "" {
		cfg.User = "user"
	}
	if !cfg.Label.Valid() {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "e2b: Label is not mock, isolated or production")
	}
	return &Client{cfg: cfg, base: strings.TrimRight(cfg.BaseURL, "/")}, nil
}

// checkURL refuses a base URL that would send requests in the clear to
// anything but loopback.
func checkURL(s string) error { return vendorkit.CheckBaseURL("e2b", s) }

// A SandboxSpec is what the Runner asks of a new sandbox.
type SandboxSpec struct {
	// ID is the Runner's name for the instance; it is recorded in the
	// sandbox's metadata and in the evidence. Required.
	ID string
	// Policy is the workload's compiled network policy. Required.
	Policy *egress.CompiledPolicy
	// Plane are the destinations the plane's own traffic from inside
	// the sandbox needs. E2B flattens them into the workload's list.
	Plane []egress.HostPort
	// ProfileDigest is the admitted SandboxProfile version's digest,
	// recorded in the evidence.
	ProfileDigest string
}

// Create maps spec's policy onto E2B's network configuration
// ([MapPolicy]) and creates a secure sandbox from the template with
// POST /sandboxes. A policy E2B cannot express is refused before any
// request is sent.
func (c *Client) Create(ctx context.Context, spec SandboxSpec) (*Sandbox, error) {
	if spec.ID == "" {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "e2b: a SandboxSpec needs an ID")
	}
	netw, err := MapPolicy(spec.Policy, spec.Plane)
	if err != nil {
		return nil, err
	}
	body := newSandbox{
		TemplateID:          c.cfg.Template,
		Timeout:             int32(c.cfg.Timeout / time.Second),
		Secure:              true,
		AllowInternetAccess: netw.AllowInternetAccess,
		Metadata:            map[string]string{"checkfu.instance": spec.ID},
	}
	if len(netw.AllowOut) > 0 || len(netw.DenyOut) > 0 {
		body.Network = &networkConfig{AllowOut: netw.AllowOut, DenyOut: netw.DenyOut}
	}
	var got sandboxJSON
	if err := c.call(ctx, http.MethodPost, "/sandboxes", body, &got, http.StatusCreated); err != nil {
		return nil, err
	}
	// The ID is also a DNS label of envd's host name, so it may not
	// hold a dot either.
	if !vendorkit.PathSafeID(got.SandboxID, ".") {
		return nil, checkfu.Refuse(CodeControlPlaneRefused, "e2b: the control plane named sandbox %s", checkfu.Quote(got.SandboxID))
	}
	domain := DefaultDomain
	if got.Domain != nil && *got.Domain != "" {
		domain = *got.Domain
	}
	envdURL := "https://" + envdPort + "-" + got.SandboxID + "." + domain
	if c.cfg.Envd != nil {
		envdURL = c.cfg.Envd(got.SandboxID, domain)
	}
	err = checkURL(envdURL)
	if u, _ := url.Parse(envdURL); err == nil && c.cfg.Envd == nil && !vendorkit.PublicHost(u.Hostname()) {
		// The domain is the control plane's word: it may not send envd
		// traffic to the Runner's loopback or a private network.
		err = checkfu.Refuse(CodeControlPlaneRefused, "e2b: the control plane named domain %s, whose envd host is not public", checkfu.Quote(domain))
	}
	if err != nil {
		// The sandbox exists and would run until its Timeout: delete it
		// (its ID passed the check above), as Daytona's Create does when
		// the toolbox URL is refused.
		return nil, vendorkit.Discard(ctx, err, "e2b", got.SandboxID, func(ctx context.Context) error {
			return c.call(ctx, http.MethodDelete, "/sandboxes/"+url.PathEscape(got.SandboxID), nil, nil, http.StatusNoContent, http.StatusNotFound)
		})
	}
	token := got.EnvdAccessToken
	s := &Sandbox{
		c: c, id: spec.ID, sandboxID: got.SandboxID, envd: strings.TrimRight(envdURL, "/"),
		token: func() string { return token },
		evidence: Evidence{
			Label: c.cfg.Label, Instance: spec.ID, SandboxID: got.SandboxID,
			Provider: Identity().Provider, ProviderRevision: Identity().Revision, MaterializationRevision: MaterializationRevision,
			RootImage: c.cfg.Template, Platform: "linux/amd64", ProfileDigest: spec.ProfileDigest,
			NetworkMode: string(spec.Policy.Type()), Enforcement: Capability().Enforcement,
			Grade: checkfu.AdvisoryFilter, GradeReason: AdvisoryReason, Caveats: netw.Caveats,
		},
	}
	return s, nil
}

// newSandbox is NewSandbox in spec/openapi.yml, the members the adapter
// sets.
type newSandbox struct {
	TemplateID          string            `json:"templateID"`
	Timeout             int32             `json:"timeout"`
	Secure              bool              `json:"secure"`
	AllowInternetAccess bool              `json:"allow_internet_access"`
	Network             *networkConfig    `json:"network,omitempty"`
	Metadata            map[string]string `json:"metadata,omitempty"`
}

// networkConfig is SandboxNetworkConfig, the members the adapter sets.
type networkConfig struct {
	AllowOut []string `json:"allowOut,omitempty"`
	DenyOut  []string `json:"denyOut,omitempty"`
}

// sandboxJSON is the Sandbox schema, every member it documents.
type sandboxJSON struct {
	TemplateID         string  `json:"templateID"`
	SandboxID          string  `json:"sandboxID"`
	Alias              string  `json:"alias"`
	ClientID           string  `json:"clientID"`
	EnvdVersion        string  `json:"envdVersion"`
	EnvdAccessToken    string  `json:"envdAccessToken"`
	TrafficAccessToken *string `json:"trafficAccessToken"`
	Domain             *string `json:"domain"`
}

// call sends one control-plane request through the Edge and decodes a
// JSON answer with one of the statuses want into out (nil for none). A vendor's error
// body is never quoted: only its status is reported, so that nothing the
// vendor echoes (a header, a key) reaches an error.
func (c *Client) call(ctx context.Context, method, path string, in, out any, want ...int) error {
	body, err := vendorkit.JSONBody(in)
	if err != nil {
		return checkfu.Refuse(checkfu.CodeConfigInvalid, "e2b: cannot encode the request: %v", err)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return checkfu.Refuse(checkfu.CodeConfigInvalid, "e2b: cannot build %s %s", method, path)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	vc := vendorkit.Call{Vendor: "e2b", Code: CodeControlPlaneRefused, Method: method, Path: path}
	data, err := vc.Exchange(c.cfg.Edge, req, c.cfg.Credential, apiKeyHeader, "", maxBody, want...)
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	if err := strictjson.Unmarshal(data, out, strictjson.Options{MaxDepth: 8, MaxBytes: maxBody}); err != nil {
		return &checkfu.Refusal{Code: CodeControlPlaneRefused, Message: "e2b: " + method + " " + path + ": the answer is outside the published shape", Err: err}
	}
	return nil
}

// A Sandbox is one E2B sandbox: one instance, at most one live process.
type Sandbox struct {
	c         *Client
	id        string
	sandboxID string
	envd      string
	token     func() string // envd's access token for this sandbox; a func so fmt never prints it
	evidence  Evidence

	slot vendorkit.Slot[*Process] // the live process; destroyed
}

// ID returns the Runner's name for the sandbox.
func (s *Sandbox) ID() string { return s.id }

// SandboxID returns E2B's name for the sandbox.
func (s *Sandbox) SandboxID() string { return s.sandboxID }

// Destroy kills any live process and the sandbox (DELETE
// /sandboxes/{sandboxID}; a sandbox already gone, 404, counts as
// destroyed). Once it has succeeded, a later Destroy does nothing
// and returns nil; after one that failed, Destroy asks again.
func (s *Sandbox) Destroy(ctx context.Context) error {
	return s.slot.Destroy(ctx, func() error {
		return s.c.call(ctx, http.MethodDelete, "/sandboxes/"+url.PathEscape(s.sandboxID), nil, nil, http.StatusNoContent, http.StatusNotFound)
	})
}

// Evidence is what the adapter reports about a process's sandbox. Every
// field but Caveats comes from state the adapter set itself; E2B
// attests nothing back that the adapter could check.
type Evidence struct {
	// Label is the Config's label (mock for a fake).
	Label checkfu.Label `json:"label"`
	// Instance is the Runner's ID; SandboxID is E2B's.
	Instance  string `json:"instance"`
	SandboxID string `json:"sandbox_id"`
	// Provider, ProviderRevision and MaterializationRevision are
	// [Identity] and [MaterializationRevision].
	Provider                string `json:"provider"`
	ProviderRevision        string `json:"provider_revision"`
	MaterializationRevision string `json:"materialization_revision"`
	// RootImage is the template.
	RootImage     string `json:"root_image"`
	Platform      string `json:"platform"`
	ProfileDigest string `json:"profile_digest"`
	NetworkMode   string `json:"network_mode"`
	// Enforcement is [Capability]'s.
	Enforcement admission.Enforcement `json:"enforcement"`
	// Grade is advisory_filter, for GradeReason ([AdvisoryReason]).
	Grade       checkfu.Grade `json:"grade"`
	GradeReason string        `json:"grade_reason"`
	// Caveats are [Network.Caveats]: what E2B grants beyond the policy.
	Caveats []string `json:"caveats,omitempty"`
}
