package daytona

import (
	"bytes"
	"context"
	"net/http"
	"net/netip"
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

// DefaultBaseURL is Daytona's sandbox API.
const DefaultBaseURL = "https://app.daytona.io/api"

// sdkVersion is the Daytona SDK version whose wire the adapter speaks:
// from 0.167.0 the daemon keeps stdout and stderr apart in the command
// log (the 01 01 01 / 02 02 02 prefixes) instead of merging them.
const sdkVersion = "0.190.0"

const maxBody = 1 << 20

var jsonOpts = strictjson.Options{MaxDepth: 16, MaxBytes: maxBody}

// A Config configures a [Client]. Edge and Credential are required.
type Config struct {
	// Edge sends every request with the API key attached. Required.
	Edge Edge
	// Credential is the opaque handle Edge resolves to the API key.
	// Required. It is a name, never the key.
	Credential string
	// BaseURL is the sandbox API; empty means [DefaultBaseURL]. It must
	// be https unless it is a loopback address.
	BaseURL string
	// ToolboxHosts, when set, are the only hosts (names or address
	// literals, without a port, compared case-insensitively) the toolbox
	// proxy URL of Daytona's answers may name, and may be private: a
	// self-hosted Daytona whose proxy is on a private network names it
	// here. Empty admits any host [vendorkit.PublicHost] admits (Daytona's
	// cloud names https://proxy.app.daytona.io/toolbox). Either way the
	// proxy URL must be https, unless BaseURL is itself loopback (a
	// test's fake), whose toolbox must then be loopback too.
	ToolboxHosts []string
	// Snapshot is the snapshot sandboxes start from; empty means
	// Daytona's default.
	Snapshot string
	// StartTimeout bounds how long Create waits for the sandbox to
	// start; zero means 2 minutes.
	StartTimeout time.Duration
	// Label is the label of the evidence; the zero Label is mock.
	Label checkfu.Label
}

// A Client creates Daytona sandboxes. It is safe for concurrent use.
type Client struct {
	cfg         Config
	base        string
	apiLoopback bool // the API is a test's fake on loopback ([Client.checkToolbox])
}

// New checks cfg and returns a Client; a missing Edge or Credential or a
// base URL that is not https (or loopback http) is refused with
// checkfu.CodeConfigInvalid.
func New(cfg Config) (*Client, error) {
	if cfg.Edge == nil || cfg.Credential == "" {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "daytona: a Config needs an Edge and a Credential handle")
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	if err := checkURL(cfg.BaseURL); err != nil {
		return nil, err
	}
	if cfg.StartTimeout == 0 {
		cfg.StartTimeout = 2 * time.Minute
	}
	if !cfg.Label.Valid() {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "daytona: Label is not mock, isolated or production")
	}
	cfg.ToolboxHosts = slices.Clone(cfg.ToolboxHosts)
	for i, h := range cfg.ToolboxHosts {
		if h == "" || strings.ContainsAny(h, "/:@?#[] ") && !isAddr(h) {
			return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "daytona: toolbox host %s is not a host name", checkfu.Quote(h))
		}
		cfg.ToolboxHosts[i] = strings.ToLower(strings.TrimSuffix(h, "."))
	}
	u, _ := url.Parse(cfg.BaseURL) // checkURL parsed it
	return &Client{cfg: cfg, base: strings.TrimRight(cfg.BaseURL, "/"), apiLoopback: vendorkit.LoopbackHost(u.Hostname())}, nil
}

// checkURL refuses a base URL that would send requests in the clear to
// anything but loopback.
func checkURL(s string) error { return vendorkit.CheckBaseURL("daytona", s) }

func isAddr(h string) bool { _, err := netip.ParseAddr(h); return err == nil }

