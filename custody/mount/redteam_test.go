package mount

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The red team of mounts (docs/changes/wt-rtstore.md): a hijacked sandbox,
// or whoever can change the host paths a plan's sources name, racing the
// Resolver.

// TestAttachPinsTheDirItOpened: Attach opens each source's Dir, then
// checks the host directories for overlap. A Dir swapped between the two
// (a symlink on its path pointed elsewhere) must not let the overlap check
// look at another directory than the one the mount serves: here the inner
// mount's link is opened at a directory inside the writable project tree
// and then pointed at an unrelated one, so a check by path alone passes
// a memory directory the project tree can rewrite.
func TestAttachPinsTheDirItOpened(t *testing.T) {
	f := newFixture(t)
	nested := filepath.Join(f.root, "src")
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(nested, link); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { afterOpenRoot = func(string) {} })
	swapped := false
	afterOpenRoot = func(name string) {
		if name == "m" && !swapped {
			swapped = true
			os.Remove(link)
			os.Symlink(f.outside, link)
		}
	}
	rw := Mount{Name: "p", Kind: ProjectTree, Target: "/p", Writable: true}
	ro := Mount{Name: "m", Kind: MemoryDir, Target: "/m"}
	_, err := f.r.Attach("s2", f.lease.ID, scope, Source{Mount: rw, Dir: f.root}, Source{Mount: ro, Dir: link})
	if !swapped {
		t.Fatal("the swap hook did not run")
	}
	if err == nil {
		body, _ := f.r.ReadFile(context.Background(), "s2", "m", "main.go")
		f.r.Detach("s2")
		t.Fatalf("attached a read-only mount inside a writable one (it serves %q)", body)
	}
	if !errors.Is(err, CodePlanInvalid) || !strings.Contains(err.Error(), "changed while it was attached") {
		t.Fatalf("err = %v, want %s: its host directory changed while it was attached", err, CodePlanInvalid)
	}
	if bytes.Contains([]byte(err.Error()), []byte(f.root)) || bytes.Contains([]byte(err.Error()), []byte(link)) {
		t.Fatalf("the refusal names a host path: %v", err)
	}
}

// TestDetachLeavesNothingServed: after Detach, every read and write of
// the session is refused with CodeSessionUnknown, also for a session id
// attached again later with other mounts; reads racing Detach (run with
// -race) either return the file or a refusal or *Error, never another
// file's body and never a panic.
func TestDetachLeavesNothingServed(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				b, err := f.r.ReadFile(ctx, "s1", "project", "README.md")
				var me *Error
				switch {
				case err == nil && string(b) != "hello":
					t.Errorf("read %q", b)
					return
				case err != nil && !errors.Is(err, CodeSessionUnknown) && !errors.As(err, &me):
					t.Errorf("read racing Detach: %v", err)
					return
				}
			}
		}()
	}
	if err := f.r.Detach("s1"); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	_, err := f.r.ReadFile(ctx, "s1", "project", "README.md")
	wantCode(t, err, CodeSessionUnknown)
	wantCode(t, f.r.WriteFile(ctx, "s1", "memory", "notes.md", []byte("x")), CodeSessionUnknown)
	wantCode(t, f.r.Detach("s1"), CodeSessionUnknown)
	if _, err := f.r.Attach("s1", f.lease.ID, scope, Source{Mount: Mount{Name: "other", Kind: MemoryDir, Target: "/o"}, Dir: f.outside}); err != nil {
		t.Fatal(err)
	}
	_, err = f.r.ReadFile(ctx, "s1", "project", "README.md")
	wantCode(t, err, CodeMountUnknown)
}

// TestFileSizeEdges: a file and a body of exactly MaxFileBytes are served
// and written; one byte more is refused (TestRefusals).
func TestFileSizeEdges(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if err := os.Truncate(filepath.Join(f.root, "README.md"), MaxFileBytes); err != nil {
		t.Fatal(err)
	}
	b, err := f.read(t, "README.md")
	if err != nil || len(b) != MaxFileBytes {
		t.Fatalf("read of MaxFileBytes: %d bytes, %v", len(b), err)
	}
	if err := f.r.WriteFile(ctx, "s1", "memory", "big", make([]byte, MaxFileBytes)); err != nil {
		t.Fatalf("write of MaxFileBytes: %v", err)
	}
}

