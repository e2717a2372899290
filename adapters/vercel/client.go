package vercel

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters/internal/vendorkit"
	"github.com/checkfu/checkfu/admission"
	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/internal/strictjson"
)

// DefaultBaseURL is Vercel's API.
const DefaultBaseURL = "https://api.vercel.com"

const maxBody = 1 << 20

var jsonOpts = strictjson.Options{MaxDepth: 16, MaxBytes: maxBody}

// A Config configures a [Client]. Edge, Credential, TeamID and ProjectID
// are required.
type Config struct {
	// Edge sends every request with the token attached. Required.
	Edge Edge
	// Credential is the opaque handle Edge resolves to the token.
	// Required. It is a name, never the token.
	Credential string
	// TeamID is the team (the teamId query parameter). Required.
	TeamID string
	// ProjectID is the project sandboxes belong to. Required.
	ProjectID string
	// BaseURL is the API; empty means [DefaultBaseURL]. It must be https
	// unless it is a loopback address.
	BaseURL string
	// Timeout is the sandbox's lifetime; zero means 5 minutes.
	Timeout time.Duration
	// Label is the label of the evidence; the zero Label is mock.
	Label checkfu.Label
}

// A Client creates Vercel sandboxes. It is safe for concurrent use.
type Client struct {
	cfg  Config
	base string
}

// New checks cfg and returns a Client; anything missing, or a base URL
// that is not https (or loopback http), is refused with
// checkfu.CodeConfigInvalid.
func New(cfg Config) (*Client, error) {
	if cfg.Edge == nil || cfg.Credential == "" || cfg.TeamID == "" || cfg.ProjectID == "" {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "vercel: a Config needs an Edge, a Credential handle, a TeamID and a ProjectID")
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	if vendorkit.BaseURLProblem(cfg.BaseURL) != vendorkit.BaseURLOK {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "vercel: %s is not an https base URL", checkfu.Quote(cfg.BaseURL))
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Minute
	}
	if !cfg.Label.Valid() {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "vercel: Label is not mock, isolated or production")
	}
	return &Client{cfg: cfg, base: strings.TrimRight(cfg.BaseURL, "/")}, nil
}

// A SandboxSpec is what the Runner asks of a new sandbox.
type SandboxSpec struct {
	// ID is the Runner's name for the instance. Required.
	ID string
	// Policy is the workload's compiled network policy. Required.
	Policy *egress.CompiledPolicy
	// ProfileDigest is recorded in the evidence.
	ProfileDigest string
}

// Create maps spec's policy ([MapPolicy]; refused before any request if
// Vercel cannot express it) and creates the sandbox (POST /v3/sandboxes).
func (c *Client) Create(ctx context.Context, spec SandboxSpec) (*Sandbox, error) {
	if spec.ID == "" {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "vercel: a SandboxSpec needs an ID")
	}
	np, err := MapPolicy(spec.Policy)
	if err != nil {
		return nil, err
	}
	r, err := c.call(ctx, http.MethodPost, "/v3/sandboxes", map[string]any{
		"projectId":     c.cfg.ProjectID,
		"timeout":       c.cfg.Timeout.Milliseconds(),
		"networkPolicy": np.wire(),
		"tags":          map[string]string{"checkfu.instance": spec.ID},
	}, http.StatusOK, http.StatusCreated)
	if err != nil {
		return nil, err
	}
	session, _ := r["session"].(map[string]any)
	sid, _ := session["id"].(string)
	if !vendorkit.PathSafeID(sid, "") {
		return nil, checkfu.Refuse(CodeSandboxSessionRefused, "vercel: the API named session %s", checkfu.Quote(sid))
	}
	return &Sandbox{c: c, id: spec.ID, session: sid, evidence: Evidence{
		Label: c.cfg.Label, Instance: spec.ID, SessionID: sid,
		Provider: Identity().Provider, ProviderRevision: Identity().Revision, MaterializationRevision: MaterializationRevision,
		Platform: "linux/amd64", ProfileDigest: spec.ProfileDigest, NetworkMode: string(spec.Policy.Type()),
		Enforcement: Capability().Enforcement, Grade: checkfu.AdvisoryFilter, GradeReason: AdvisoryReason,
		Stdio: StdioCaveats(),
	}}, nil
}

