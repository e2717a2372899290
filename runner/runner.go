package runner

import (
	"context"
	"crypto/x509"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/admission"
	"github.com/checkfu/checkfu/conformance"
	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/edge"
	"github.com/checkfu/checkfu/custody/sqlitestore"
	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/eventlog/sqlitelog"
	"github.com/checkfu/checkfu/gateway"
	"github.com/checkfu/checkfu/internal/telemetry"
	"github.com/checkfu/checkfu/signing"
)

// Names the Runner puts in lease scopes and on its own events.
const (
	// Service is the lease scope's service field.
	Service = "runner"
	// GatewayName is the lease scope's gateway field.
	GatewayName = "gateway"
	// DefaultDeployment is the deployment name when Config.Deployment is
	// empty.
	DefaultDeployment = "checkfu-local"
	// DefaultLeaseTTL is how long an agent's lease lives (each agent of a
	// session gets its own, issued at its Launch, revoked at its close).
	DefaultLeaseTTL = time.Hour
	// DefaultLeaseBudget is an agent lease's budget: the number of uses
	// it allows, one spent per tool call the gateway authorizes against
	// it (not bytes).
	DefaultLeaseBudget = 1 << 20
	// DefaultApprovalTTL is how long an approval the Approver gives stays
	// valid, unless it says otherwise.
	DefaultApprovalTTL = time.Minute
)

// A Provider is a sandbox provider the Runner can place a session on: the
// adapters contract and the one instance spec it accepts for an instance
// id and profile digest. Process returns the default; *docker.Provider
// implements it.
type Provider interface {
	adapters.Provider
	Spec(id, profileDigest string) adapters.InstanceSpec
}

// A BrokerMounter is a Provider whose instances cannot reach the plane's
// host filesystem (a container): it mounts the session's broker
// directory into each instance it creates, and says where the directory
// appears inside. *docker.Provider implements it. A Provider that is not
// one runs its processes on the host, which reach the socket where the
// plane made it.
type BrokerMounter interface {
	CreateWithBroker(ctx context.Context, spec adapters.InstanceSpec, brokerDir string) (adapters.Instance, error)
	BrokerPath() string
}

// A Connection is one provider connection the platform authorized: the
// custody binding of its credential, the provider revision leases are
// issued against, its egress rules (1 to 32, default deny) and the exact
// tool registrations that use it.
type Connection struct {
	Credential custody.Binding
	Provider   checkfu.ProviderRevision
	Rules      []egress.Rule
	Tools      []authz.Registration
}

// Config configures New. Every field has a default except Dir, which the
// default stores need. Without Connections a session is capability-free:
// Launch builds no plane, no broker and no socket, names none to the
// agent and announces no MCP server.
type Config struct {
	// Dir holds the default SQLite stores (custody.db, events.db) when
	// Credentials or Events is nil.
	Dir string
	// Deployment names the deployment whose key signs admission records;
	// empty means DefaultDeployment.
	Deployment string
	// Release is the release identity stamped on the Runner's events.
	Release string
	// Label is the evidence label of every event; the zero Label is mock.
	Label checkfu.Label

	// Provider is where sessions run; nil means Process().
	Provider Provider
	// Enrollment enrolls Provider under the operator's ceiling. Nil is
	// allowed only for an in-process provider: the Runner then enrolls
	// it with its declared capability as the ceiling, signing the
	// materialization statement with the deployment key.
	Enrollment *admission.Enrollment
	// Receipt is the verified conformance receipt held for Provider's
	// exact revision, or nil.
	Receipt *conformance.Receipt

	// Keys gives the plane's keys; nil means EphemeralKeys(), which a
	// restart does not read back: give a KeyFile (or a KMS's KeySource)
	// when Dir outlives the process.
	Keys KeySource
	// Credentials is where native custody keeps sealed credentials; nil
	// means SQLite at Dir/custody.db.
	Credentials custody.Store
	// Events is the session logs' store; nil means SQLite at
	// Dir/events.db.
	Events eventlog.Store
	// Approver decides external_effect calls; nil denies every one.
	Approver Approver
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	// Connections are the authorized connections, all against one
	// provider revision (a channel carries one lease).
	Connections []Connection
	// Assignments are the permission assignments: who may call which
	// capability, where.
	Assignments []authz.PermissionAssignment
	// Dialer and RootCAs configure the outbound edge's egress client
	// (nil Dialer: public addresses only, the system resolver; nil
	// RootCAs: the system roots). Only an isolated test topology sets
	// egress.DialerConfig.TreatAsPublicForTesting.
	Dialer  *egress.Dialer
	RootCAs *x509.CertPool

	// Logger receives the operator's lines of the Runner and of every
	// package it builds (the call pipeline, the outbound edge): each
	// refusal with its code, each failed call with its cause (the dial
	// or TLS error behind upstream_failed, a store's error), each event
	// that could not be recorded. The cause of a failed call is also
	// sealed into its events' content (eventlog/evidencelog.Operator),
	// which only a reader holding the log's keys opens. Nothing logged
	// reaches the agent, which is answered the code alone. Nil discards
	// them.
	Logger *slog.Logger
	// TracerProvider traces the Runner (OpenTelemetry): one span per
	// session step (checkfu.runner/publish, admit, launch, prompt,
	// permission, close_agent) under the span of the context the host
	// passes, and one per hop of each tool call (the broker's tools/call,
	// the pipeline's call and approval, the edge's exchange) under the
	// step in flight, since the agent's calls cannot carry the host's
	// context. Attributes are the request context's identifiers, the
	// capability, the action and profile digests and codes, never
	// content. The edge sends the W3C trace context to a provider only
	// where the Connection's rules allow the traceparent header. Nil is
	// the no-op provider: nothing is recorded and nothing allocated for
	// it.
	TracerProvider trace.TracerProvider
	// MeterProvider gives the instruments of the call pipeline
	// (checkfu.calls, checkfu.refusals, checkfu.call.duration) and of the
	// session logs (checkfu.log.appends). Nil records nothing.
	MeterProvider metric.MeterProvider
}