// checkToolbox refuses, with [CodeSandboxRequestRefused], a toolbox proxy
// URL of Daytona's answer that the API key may not be sent to: one that
// is not a base URL ([vendorkit.BaseURLProblem]); when the API is on
// loopback (a test's fake), one that is not on loopback too; when
// ToolboxHosts is set, one naming another host or not https; and
// otherwise one not https or naming a host that is not public
// ([vendorkit.PublicHost]), such as a listener of a local stranger on
// the Runner's loopback or a private network's service.
func (c *Client) checkToolbox(proxy string) error {
	u, err := url.Parse(proxy)
	ok := err == nil && vendorkit.BaseURLProblem(proxy) == vendorkit.BaseURLOK
	if ok {
		h := u.Hostname()
		switch {
		case c.apiLoopback:
			ok = vendorkit.LoopbackHost(h)
		case len(c.cfg.ToolboxHosts) > 0:
			ok = u.Scheme == "https" && slices.Contains(c.cfg.ToolboxHosts, strings.ToLower(strings.TrimSuffix(h, ".")))
		default:
			ok = u.Scheme == "https" && vendorkit.PublicHost(h)
		}
	}
	if !ok {
		return checkfu.Refuse(CodeSandboxRequestRefused, "daytona: the API named toolbox proxy %s, which the API key may not be sent to", checkfu.Quote(proxy))
	}
	return nil
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
// Daytona cannot express it), creates the sandbox (POST /sandbox), waits
// for it to start and finds its toolbox.
func (c *Client) Create(ctx context.Context, spec SandboxSpec) (*Sandbox, error) {
	if spec.ID == "" {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "daytona: a SandboxSpec needs an ID")
	}
	netw, err := MapPolicy(spec.Policy)
	if err != nil {
		return nil, err
	}
	body := map[string]any{
		"labels":          map[string]string{"checkfu.instance": spec.ID},
		"public":          false,
		"networkBlockAll": netw.NetworkBlockAll,
	}
	if netw.NetworkAllowList != "" {
		body["networkAllowList"] = netw.NetworkAllowList
	}
	if netw.DomainAllowList != "" {
		body["domainAllowList"] = netw.DomainAllowList
	}
	if c.cfg.Snapshot != "" {
		body["snapshot"] = c.cfg.Snapshot
	}
	sb, err := c.sandboxCall(ctx, http.MethodPost, "/sandbox", body, http.StatusOK, http.StatusCreated)
	if err != nil {
		return nil, err
	}
	id, _ := sb["id"].(string)
	if !vendorkit.PathSafeID(id, "") {
		return nil, checkfu.Refuse(CodeSandboxRequestRefused, "daytona: the API named sandbox %s", checkfu.Quote(id))
	}
	s := &Sandbox{c: c, id: spec.ID, sandboxID: id}
	discard := func(err error) error {
		return vendorkit.Discard(ctx, err, "daytona", id, s.Destroy)
	}
	if err := s.awaitStarted(ctx, sb); err != nil {
		return nil, discard(err)
	}
	proxy, _ := sb["toolboxProxyUrl"].(string)
	if proxy == "" {
		u, err := c.sandboxCall(ctx, http.MethodGet, "/sandbox/"+url.PathEscape(id)+"/toolbox-proxy-url", nil, http.StatusOK)
		if err != nil {
			return nil, discard(err)
		}
		proxy, _ = u["url"].(string)
	}
	if err := c.checkToolbox(proxy); err != nil {
		return nil, discard(err)
	}
	s.toolbox = strings.TrimRight(proxy, "/") + "/" + url.PathEscape(id)
	s.evidence = Evidence{
		Label: c.cfg.Label, Instance: spec.ID, SandboxID: id,
		Provider: Identity().Provider, ProviderRevision: Identity().Revision, MaterializationRevision: MaterializationRevision,
		RootImage: c.cfg.Snapshot, Platform: "linux/amd64", ProfileDigest: spec.ProfileDigest,
		NetworkMode: string(spec.Policy.Type()), Enforcement: Capability().Enforcement,
		Grade: checkfu.AdvisoryFilter, GradeReason: AdvisoryReason,
		Stdio: StdioCaveats(),
	}
	return s, nil
}

// StdioCaveats returns what a Daytona session does to a process's streams,
// stated in every [Evidence]. Each call returns a new slice, so no
// Evidence shares it with another.
func StdioCaveats() []string { return slices.Clone(stdioCaveats[:]) }

// stdioCaveats is the table [StdioCaveats] returns a copy of.
var stdioCaveats = [...]string{
	"stdout/stderr: the daemon relabels output line by line, so a last line without a newline gains one and NUL bytes are dropped",
	"stdout/stderr: a line holding the bytes 01 01 01 or 02 02 02 is split at them and misattributed",
	"stdin: UTF-8 lines only, each sent when its newline is written; end of input cannot be signalled",
}