// StdioCaveats returns what Vercel's command API does to a process's streams,
// stated in every [Evidence]. Each call returns a new slice, so no
// Evidence shares it with another.
func StdioCaveats() []string { return slices.Clone(stdioCaveats[:]) }

// stdioCaveats is the table [StdioCaveats] returns a copy of.
var stdioCaveats = [...]string{
	"stdin: ordinary commands take no input; the process reads end of input at once and a write is refused",
	"stdout/stderr: carried as JSON strings in the NDJSON stream, so output that is not UTF-8 is not carried exactly",
}

// call sends one request and decodes a JSON object strictly. Error
// bodies are never quoted.
func (c *Client) call(ctx context.Context, method, path string, in any, want ...int) (map[string]any, error) {
	resp, err := c.send(ctx, method, path, in)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	vc := sessionCall(method, path)
	data, err := vc.Read(resp, maxBody, want...)
	if err != nil {
		return nil, err
	}
	return vc.Object(data, jsonOpts)
}

func (c *Client) send(ctx context.Context, method, path string, in any) (*http.Response, error) {
	body, err := vendorkit.JSONBody(in)
	if err != nil {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "vercel: cannot encode the request")
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path+"?teamId="+url.QueryEscape(c.cfg.TeamID), body)
	if err != nil {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "vercel: cannot build %s", method)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.cfg.Edge.Send(req, c.cfg.Credential, "Authorization", "Bearer ")
	if err != nil {
		return nil, sessionCall(method, path).Unanswered(err)
	}
	return resp, nil
}

// sessionCall names one sandbox-session request in refusals.
func sessionCall(method, path string) vendorkit.Call {
	return vendorkit.Call{Vendor: "vercel", Code: CodeSandboxSessionRefused, Method: method, Path: path}
}

// A Sandbox is one Vercel sandbox session: one instance, at most one
// live process.
type Sandbox struct {
	c        *Client
	id       string
	session  string
	evidence Evidence

	slot vendorkit.Slot[*Process] // the live process; destroyed
}

// ID returns the Runner's name for the sandbox.
func (s *Sandbox) ID() string { return s.id }

// SessionID returns Vercel's session ID.
func (s *Sandbox) SessionID() string { return s.session }

// Destroy kills any live process and stops the session (POST
// /v2/sandboxes/sessions/{id}/stop). Once it has succeeded, a later
// Destroy does nothing and returns nil; after one that failed, Destroy
// asks again.
func (s *Sandbox) Destroy(ctx context.Context) error {
	return s.slot.Destroy(ctx, func() error {
		_, err := s.c.call(ctx, http.MethodPost, "/v2/sandboxes/sessions/"+url.PathEscape(s.session)+"/stop", nil, http.StatusOK)
		return err
	})
}

// Evidence is what the adapter reports about a process's sandbox.
type Evidence struct {
	Label                   checkfu.Label         `json:"label"`
	Instance                string                `json:"instance"`
	SessionID               string                `json:"session_id"`
	Provider                string                `json:"provider"`
	ProviderRevision        string                `json:"provider_revision"`
	MaterializationRevision string                `json:"materialization_revision"`
	Platform                string                `json:"platform"`
	ProfileDigest           string                `json:"profile_digest"`
	NetworkMode             string                `json:"network_mode"`
	Enforcement             admission.Enforcement `json:"enforcement"`
	Grade                   checkfu.Grade         `json:"grade"`
	GradeReason             string                `json:"grade_reason"`
	// Stdio are [StdioCaveats].
	Stdio []string `json:"stdio"`
}