// TestWriteRefusesNonRegularWithoutChange: a write to a directory or a
// FIFO inside a writable mount is refused and changes nothing; a write
// through a symlink that stays inside the mount writes its target there,
// never outside.
func TestWriteRefusesNonRegularWithoutChange(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if err := os.Mkdir(filepath.Join(f.memory, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := f.r.WriteFile(ctx, "s1", "memory", "dir", []byte("x")); err == nil {
		t.Fatal("wrote a directory")
	}
	if err := os.Symlink("notes.md", filepath.Join(f.memory, "alias")); err != nil {
		t.Fatal(err)
	}
	if err := f.r.WriteFile(ctx, "s1", "memory", "alias", []byte("through")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(f.memory, "notes.md")); string(b) != "through" {
		t.Fatalf("notes.md = %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(f.outside, "secret")); string(b) != outsideBody {
		t.Fatalf("outside file changed: %q", b)
	}
}

// TestHostileNamesStayBounded: names of 1 MiB, with NUL, CR LF, invalid
// UTF-8 or a 300-byte element are refused (or fail to open) with an error
// of bounded length that names no host path and no file body (a writable
// mount may create a file named with CR LF: that is the grant).
func TestHostileNamesStayBounded(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for _, name := range []string{
		string(bytes.Repeat([]byte("a/"), 512<<10)) + "x",
		"README.md\x00../../outside/secret",
		"README.md\r\nX: y",
		"\xff\xfe",
		string(bytes.Repeat([]byte("b"), 300)),
		"src/" + string(bytes.Repeat([]byte("c"), 300)) + "/main.go",
	} {
		_, err := f.r.ReadFile(ctx, "s1", "project", name)
		werr := f.r.WriteFile(ctx, "s1", "memory", name, []byte("x"))
		if err == nil {
			t.Fatalf("name of %d bytes served", len(name))
		}
		for _, e := range []error{err, werr} {
			if e == nil {
				continue // a writable mount may create a file of that name: the grant
			}
			msg := e.Error()
			if len(msg) > 512 || bytes.Contains([]byte(msg), []byte(f.root)) || bytes.Contains([]byte(msg), []byte(f.memory)) || bytes.Contains([]byte(msg), []byte(outsideBody)) {
				t.Fatalf("name of %d bytes: error of %d bytes: %.200s", len(name), len(msg), msg)
			}
		}
	}
	for _, id := range []string{string(bytes.Repeat([]byte("s"), 1<<20)), "S1", "s1\x00"} {
		_, err := f.r.ReadFile(ctx, id, "project", "README.md")
		wantCode(t, err, CodeSessionUnknown)
		if len(err.Error()) > 512 {
			t.Fatalf("session id of %d bytes: error of %d bytes", len(id), len(err.Error()))
		}
	}
}

// TestHardLinkIsRefused: os.Root stops symlinks, but a hard link to a
// file outside the tree, placed in a mount by something that can see both
// (not the Resolver, which makes no links), is an ordinary file of the
// tree by its name. A file with more than one name is neither read nor
// written (a write leaves it as it was: it is not even emptied), whether
// the other name is outside the mount or inside it; once it has one name
// again it is served.
func TestHardLinkIsRefused(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	secret := filepath.Join(f.outside, "secret")
	if err := os.Link(secret, filepath.Join(f.memory, "linked")); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	b, err := f.r.ReadFile(ctx, "s1", "memory", "linked")
	wantCode(t, err, CodeFileLinked)
	if b != nil || strings.Contains(err.Error(), outsideBody) || strings.Contains(err.Error(), f.outside) {
		t.Fatalf("a refused read returned %q, %v", b, err)
	}
	wantCode(t, f.r.WriteFile(ctx, "s1", "memory", "linked", []byte("changed")), CodeFileLinked)
	if b, _ := os.ReadFile(secret); string(b) != outsideBody {
		t.Fatalf("outside file after a refused write through a hard link: %q", b)
	}

	// Both names inside the mount: refused as well; the count is what is
	// checked, not where the other name is.
	if err := os.Link(filepath.Join(f.memory, "notes.md"), filepath.Join(f.memory, "notes-again.md")); err != nil {
		t.Fatal(err)
	}
	_, err = f.r.ReadFile(ctx, "s1", "memory", "notes.md")
	wantCode(t, err, CodeFileLinked)
	if err := os.Remove(filepath.Join(f.memory, "notes-again.md")); err != nil {
		t.Fatal(err)
	}
	if b, err := f.r.ReadFile(ctx, "s1", "memory", "notes.md"); err != nil || string(b) != "remember" {
		t.Fatalf("a file with one name again: %q, %v", b, err)
	}
	if err := f.r.WriteFile(ctx, "s1", "memory", "notes.md", []byte("new")); err != nil {
		t.Fatal(err)
	}
}

// TestRefusedWriteLeavesTheFile: WriteFile checks what it opened before it
// empties it, so a write refused for the file's kind or names changes
// nothing, and an accepted write replaces the whole body.
func TestRefusedWriteLeavesTheFile(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	notes := filepath.Join(f.memory, "notes.md")
	if err := os.Link(notes, filepath.Join(f.outside, "notes-link")); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	wantCode(t, f.r.WriteFile(ctx, "s1", "memory", "notes.md", nil), CodeFileLinked)
	if b, _ := os.ReadFile(notes); string(b) != "remember" {
		t.Fatalf("after a refused write: %q", b)
	}
	if err := os.Remove(filepath.Join(f.outside, "notes-link")); err != nil {
		t.Fatal(err)
	}
	if err := f.r.WriteFile(ctx, "s1", "memory", "notes.md", []byte("re")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(notes); string(b) != "re" {
		t.Fatalf("a shorter body must replace the whole file: %q", b)
	}
}

// statOnly is a FileInfo of a regular file with no stat record.
type statOnly struct{ fs.FileInfo }

func (statOnly) Mode() fs.FileMode { return 0o644 }
func (statOnly) Sys() any          { return nil }

// TestLinkCountUnknownIsRefused: a file whose stat record gives no link
// count is not served; not knowing is not one name.
func TestLinkCountUnknownIsRefused(t *testing.T) {
	wantCode(t, checkServable("memory", "notes.md", statOnly{}), CodeFileLinked)
}
