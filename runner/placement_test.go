package runner_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/process"
	"github.com/checkfu/checkfu/admission"
	"github.com/checkfu/checkfu/admission/admissiontest"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/runner"
	"github.com/checkfu/checkfu/runner/runnertest"
)

// enrollAs plays the operator enrolling the provider described by d at
// placement: the provider signs its statement for that placement, and
// the ceiling is what d declares.
func enrollAs(t testing.TB, d adapters.Description, placement admission.Placement) *admission.Enrollment {
	t.Helper()
	digest, err := admission.CapabilityDigest(d.Capability)
	if err != nil {
		t.Fatal(err)
	}
	st, err := admission.SignMaterialization(admissiontest.Signer(t, d.Identity.Provider), admission.MaterializationStatement{
		Provider: d.Identity.Provider, ProviderRevision: d.Identity.Revision, MaterializationRevision: d.MaterializationRevision,
		Placement: placement, CapabilityDigest: digest, IssuedAt: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC).Format(time.RFC3339),
	})
	if err != nil {
		t.Fatal(err)
	}
	e, err := admission.Enroll(admission.EnrollmentRequest{Target: d.Identity, Placement: placement, Declared: d.Capability,
		Ceiling: d.Capability, Statement: st, Signers: admissiontest.KeySet(t, d.Identity.Provider)})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// claimsInProcess is package process's Remote (its instances run across
// acp/wire) describing itself as placed in_process, and counting the
// instances it makes. When t is set, each instance is destroyed at t's
// end whatever the Runner did with it (a mutant may leave it).
type claimsInProcess struct {
	process.Remote
	created *atomic.Int64
	t       testing.TB
}

func (p claimsInProcess) Describe() adapters.Description {
	d := p.Remote.Describe()
	d.Placement = admission.PlacementInProcess
	return d
}

func (p claimsInProcess) Create(ctx context.Context, spec adapters.InstanceSpec) (adapters.Instance, error) {
	p.created.Add(1)
	inst, err := p.Remote.Create(ctx, spec)
	if err == nil && p.t != nil {
		p.t.Cleanup(func() { _ = inst.Destroy(context.Background()) })
	}
	return inst, err
}

func (claimsInProcess) Spec(id, digest string) adapters.InstanceSpec { return process.Spec(id, digest) }

// TestMisdescribedProviderRefusedBeforeAnyInstance: a provider whose
// Description disagrees with its operator enrollment (enrolled remote,
// claiming in_process; or another materialization revision or
// capability) is refused by New with description_mismatch: no instance
// is ever made.
func TestMisdescribedProviderRefusedBeforeAnyInstance(t *testing.T) {
	honest := process.Remote{}.Describe()
	for name, edit := range map[string]func(*adapters.Description){
		"placement":                func(d *adapters.Description) { d.Placement = admission.PlacementRemote },
		"materialization revision": func(d *adapters.Description) { d.MaterializationRevision += "-other" },
		"capability": func(d *adapters.Description) {
			d.Capability.ListDir, d.Members.ListDir = !d.Capability.ListDir, !d.Members.ListDir
		},
	} {
		enrolled := honest
		edit(&enrolled)
		var created atomic.Int64
		p := claimsInProcess{created: &created}
		placement := admission.PlacementRemote
		if name != "placement" {
			// Only the named field disagrees: enroll at the placement
			// the provider claims.
			placement = admission.PlacementInProcess
			enrolled.Placement = placement
		}
		_, err := runner.New(context.Background(), runner.Config{Dir: t.TempDir(), Provider: p, Enrollment: enrollAs(t, enrolled, placement)})
		if !errors.Is(err, runner.CodeDescriptionMismatch) {
			t.Errorf("%s: New = %v, want %s", name, err, runner.CodeDescriptionMismatch)
		}
		if created.Load() != 0 {
			t.Errorf("%s: the provider made %d instances", name, created.Load())
		}
	}
}

// remoteRig is a rig on package process's Remote enrolled remote by the
// operator, whose Description then claims in_process: what New would
// have refused, reached past it, so that each later decision shows it
// takes placement from the enrollment alone.
func remoteRig(t *testing.T) *rig {
	t.Helper()
	d := process.Remote{}.Describe()
	g := newRig(t, func(c *runner.Config, _ *rig) {
		c.Provider = remote{}
		c.Enrollment = enrollAs(t, d, admission.PlacementRemote)
	})
	d.Placement = admission.PlacementInProcess
	runner.SetDescription(g.Runner, d)
	return g
}

