package mount

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/address"
	"github.com/checkfu/checkfu/custody/authz"
)

const outsideBody = "OUTSIDE-SECRET-BODY"

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

var scope = authz.LeaseScope{Service: "platform", Gateway: "gw", Actor: "alice"}

type fixture struct {
	r       *Resolver
	leases  *authz.Leases
	lease   authz.Lease
	clock   *clock
	root    string // the project tree
	memory  string // the memory directory
	outside string // a directory beside them the sandbox must never reach
	plan    Plan
}

func write(t testing.TB, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	base := t.TempDir()
	f := &fixture{
		clock:   &clock{t: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)},
		root:    filepath.Join(base, "project"),
		memory:  filepath.Join(base, "memory"),
		outside: filepath.Join(base, "outside"),
	}
	write(t, filepath.Join(f.root, "README.md"), "hello")
	write(t, filepath.Join(f.root, "src", "main.go"), "package main")
	write(t, filepath.Join(f.memory, "notes.md"), "remember")
	write(t, filepath.Join(f.outside, "secret"), outsideBody)
	write(t, filepath.Join(f.outside, "main.go"), outsideBody)

	reg, err := authz.NewRegistry(authz.Registration{
		Capability: "project.files",
		Operation:  "GET",
		Resource:   "https://platform.example/files",
		Credential: custody.Binding{Namespace: "acme", Integration: "platform", Handle: address.MustParseHandle("ch_aaaaaaaaaaaaaaaaaaaaaaaaaa")},
		Effect:     authz.ReadOnly,
		Tool:       authz.ToolDescriptor{Name: "read_file", InputSchema: json.RawMessage(`{"type":"object"}`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	cat, err := authz.NewCatalog(authz.ProviderEntry{Revision: checkfu.ProviderRevision{Provider: "checkfu:platform", Revision: "1"}, Capabilities: []string{"project.files"}})
	if err != nil {
		t.Fatal(err)
	}
	f.leases, err = authz.NewLeases(authz.LeaseConfig{Catalog: cat, Registry: reg, Now: f.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	f.lease, err = f.leases.Issue(authz.LeaseRequest{
		Provider:     checkfu.ProviderRevision{Provider: "checkfu:platform", Revision: "1"},
		Capabilities: []string{"project.files"},
		Scope:        scope,
		Budget:       1,
		TTL:          time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	f.r = NewResolver(f.leases)
	f.plan, err = f.r.Attach("s1", f.lease.ID, scope,
		Source{Mount: Mount{Name: "project", Kind: ProjectTree, Target: "/workspace"}, Dir: f.root},
		Source{Mount: Mount{Name: "memory", Kind: MemoryDir, Target: "/memory", Writable: true}, Dir: f.memory},
	)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.r.Detach("s1") })
	return f
}

func wantCode(t *testing.T, err error, code checkfu.Code) {
	t.Helper()
	if !errors.Is(err, code) {
		t.Fatalf("err = %v, want code %s", err, code)
	}
}

func (f *fixture) read(t *testing.T, name string) ([]byte, error) {
	t.Helper()
	b, err := f.r.ReadFile(context.Background(), "s1", "project", name)
	if err != nil && len(b) != 0 {
		t.Fatalf("refused read returned %d bytes", len(b))
	}
	if strings.Contains(string(b), outsideBody) {
		t.Fatalf("read %q returned the outside file", name)
	}
	return b, err
}

func TestReadFile(t *testing.T) {
	f := newFixture(t)
	if err := os.Symlink("src/main.go", filepath.Join(f.root, "inside-link")); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"README.md": "hello", "src/main.go": "package main", "inside-link": "package main"} {
		got, err := f.read(t, name)
		if err != nil || string(got) != want {
			t.Errorf("ReadFile(%q) = %q, %v; want %q", name, got, err, want)
		}
	}
	// The lease is checked, never spent: many reads on a budget of 1.
	if n, _ := f.leases.Remaining(f.lease.ID); n != 1 {
		t.Fatalf("reads spent lease budget: %d left", n)
	}
}

func TestDotDotRefused(t *testing.T) {
	f := newFixture(t)
	for _, name := range []string{"../outside/secret", "src/../../outside/secret", "..", "/etc/passwd", "", ".", "src//main.go", "./README.md", "src/"} {
		_, err := f.read(t, name)
		wantCode(t, err, CodePathInvalid)
	}
}

func TestSymlinkEscapeRefused(t *testing.T) {
	f := newFixture(t)
	links := map[string]string{
		"rel-link":  "../outside/secret",
		"abs-link":  filepath.Join(f.outside, "secret"),
		"up":        "..",
		"src/deep":  "../../outside",
		"loop-a":    "loop-b",
		"dangling":  "../outside/none",
		"dir-alias": f.outside,
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(f.root, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"rel-link", "abs-link", "up/outside/secret", "src/deep/secret", "dangling", "dir-alias/secret"} {
		_, err := f.read(t, name)
		wantCode(t, err, CodePathEscapes)
	}
	// A symlink loop is refused too, as a failure or a refusal, never served.
	if _, err := f.read(t, "loop-a"); err == nil {
		t.Fatal("symlink loop served")
	}
}

// The check (lookup) and the open are separated by afterCheck; a symlink
// swapped in there, for the leaf or for a parent directory, must still be
// refused, because os.Root resolves every component at open time.
func TestSymlinkSwappedAfterCheck(t *testing.T) {
	f := newFixture(t)
	swaps := map[string]func(){
		"README.md": func() {
			os.Remove(filepath.Join(f.root, "README.md"))
			os.Symlink(filepath.Join(f.outside, "secret"), filepath.Join(f.root, "README.md"))
		},
		"src/main.go": func() {
			os.Rename(filepath.Join(f.root, "src"), filepath.Join(f.root, "src-old"))
			os.Symlink(f.outside, filepath.Join(f.root, "src"))
		},
	}
	t.Cleanup(func() { afterCheck = func(string) {} })
	for name, swap := range swaps {
		swapped := false
		afterCheck = func(n string) {
			if n == name && !swapped {
				swapped = true
				swap()
			}
		}
		_, err := f.read(t, name)
		if !swapped {
			t.Fatalf("%s: the swap hook did not run", name)
		}
		wantCode(t, err, CodePathEscapes)
	}
	// Writes resolve the same way.
	write(t, filepath.Join(f.memory, "notes2.md"), "x")
	afterCheck = func(string) {
		os.Remove(filepath.Join(f.memory, "notes2.md"))
		os.Symlink(filepath.Join(f.outside, "secret"), filepath.Join(f.memory, "notes2.md"))
	}
	err := f.r.WriteFile(context.Background(), "s1", "memory", "notes2.md", []byte("overwrite"))
	wantCode(t, err, CodePathEscapes)
	if b, _ := os.ReadFile(filepath.Join(f.outside, "secret")); string(b) != outsideBody {
		t.Fatalf("outside file overwritten: %q", b)
	}
}

func TestReadChecksSessionLease(t *testing.T) {
	f := newFixture(t)
	if err := f.leases.Revoke(f.lease.ID); err != nil {
		t.Fatal(err)
	}
	_, err := f.read(t, "README.md")
	wantCode(t, err, authz.CodeLeaseRevoked)
	wantCode(t, f.r.WriteFile(context.Background(), "s1", "memory", "notes.md", nil), authz.CodeLeaseRevoked)

	g := newFixture(t)
	g.clock.Advance(time.Minute)
	_, err = g.read(t, "README.md")
	wantCode(t, err, authz.CodeLeaseExpired)

	_, err = g.r.Attach("s2", g.lease.ID, scope, Source{Mount: Mount{Name: "p", Kind: ProjectTree, Target: "/p"}, Dir: g.root})
	wantCode(t, err, authz.CodeLeaseExpired)

	h := newFixture(t)
	other := scope
	other.Actor = "mallory"
	_, err = h.r.Attach("s2", h.lease.ID, other, Source{Mount: Mount{Name: "p", Kind: ProjectTree, Target: "/p"}, Dir: h.root})
	wantCode(t, err, authz.CodeLeaseOutOfScope)
	_, err = h.r.Attach("s3", "lease_nope", scope, Source{Mount: Mount{Name: "p", Kind: ProjectTree, Target: "/p"}, Dir: h.root})
	wantCode(t, err, authz.CodeLeaseUnknown)
}

func TestRefusals(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	wantCode(t, f.r.WriteFile(ctx, "s1", "project", "README.md", []byte("x")), CodeReadOnly)
	if err := f.r.WriteFile(ctx, "s1", "memory", "notes.md", []byte("new")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(f.memory, "notes.md")); string(b) != "new" {
		t.Fatalf("memory write: %q", b)
	}
	_, err := f.read(t, "src")
	wantCode(t, err, CodeNotRegular)
	_, err = f.read(t, "nope")
	wantCode(t, err, CodeNotFound)
	if err := os.Truncate(filepath.Join(f.root, "README.md"), MaxFileBytes+1); err != nil {
		t.Fatal(err)
	}
	_, err = f.read(t, "README.md")
	wantCode(t, err, CodeTooLarge)
	wantCode(t, f.r.WriteFile(ctx, "s1", "memory", "big", make([]byte, MaxFileBytes+1)), CodeTooLarge)
	_, err = f.r.ReadFile(ctx, "s9", "project", "README.md")
	wantCode(t, err, CodeSessionUnknown)
	_, err = f.r.ReadFile(ctx, "s1", "other", "README.md")
	wantCode(t, err, CodeMountUnknown)
	var zero Resolver
	_, err = zero.ReadFile(ctx, "s1", "project", "README.md")
	wantCode(t, err, CodeSessionUnknown)
	_, err = zero.Attach("s1", f.lease.ID, scope, Source{Mount: Mount{Name: "p", Kind: ProjectTree, Target: "/p"}, Dir: f.root})
	wantCode(t, err, CodeSessionUnknown)
}

func TestAttachRefusesBadPlans(t *testing.T) {
	f := newFixture(t)
	good := Mount{Name: "p", Kind: ProjectTree, Target: "/p"}
	for _, srcs := range [][]Source{
		{{Mount: Mount{Name: "P", Kind: ProjectTree, Target: "/p"}, Dir: f.root}},
		{{Mount: Mount{Name: "p", Target: "/p"}, Dir: f.root}},
		{{Mount: Mount{Name: "p", Kind: ProjectTree, Target: "p"}, Dir: f.root}},
		{{Mount: Mount{Name: "p", Kind: ProjectTree, Target: "/p/../etc"}, Dir: f.root}},
		{{Mount: Mount{Name: "p", Kind: ProjectTree, Target: "/"}, Dir: f.root}},
		{{Mount: good, Dir: f.root}, {Mount: Mount{Name: "q", Kind: MemoryDir, Target: "/p/q"}, Dir: f.memory}},
		{{Mount: good, Dir: f.root}, {Mount: Mount{Name: "p", Kind: MemoryDir, Target: "/q"}, Dir: f.memory}},
		nil,
	} {
		_, err := f.r.Attach("s2", f.lease.ID, scope, srcs...)
		wantCode(t, err, CodePlanInvalid)
	}
	_, err := f.r.Attach("s1", f.lease.ID, scope, Source{Mount: good, Dir: f.root})
	wantCode(t, err, CodePlanInvalid) // already attached
}

// The plan is credential-free by construction: its type can hold only
// strings, booleans and small integers, and its JSON names neither the
// lease nor any host path.
func TestPlanHoldsNoToken(t *testing.T) {
	var walk func(reflect.Type, string)
	walk = func(ty reflect.Type, path string) {
		switch ty.Kind() {
		case reflect.String, reflect.Bool, reflect.Uint8:
		case reflect.Slice:
			walk(ty.Elem(), path+"[]")
		case reflect.Struct:
			for i := range ty.NumField() {
				walk(ty.Field(i).Type, path+"."+ty.Field(i).Name)
			}
		default:
			t.Errorf("%s is a %s: a plan may hold only plain data", path, ty)
		}
	}
	walk(reflect.TypeFor[Plan](), "Plan")

	f := newFixture(t)
	doc, err := json.Marshal(f.plan)
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{f.lease.ID, f.root, f.memory, filepath.Dir(f.root), "platform", "alice"} {
		if strings.Contains(string(doc), leak) {
			t.Errorf("plan JSON %s contains %q", doc, leak)
		}
	}
	want := `{"session":"s1","mounts":[{"name":"project","kind":"project_tree","target":"/workspace","writable":false},{"name":"memory","kind":"memory_dir","target":"/memory","writable":true}]}`
	if string(doc) != want {
		t.Errorf("plan JSON\n%s\nwant\n%s", doc, want)
	}
	rv := reflect.ValueOf(f.plan)
	var strs []string
	var collect func(reflect.Value)
	collect = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.String:
			strs = append(strs, v.String())
		case reflect.Slice:
			for i := range v.Len() {
				collect(v.Index(i))
			}
		case reflect.Struct:
			for i := range v.NumField() {
				collect(v.Field(i))
			}
		}
	}
	collect(rv)
	for _, s := range strs {
		if s == f.lease.ID {
			t.Errorf("plan holds the lease id")
		}
	}
}

// TestEscapeErrorText pins the text os.Root uses for an escape, which
// escapes() matches because the os package does not export the error.
func TestEscapeErrorText(t *testing.T) {
	dir := t.TempDir()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	_, err = root.Open("../x")
	if err == nil || !escapes(errors.Unwrap(err)) {
		t.Fatalf("os.Root escape error %v no longer matches escapes()", err)
	}
}
