package adapters_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/acp/wire"
	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/adaptertest"
	"github.com/checkfu/checkfu/admission"
	"github.com/checkfu/checkfu/admission/admissiontest"
)

func goodDescription() adapters.Description {
	return adapters.Description{
		Identity:                checkfu.ProviderRevision{Provider: "checkfu:test-provider", Revision: "1"},
		MaterializationRevision: "test-1",
		Placement:               admission.PlacementRemote,
		Capability:              admission.RunnerProviderCapability{NetworkModes: []string{"none"}, ListDir: true},
		Members:                 adapters.Members{ListDir: true},
	}
}

func TestCheck(t *testing.T) {
	if err := adapters.Check(goodDescription()); err != nil {
		t.Fatalf("Check(good) = %v", err)
	}
	for name, f := range map[string]func(*adapters.Description){
		"no provider":             func(d *adapters.Description) { d.Identity.Provider = "" },
		"no revision":             func(d *adapters.Description) { d.Identity.Revision = "" },
		"no materialization":      func(d *adapters.Description) { d.MaterializationRevision = "" },
		"capability out of order": func(d *adapters.Description) { d.Capability.NetworkModes = []string{"none", "allowlist"} },
		"remote runner_enforced": func(d *adapters.Description) {
			d.Capability.Enforcement[admission.AxisImage] = admission.RunnerEnforced
		},
		"unknown placement":          func(d *adapters.Description) { d.Placement = "elsewhere" },
		"list_dir member disagrees":  func(d *adapters.Description) { d.Members.ListDir = false },
		"snapshots member disagrees": func(d *adapters.Description) { d.Members.Snapshots = true },
	} {
		d := goodDescription()
		f(&d)
		if err := adapters.Check(d); !errors.Is(err, adapters.CodeProviderInvalid) {
			t.Errorf("%s: Check = %v, want %s", name, err, adapters.CodeProviderInvalid)
		}
	}
	d := goodDescription()
	d.Placement = admission.PlacementInProcess
	d.Capability.Enforcement[admission.AxisImage] = admission.RunnerEnforced
	if err := adapters.Check(d); err != nil {
		t.Errorf("in-process runner_enforced: Check = %v", err)
	}
}

// TestCheckAcceptsGenerated: every generated description passes Check,
// so the generators integrators reuse are what they say.
func TestCheckAcceptsGenerated(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		if err := adapters.Check(adaptertest.Description().Draw(t, "d")); err != nil {
			t.Fatal(err)
		}
	})
}

func TestGradeIsCapped(t *testing.T) {
	d := goodDescription()
	d.Capability.EgressCertification = checkfu.SecurityBoundary
	if g := adapters.Grade(d, nil); g != checkfu.AdvisoryFilter {
		t.Errorf("advertised security_boundary without a receipt: Grade = %v, want advisory_filter", g)
	}
	receipt, _ := admissiontest.Receipt(t, d.Identity)
	if g := adapters.Grade(d, receipt); g != checkfu.SecurityBoundary {
		t.Errorf("with a receipt for the exact pair: Grade = %v, want security_boundary", g)
	}
	d.Capability.EgressCertification = checkfu.Unsupported
	if g := adapters.Grade(d, receipt); g != checkfu.Unsupported {
		t.Errorf("advertised unsupported with a receipt: Grade = %v, want unsupported", g)
	}
	other := d
	other.Identity.Revision = "2"
	other.Capability.EgressCertification = checkfu.SecurityBoundary
	if g := adapters.Grade(other, receipt); g != checkfu.AdvisoryFilter {
		t.Errorf("a receipt for another revision: Grade = %v, want advisory_filter", g)
	}
}

func TestSlot(t *testing.T) {
	var s adapters.Slot
	if err := s.Acquire(); err != nil {
		t.Fatal(err)
	}
	if err := s.Acquire(); !errors.Is(err, wire.CodeProcessAlreadyOpen) {
		t.Errorf("second Acquire = %v, want %s", err, wire.CodeProcessAlreadyOpen)
	}
	s.Release()
	if err := s.Acquire(); err != nil {
		t.Errorf("Acquire after Release = %v", err)
	}
	s.Release()
	if !s.Destroy() || s.Destroy() {
		t.Error("Destroy did not report the first call only")
	}
	if err := s.Acquire(); !errors.Is(err, adapters.CodeInstanceDestroyed) {
		t.Errorf("Acquire after Destroy = %v, want %s", err, adapters.CodeInstanceDestroyed)
	}
}