// A Runner wires checkfu's packages the way a host platform does. It is
// a library type: it serves nothing of its own, and the host calls it per
// session (Runner.Open). It is safe for concurrent use by sessions.
type Runner struct {
	cfg         Config
	deployment  string
	now         func() time.Time
	provider    Provider
	desc        adapters.Description
	enrollment  *admission.Enrollment
	tracer      trace.Tracer
	signer      *signing.Signer
	trusted     *signing.AttesterSet
	log         *eventlog.Log
	tokens      *gateway.HMACTokens
	registry    *authz.Registry
	catalog     *authz.Catalog
	integration checkfu.ProviderRevision
	conns       []edge.Connection
	tools       []gateway.ProfileTool
	assignments *authz.Assignments
	closers     []func() error

	// The Runner holds no custodian in a field: only these closures
	// capture it, so nothing reachable from a Runner can open a
	// credential (custody's TestNoExportedTypeHoldsASecret walks every
	// exported type). newEdge builds a session's outbound edge, which
	// takes only calls the pipeline authorized; put seals a credential.
	newEdge func(*authz.Leases) (gateway.Edge, error)
	put     func(context.Context, custody.Binding, *custody.Secret) error
}

// New validates cfg, opens the default stores it needs, enrolls the
// provider and builds the registry. A missing part is refused with
// checkfu.CodeConfigInvalid; a remote provider without an enrollment
// with CodeProviderUnenrolled.
func New(ctx context.Context, cfg Config) (_ *Runner, err error) {
	r := &Runner{cfg: cfg, deployment: cfg.Deployment, now: cfg.Now, provider: cfg.Provider}
	defer func() {
		if err != nil {
			r.Close()
		}
	}()
	if r.deployment == "" {
		r.deployment = DefaultDeployment
	}
	if r.now == nil {
		r.now = time.Now
	}
	if r.provider == nil {
		r.provider = Process()
	}
	if r.cfg.Logger == nil {
		r.cfg.Logger = slog.New(slog.DiscardHandler)
	}
	r.tracer = telemetry.Tracer(cfg.TracerProvider)
	if !cfg.Label.Valid() {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "runner: label %d is not mock, isolated or production", cfg.Label)
	}
	keys := cfg.Keys
	if keys == nil {
		keys = EphemeralKeys()
	}
	// The keys are asked for once, here; the Runner keeps no KeySource,
	// so that printing it cannot print an embedder's keys.
	r.cfg.Keys = nil
	if (cfg.Credentials == nil || cfg.Events == nil) && cfg.Dir == "" {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "runner: the default stores need Config.Dir")
	}
	if r.signer, err = keys.Deployment(); err != nil {
		return nil, err
	}
	if r.trusted, err = keySet(r.deployment, r.signer); err != nil {
		return nil, err
	}
	if err := r.openStores(ctx, keys); err != nil {
		return nil, err
	}
	tk, err := keys.Token()
	if err != nil {
		return nil, err
	}
	if r.tokens, err = gateway.NewHMACTokens(tk, r.now); err != nil {
		return nil, err
	}
	if err := r.enroll(); err != nil {
		return nil, err
	}
	if err := r.register(); err != nil {
		return nil, err
	}
	return r, nil
}