// remoteTurn admits a session on g and plays the quickstart's script
// once, the agent asking permission for its external effect.
func remoteTurn(t *testing.T, g *rig) (said []string, es []eventlog.Entry) {
	t.Helper()
	said = turn(t, g.admitted(t), runnertest.QuickstartScript)
	return said, entries(t, g.Runner, member.Session)
}

// TestRemotePlacementGetsNoBroker: a session placed remote (by its
// enrollment, whatever its Description says) gets no broker: the agent
// is told of no socket and reaches none.
func TestRemotePlacementGetsNoBroker(t *testing.T) {
	said, es := remoteTurn(t, remoteRig(t))
	if !slices.ContainsFunc(said, func(s string) bool { return strings.Contains(s, "cannot reach the broker") }) {
		t.Errorf("the agent said %q; want it to have reached no broker", said)
	}
	for _, e := range es {
		if e.Kind == eventlog.KindToolCall {
			t.Errorf("a tool call reached the gateway: %v", rows([]eventlog.Entry{e}))
		}
	}
}

// TestRemotePlacementMakesNoCredentialedCall: nothing of a session placed
// remote reaches the upstream, and its agent's permission request is
// denied capability_unsupported without asking the Approver.
func TestRemotePlacementMakesNoCredentialedCall(t *testing.T) {
	g := remoteRig(t)
	_, es := remoteTurn(t, g)
	if n := g.hits.Load(); n != 0 {
		t.Errorf("the upstream saw %d credentialed requests", n)
	}
	if n := g.approvals.Load(); n != 0 {
		t.Errorf("the Approver was asked %d times", n)
	}
	if !slices.ContainsFunc(es, func(e eventlog.Entry) bool {
		return e.Kind == eventlog.KindDenial && e.Code == string(runner.CodeCapabilityUnsupported)
	}) {
		t.Errorf("no denial with code %s in %v", runner.CodeCapabilityUnsupported, rows(es))
	}
}

// TestRemotePlacementNeverIsolationChecked: the evidence of a session
// placed remote is matched with the enrollment's placement, so its
// assurance is identity_only, whatever its Description says.
func TestRemotePlacementNeverIsolationChecked(t *testing.T) {
	_, es := remoteTurn(t, remoteRig(t))
	started := false
	for _, e := range es {
		if e.Result == string(adapters.AssuranceIsolationChecked) {
			t.Errorf("logged %v", rows([]eventlog.Entry{e}))
		}
		if e.Kind == eventlog.KindProcessStarted {
			started = true
			if e.Result != string(adapters.AssuranceIdentityOnly) {
				t.Errorf("process_started %s, want %s", e.Result, adapters.AssuranceIdentityOnly)
			}
		}
	}
	if !started {
		t.Fatalf("no process started: %v", rows(es))
	}
}

// TestWiredInstanceEnrolledInProcessRefused: a provider the Runner
// enrolls itself as in_process (its own word) but whose instance runs
// across acp/wire is judged by what the instance is: the instance is
// destroyed unused and Launch refused with description_mismatch.
func TestWiredInstanceEnrolledInProcessRefused(t *testing.T) {
	var created atomic.Int64
	g := newRig(t, func(c *runner.Config, _ *rig) { c.Provider = claimsInProcess{created: &created, t: t} })
	s := g.admitted(t)
	_, err := s.Launch(context.Background(), runner.LaunchConfig{Process: agentSpec(t, runnertest.QuickstartScript)})
	if !errors.Is(err, runner.CodeDescriptionMismatch) {
		t.Fatalf("Launch = %v, want %s", err, runner.CodeDescriptionMismatch)
	}
	for _, e := range entries(t, g.Runner, member.Session) {
		if e.Kind == eventlog.KindProcessStarted {
			t.Errorf("a process started: %v", rows([]eventlog.Entry{e}))
		}
	}
}