// memberProvider declares what decl says; its instance implements every
// optional member.
type memberProvider struct{ decl adapters.Members }

func (p memberProvider) Describe() adapters.Description {
	d := goodDescription()
	d.Members = p.decl
	return d
}
func (memberProvider) Create(context.Context, adapters.InstanceSpec) (adapters.Instance, error) {
	return nil, nil
}

type fullInstance struct{ adapters.Instance }

func (fullInstance) ListDir(context.Context, string) ([]string, error)  { return []string{"a"}, nil }
func (fullInstance) Snapshot(context.Context) (string, error)           { return "snap", nil }
func (fullInstance) ReadFile(context.Context, string, io.Writer) error  { return nil }
func (fullInstance) WriteFile(context.Context, string, io.Reader) error { return nil }

type bareInstance struct{ adapters.Instance }

// TestMembersAreDeclaredNotDiscovered: an undeclared member is refused
// even when the instance implements it; a declared one the instance
// lacks is refused as unimplemented.
func TestMembersAreDeclaredNotDiscovered(t *testing.T) {
	ctx := context.Background()
	calls := func(p adapters.Provider, inst adapters.Instance) []error {
		_, e1 := adapters.ListDir(ctx, p, inst, ".")
		_, e2 := adapters.Snapshot(ctx, p, inst)
		e3 := adapters.ReadFile(ctx, p, inst, "f", io.Discard)
		e4 := adapters.WriteFile(ctx, p, inst, "f", bytes.NewReader(nil))
		return []error{e1, e2, e3, e4}
	}
	for i, err := range calls(memberProvider{}, fullInstance{}) {
		if !errors.Is(err, adapters.CodeMemberUndeclared) {
			t.Errorf("undeclared member %d = %v, want %s", i, err, adapters.CodeMemberUndeclared)
		}
	}
	all := memberProvider{adapters.Members{Snapshots: true, ListDir: true, FileTransfer: true}}
	for i, err := range calls(all, bareInstance{}) {
		if !errors.Is(err, adapters.CodeMemberUnimplemented) {
			t.Errorf("declared, unimplemented member %d = %v, want %s", i, err, adapters.CodeMemberUnimplemented)
		}
	}
	for i, err := range calls(all, fullInstance{}) {
		if err != nil {
			t.Errorf("declared, implemented member %d = %v", i, err)
		}
	}
}

// wireServer serves argv over acp/wire on a Unix socket and returns its
// endpoint.
func wireServer(t *testing.T, argv ...string) adapters.WireEndpoint {
	t.Helper()
	path := filepath.Join(t.TempDir(), "w.sock")
	ln, err := wire.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	s := &wire.Server{Command: func() *exec.Cmd { return exec.Command(argv[0], argv[1:]...) }}
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	var d net.Dialer
	return adapters.WireEndpoint{Dial: func(ctx context.Context) (net.Conn, error) { return d.DialContext(ctx, "unix", path) }}
}

func TestOpenWire(t *testing.T) {
	ev := adapters.Evidence{Instance: "w"}
	p := adapters.OpenWire(context.Background(), wireServer(t, "/bin/sh", "-c", "cat; printf err >&2; exit 3"), ev)
	in := bytes.Repeat([]byte("0123456789\x00\xff"), 100000)
	go func() {
		p.Stdin().Write(in)
		p.Stdin().Close()
	}()
	errc := make(chan []byte, 1)
	go func() { b, _ := io.ReadAll(p.Stderr()); errc <- b }()
	out, _ := io.ReadAll(p.Stdout())
	status, err := p.Wait()
	if !bytes.Equal(out, in) || string(<-errc) != "err" || status != 3 || err != nil {
		t.Errorf("over the wire: %d of %d bytes, status %d, %v", len(out), len(in), status, err)
	}
	if p.Evidence().Instance != ev.Instance {
		t.Error("Evidence is not the one given")
	}
}

func TestOpenWireKill(t *testing.T) {
	p := adapters.OpenWire(context.Background(), wireServer(t, "/bin/sh", "-c", "printf ready; sleep 60"), adapters.Evidence{})
	buf := make([]byte, 5)
	if _, err := io.ReadFull(p.Stdout(), buf); err != nil {
		t.Fatal(err)
	}
	p.Kill()
	p.Kill()
	done := make(chan struct{})
	go func() {
		status, err := p.Wait()
		if status == 0 && err == nil {
			t.Error("a killed process reported 0 and no error")
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Wait did not return after Kill")
	}
}