// openStores opens the credential store, native custody and the log.
func (r *Runner) openStores(ctx context.Context, keys KeySource) error {
	creds := r.cfg.Credentials
	if creds == nil {
		path := filepath.Join(r.cfg.Dir, "custody.db")
		if err := createPrivate(path); err != nil {
			return err
		}
		s, err := sqlitestore.Open(ctx, path)
		if err != nil {
			return err
		}
		r.closers = append(r.closers, s.Close)
		creds = s
	}
	ks, err := keys.Custody()
	if err != nil {
		return err
	}
	native := custody.NewNative(ks, creds)
	if err := r.checkStoreKeys(ctx, native); err != nil {
		return err
	}
	r.put = native.Put
	r.newEdge = func(leases *authz.Leases) (gateway.Edge, error) {
		e, err := edge.NewEdge(edge.EdgeConfig{
			Leases: leases, Custodian: native,
			Label: r.cfg.Label, Now: r.now, Dialer: r.cfg.Dialer, RootCAs: r.cfg.RootCAs, Logger: r.cfg.Logger,
			TracerProvider: r.cfg.TracerProvider,
		})
		if err != nil {
			return nil, err // never a typed nil in the interface
		}
		return e, nil
	}
	events := r.cfg.Events
	if events == nil {
		if err := createPrivate(r.LogPath()); err != nil {
			return err
		}
		s, err := sqlitelog.Open(ctx, r.LogPath())
		if err != nil {
			return err
		}
		r.closers = append(r.closers, s.Close)
		events = s
	}
	lk, err := keys.Log()
	if err != nil {
		return err
	}
	r.log, err = eventlog.New(events, eventlog.Options{Keys: lk, Now: r.now, MeterProvider: r.cfg.MeterProvider})
	return err
}

// enroll enrolls the provider: the configured enrollment, or, for an
// in-process provider, one the Runner signs itself.
func (r *Runner) enroll() error {
	r.desc = r.provider.Describe()
	if err := adapters.Check(r.desc); err != nil {
		return err
	}
	if r.cfg.Enrollment != nil {
		if r.cfg.Enrollment.Target() != r.desc.Identity {
			return checkfu.Refuse(checkfu.CodeConfigInvalid, "runner: the enrollment is for %s, the provider is %s", r.cfg.Enrollment.Target(), r.desc.Identity)
		}
		if err := checkDescribed(r.desc, r.cfg.Enrollment); err != nil {
			return err
		}
		r.enrollment = r.cfg.Enrollment
		return nil
	}
	if r.desc.Placement != admission.PlacementInProcess {
		return checkfu.Refuse(CodeProviderUnenrolled, "runner: provider %s is placed %s and needs Config.Enrollment", r.desc.Identity, r.desc.Placement)
	}
	digest, err := admission.CapabilityDigest(r.desc.Capability)
	if err != nil {
		return err
	}
	statement, err := admission.SignMaterialization(r.signer, admission.MaterializationStatement{
		Provider: r.desc.Identity.Provider, ProviderRevision: r.desc.Identity.Revision,
		MaterializationRevision: r.desc.MaterializationRevision, Placement: r.desc.Placement,
		CapabilityDigest: digest, IssuedAt: r.now().UTC().Format(time.RFC3339),
	})
	if err != nil {
		return err
	}
	signers, err := keySet(r.desc.Identity.Provider, r.signer)
	if err != nil {
		return err
	}
	r.enrollment, err = admission.Enroll(admission.EnrollmentRequest{
		Target: r.desc.Identity, Placement: r.desc.Placement,
		Declared: r.desc.Capability, Ceiling: r.desc.Capability, Statement: statement, Signers: signers,
	})
	return err
}