// TestNewRefusesUnreachableRegistration: a tool registration no rule of
// its Connection allows (another path, another method, another port) is
// refused by New, not when first called.
func TestNewRefusesUnreachableRegistration(t *testing.T) {
	rules := []egress.Rule{{Host: "api.example.com", Port: 443, PathPrefix: "/v1/issues", Methods: []string{"GET"}}}
	reg := authz.Registration{Capability: "issues.list", Operation: "GET", Resource: "https://api.example.com/v1/issues", Credential: cred, Effect: authz.ReadOnly,
		Tool: authz.ToolDescriptor{Name: "list_issues", InputSchema: []byte(`{"type":"object"}`)}}
	cfg := func(reg authz.Registration) runner.Config {
		return runner.Config{Dir: t.TempDir(), Connections: []runner.Connection{{Credential: cred, Provider: integration, Rules: rules, Tools: []authz.Registration{reg}}}}
	}
	r, err := runner.New(context.Background(), cfg(reg))
	if err != nil {
		t.Fatalf("a reachable registration: %v", err)
	}
	r.Close()
	for name, edit := range map[string]func(*authz.Registration){
		"path":   func(r *authz.Registration) { r.Resource = "https://api.example.com/v2/issues" },
		"method": func(r *authz.Registration) { r.Operation = "DELETE" },
		"port":   func(r *authz.Registration) { r.Resource = "https://api.example.com:8443/v1/issues" },
		"host":   func(r *authz.Registration) { r.Resource = "https://other.example.com/v1/issues" },
	} {
		bad := reg
		edit(&bad)
		if _, err := runner.New(context.Background(), cfg(bad)); !errors.Is(err, runner.CodeRegistrationUnreachable) {
			t.Errorf("%s: New = %v, want %s", name, err, runner.CodeRegistrationUnreachable)
		}
	}
}

// destroyFailsOnce is a wired instance whose first Destroy fails (the
// provider could not be reached) and whose later ones destroy it.
type destroyFailsOnce struct {
	adapters.Instance
	adapters.Wired
	destroys *atomic.Int64
}

var errProviderUnreachable = errors.New("provider unreachable")

func (d destroyFailsOnce) Destroy(ctx context.Context) error {
	if d.destroys.Add(1) == 1 {
		return errProviderUnreachable
	}
	return d.Instance.Destroy(ctx)
}

// claimsInProcessDestroyFails is claimsInProcess whose instances fail
// their first Destroy.
type claimsInProcessDestroyFails struct {
	claimsInProcess
	destroys *atomic.Int64
}

func (p claimsInProcessDestroyFails) Create(ctx context.Context, spec adapters.InstanceSpec) (adapters.Instance, error) {
	inst, err := p.claimsInProcess.Create(ctx, spec)
	if err != nil {
		return nil, err
	}
	return destroyFailsOnce{Instance: inst, Wired: inst.(adapters.Wired), destroys: p.destroys}, nil
}

// TestWiredInstanceWhoseDestroyFailsIsDestroyedLater: the wrongly wired
// instance Launch refuses is destroyed unused; when that Destroy fails,
// Launch returns the failure with description_mismatch, the session keeps
// the instance (a second Launch makes no other and asks Destroy again,
// never running anything in it), and Close destroys it. Before, the
// failure was dropped and the instance left running at the provider
// with no handle.
func TestWiredInstanceWhoseDestroyFailsIsDestroyedLater(t *testing.T) {
	var created, destroys atomic.Int64
	g := newRig(t, func(c *runner.Config, _ *rig) {
		c.Provider = claimsInProcessDestroyFails{claimsInProcess: claimsInProcess{created: &created, t: t}, destroys: &destroys}
	})
	s := g.admitted(t)
	launch := func() error {
		_, err := s.Launch(context.Background(), runner.LaunchConfig{Process: agentSpec(t, runnertest.QuickstartScript)})
		return err
	}
	if err := launch(); !errors.Is(err, runner.CodeDescriptionMismatch) || !errors.Is(err, errProviderUnreachable) {
		t.Fatalf("first Launch = %v, want %s with the Destroy's failure", err, runner.CodeDescriptionMismatch)
	}
	if err := launch(); !errors.Is(err, runner.CodeDescriptionMismatch) || errors.Is(err, errProviderUnreachable) {
		t.Fatalf("second Launch = %v, want %s alone", err, runner.CodeDescriptionMismatch)
	}
	if n := destroys.Load(); n != 2 {
		t.Errorf("Destroy asked %d times by two Launches, want 2 (the failed one, then again)", n)
	}
	if n := created.Load(); n != 1 {
		t.Errorf("%d instances created, want 1", n)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close = %v", err)
	}
	if n := destroys.Load(); n != 2 {
		t.Errorf("Destroy asked %d times in all, want 2 (Close asks nothing once destroyed)", n)
	}
	for _, e := range entries(t, g.Runner, member.Session) {
		if e.Kind == eventlog.KindProcessStarted {
			t.Errorf("a process started: %v", rows([]eventlog.Entry{e}))
		}
	}
}