// awaitStarted polls GET /sandbox/{id} until the state is started.
func (s *Sandbox) awaitStarted(ctx context.Context, sb map[string]any) error {
	ctx, cancel := context.WithTimeout(ctx, s.c.cfg.StartTimeout)
	defer cancel()
	for {
		state, _ := sb["state"].(string)
		switch state {
		case "started":
			return nil
		case "error", "build_failed", "destroyed", "destroying", "stopped", "archived":
			return checkfu.Refuse(CodeSandboxRequestRefused, "daytona: sandbox %s is %s, not started", checkfu.Quote(s.sandboxID), checkfu.Quote(state))
		}
		select {
		case <-ctx.Done():
			return checkfu.Refuse(CodeSandboxRequestRefused, "daytona: sandbox %s did not start (last state %s)", checkfu.Quote(s.sandboxID), checkfu.Quote(state))
		case <-time.After(500 * time.Millisecond):
		}
		var err error
		if sb, err = s.c.sandboxCall(ctx, http.MethodGet, "/sandbox/"+url.PathEscape(s.sandboxID), nil, http.StatusOK); err != nil {
			return err
		}
	}
}

// sandboxCall sends one sandbox-API request; the answer, if any, is
// decoded strictly into a generic object. Error bodies are never quoted.
func (c *Client) sandboxCall(ctx context.Context, method, path string, in any, want ...int) (map[string]any, error) {
	return call(ctx, c.cfg.Edge, c.cfg.Credential, method, c.base+path, in, CodeSandboxRequestRefused, want...)
}

func call(ctx context.Context, edge Edge, handle, method, u string, in any, code checkfu.Code, want ...int) (map[string]any, error) {
	body, err := vendorkit.JSONBody(in)
	if err != nil {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "daytona: cannot encode the request")
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "daytona: cannot build %s", method)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	sdkHeaders(req)
	c := vendorkit.Call{Vendor: "daytona", Code: code, Method: method, Path: req.URL.Path}
	data, err := c.Exchange(edge, req, handle, "Authorization", "Bearer ", maxBody, want...)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return map[string]any{}, nil
	}
	return c.Object(data, jsonOpts)
}

func sdkHeaders(req *http.Request) {
	req.Header.Set("X-Daytona-Source", "checkfu")
	req.Header.Set("X-Daytona-SDK-Version", sdkVersion)
}

// A Sandbox is one Daytona sandbox: one instance, at most one live
// process.
type Sandbox struct {
	c         *Client
	id        string
	sandboxID string
	toolbox   string // {toolboxProxyUrl}/{sandboxId}
	evidence  Evidence

	slot vendorkit.Slot[*Process] // the live process; destroyed
	seq  int                      // the last session's number, under slot's lock
}

// ID returns the Runner's name for the sandbox.
func (s *Sandbox) ID() string { return s.id }

// SandboxID returns Daytona's name for the sandbox.
func (s *Sandbox) SandboxID() string { return s.sandboxID }

// Destroy kills any live process (by deleting its session) and deletes
// the sandbox (DELETE /sandbox/{id}; one already gone counts as
// deleted). Once it has succeeded, a later Destroy does nothing
// and returns nil; after one that failed, Destroy asks again.
func (s *Sandbox) Destroy(ctx context.Context) error {
	return s.slot.Destroy(ctx, func() error {
		_, err := s.c.sandboxCall(ctx, http.MethodDelete, "/sandbox/"+url.PathEscape(s.sandboxID), nil, http.StatusOK, http.StatusNoContent, http.StatusNotFound)
		return err
	})
}

// Evidence is what the adapter reports about a process's sandbox.
type Evidence struct {
	Label                   checkfu.Label         `json:"label"`
	Instance                string                `json:"instance"`
	SandboxID               string                `json:"sandbox_id"`
	Provider                string                `json:"provider"`
	ProviderRevision        string                `json:"provider_revision"`
	MaterializationRevision string                `json:"materialization_revision"`
	RootImage               string                `json:"root_image"`
	Platform                string                `json:"platform"`
	ProfileDigest           string                `json:"profile_digest"`
	NetworkMode             string                `json:"network_mode"`
	Enforcement             admission.Enforcement `json:"enforcement"`
	Grade                   checkfu.Grade         `json:"grade"`
	GradeReason             string                `json:"grade_reason"`
	// Stdio are [StdioCaveats].
	Stdio []string `json:"stdio"`
}