// checkDescribed refuses, with CodeDescriptionMismatch, a Description
// that disagrees with the operator's enrollment e: its placement, its
// materialization revision, or its capability (against the digest e's
// verified statement binds). From here on the Runner takes placement,
// enforcement and the materialization revision from e alone.
func checkDescribed(d adapters.Description, e *admission.Enrollment) error {
	st := e.Statement()
	if d.Placement != e.Placement() {
		return checkfu.Refuse(CodeDescriptionMismatch, "runner: provider %s describes itself placed %s; its enrollment places it %s", d.Identity, checkfu.Quote(string(d.Placement)), e.Placement())
	}
	if d.MaterializationRevision != st.MaterializationRevision {
		return checkfu.Refuse(CodeDescriptionMismatch, "runner: provider %s describes materialization revision %s; its enrollment names %s", d.Identity, checkfu.Quote(d.MaterializationRevision), checkfu.Quote(st.MaterializationRevision))
	}
	if digest, err := admission.CapabilityDigest(d.Capability); err != nil || digest != st.CapabilityDigest {
		return checkfu.Refuse(CodeDescriptionMismatch, "runner: provider %s describes another capability than the one its enrollment's statement binds", d.Identity)
	}
	return nil
}

// placement returns where the session's sandboxes run: the enrollment's
// placement, never the provider's own word.
func (r *Runner) placement() admission.Placement { return r.enrollment.Placement() }

// held returns the state the Runner holds for an instance made with
// spec, the reference side of the evidence check: the spec's fields,
// and the target, materialization revision and placement of the
// enrollment. Its enforcement is the declared capability's, which New
// checked against the digest the enrollment's signed statement binds.
func (r *Runner) held(spec adapters.InstanceSpec) adapters.Held {
	h := adapters.HeldFor(r.desc, spec)
	h.Target = r.enrollment.Target()
	h.MaterializationRevision = r.enrollment.Statement().MaterializationRevision
	h.Placement = r.placement()
	return h
}

// register builds the registry, the catalog entry, the Connections and
// the permission assignments.
func (r *Runner) register() error {
	var regs []authz.Registration
	var ids []string
	names := map[string]bool{}
	for i, c := range r.cfg.Connections {
		if i == 0 {
			r.integration = c.Provider
		} else if c.Provider != r.integration {
			return checkfu.Refuse(checkfu.CodeConfigInvalid, "runner: connections name providers %s and %s; a session channel carries one lease, so one provider revision", r.integration, c.Provider)
		}
		rules, err := egress.NewRules(c.Rules)
		if err != nil {
			return err
		}
		r.conns = append(r.conns, edge.Connection{Credential: c.Credential, Rules: rules})
		for _, reg := range c.Tools {
			if reg.Credential != c.Credential {
				return checkfu.Refuse(checkfu.CodeConfigInvalid, "runner: tool %s is registered with another credential than its connection's", checkfu.Quote(reg.Tool.Name))
			}
			if err := reachable(reg, rules); err != nil {
				return err
			}
			// A permission request and the broker both name a tool by
			// its name: one name, one capability, or an approval could
			// bind one capability while the call reaches another.
			if names[reg.Tool.Name] {
				return checkfu.Refuse(checkfu.CodeConfigInvalid, "runner: tool name %s is registered twice", checkfu.Quote(reg.Tool.Name))
			}
			names[reg.Tool.Name] = true
			regs = append(regs, reg)
			ids = append(ids, reg.Capability)
			r.tools = append(r.tools, gateway.ProfileTool{Capability: reg.Capability, Tool: reg.Tool.Name, Operation: reg.Operation, Resource: reg.Resource})
		}
	}
	var err error
	if r.registry, err = authz.NewRegistry(regs...); err != nil {
		return err
	}
	if len(ids) > 0 {
		if r.catalog, err = authz.NewCatalog(authz.ProviderEntry{Revision: r.integration, Capabilities: ids}); err != nil {
			return err
		}
	}
	r.assignments = &authz.Assignments{}
	for _, a := range r.cfg.Assignments {
		if _, err := r.assignments.Assign(a); err != nil {
			return err
		}
	}
	return nil
}

// reachable refuses, with CodeRegistrationUnreachable, a registration
// whose operation on its resource no rule of rules allows: no rule names
// its host, port and path, or none of those allows its method. Headers
// are left to the call: what a call sends depends on its arguments.
func reachable(reg authz.Registration, rules *egress.Rules) error {
	hreq, err := http.NewRequest(reg.Operation, reg.Resource, nil)
	if err != nil {
		return checkfu.Refuse(checkfu.CodeConfigInvalid, "runner: tool %s: resource %s is not a URL", checkfu.Quote(reg.Tool.Name), checkfu.Quote(reg.Resource))
	}
	req, err := egress.CanonicalRequest(hreq)
	if err != nil {
		return &checkfu.Refusal{Code: CodeRegistrationUnreachable, Message: "runner: tool " + checkfu.Quote(reg.Tool.Name) + " names a resource no rule can allow", Err: err}
	}
	_, err = rules.Decide(&req)
	if err == nil || errors.Is(err, egress.CodeHeaderNotAllowed) {
		return nil
	}
	return &checkfu.Refusal{Code: CodeRegistrationUnreachable, Message: "runner: tool " + checkfu.Quote(reg.Tool.Name) + ": no rule of its connection allows " + checkfu.Quote(reg.Operation) + " " + req.Authority() + " on its path", Err: err}
}

// Process returns the default provider: package adapters/process, plain
// local processes, trusted lane only.
func Process() Provider { return processProvider{} }

// ProcessWire returns package process's Remote: the same plain local
// processes, each behind its own acp/wire server, driven across the wire
// (the credit window, the replay journal, the identity_only assurance).
// It is placed remote, so Config.Enrollment must enroll it.
func ProcessWire() Provider { return remoteProvider{} }

// PutCredential seals secret into native custody at b, as the platform
// does when a Connection is authorized. The Runner keeps no copy: the
// credential is read again only by custody's outbound edge, after a
// call's decision.
func (r *Runner) PutCredential(ctx context.Context, b custody.Binding, secret *custody.Secret) error {
	return r.put(ctx, b, secret)
}

// IssueToken issues the server-owned token for rc, as the application
// server does (it shares the token key with the plane); Runner.Open
// authenticates it. An invalid context is refused with
// checkfu.CodeRequestContextInvalid.
func (r *Runner) IssueToken(rc checkfu.RequestContext, ttl time.Duration) (string, error) {
	return r.tokens.Issue(rc, ttl)
}

// Log returns the session logs.
func (r *Runner) Log() *eventlog.Log { return r.log }

// LogPath returns the path of the default SQLite log, or "" when the
// Config gave an Events store.
func (r *Runner) LogPath() string {
	if r.cfg.Events != nil {
		return ""
	}
	return filepath.Join(r.cfg.Dir, "events.db")
}

// Description returns the provider's declarations.
func (r *Runner) Description() adapters.Description { return r.desc }

// Close closes the default stores New opened.
func (r *Runner) Close() error {
	var errs []error
	for _, c := range slices.Backward(r.closers) {
		errs = append(errs, c())
	}
	r.closers = nil
	return errors.Join(errs...)
}

// createPrivate creates the default store at path, empty and 0600, when
// it does not exist yet: SQLite then gives its -wal and -shm files the
// same mode, so no other user reads the log's envelopes or custody's
// ciphertext whatever Config.Dir's mode. An existing file keeps the mode
// its owner gave it.
func createPrivate(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return f.Close()
}

// tempDir makes a fresh directory for a session's broker socket and
// returns it with the private directory to remove at the end. On the
// host the socket's directory is 0700: nobody but the plane's user may
// reach the socket, which is 0666. When a container's non-root user must
// traverse it (shared, a BrokerMounter), it is 0755 but inside a 0700
// directory of its own, so that the path stays closed to every other
// local user on the plane's host while the engine (root, or the plane's
// own user when rootless) still mounts it. The socket is the only thing
// in it either way.
func tempDir(shared bool) (dir, root string, err error) {
	root, err = os.MkdirTemp("", "checkfu-broker-")
	if err != nil {
		return "", "", err
	}
	if err := os.Chmod(root, 0o700); err != nil {
		os.RemoveAll(root)
		return "", "", err
	}
	if !shared {
		return root, root, nil
	}
	dir = filepath.Join(root, "mount")
	if err := os.Mkdir(dir, 0o700); err != nil {
		os.RemoveAll(root)
		return "", "", err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		os.RemoveAll(root)
		return "", "", err
	}
	return dir, root, nil
}
