package runner_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/address"
	"github.com/checkfu/checkfu/runner"
	"github.com/checkfu/checkfu/runner/runnertest"
)

func localWrapper(t testing.TB, fill byte) runner.KeyWrapper {
	t.Helper()
	w, err := runner.LocalKeyWrapper(bytes.Repeat([]byte{fill}, runner.LocalKeyWrapperKeySize))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func openKeyFile(t testing.TB, path string, w runner.KeyWrapper) *runner.KeyFile {
	t.Helper()
	kf, err := runner.OpenKeyFile(context.Background(), path, w)
	if err != nil {
		t.Fatal(err)
	}
	return kf
}

// TestRestartWithKeyFileOpensCredentials: a Runner restarted on the same
// Dir with the same key file opens the credential its predecessor
// stored, and after a rotation still does; with other keys New refuses
// to start with CodeStoreKeysMismatch.
func TestRestartWithKeyFileOpensCredentials(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	keyPath := filepath.Join(dir, "keys")
	var saved runner.Config
	g := newRig(t, func(c *runner.Config, _ *rig) {
		c.Dir, c.Keys = dir, openKeyFile(t, keyPath, localWrapper(t, 1))
		saved = *c
	})
	first := g.Runner
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}

	for name, keys := range map[string]runner.KeySource{
		"ephemeral keys":                 runner.EphemeralKeys(),
		"another key file":               openKeyFile(t, filepath.Join(dir, "other"), localWrapper(t, 1)),
		"another key file, same wrapper": openKeyFile(t, filepath.Join(t.TempDir(), "keys"), localWrapper(t, 1)),
	} {
		cfg := saved
		cfg.Keys = keys
		r, err := runner.New(ctx, cfg)
		if !errors.Is(err, runner.CodeStoreKeysMismatch) {
			if r != nil {
				r.Close()
			}
			t.Fatalf("%s: New = %v, want %s", name, err, runner.CodeStoreKeysMismatch)
		}
	}

	kf := openKeyFile(t, keyPath, localWrapper(t, 1))
	if err := kf.Rotate(ctx); err != nil {
		t.Fatal(err)
	}
	cfg := saved
	cfg.Keys = openKeyFile(t, keyPath, localWrapper(t, 1)) // read back from disk
	r, err := runner.New(ctx, cfg)
	if err != nil {
		t.Fatalf("New after a restart with the key file = %v", err)
	}
	t.Cleanup(func() { r.Close() })
	g.Runner = r
	s := g.admitted(t)
	turn(t, s, runnertest.QuickstartScript)
	if g.hits.Load() != 2 {
		t.Fatalf("upstream saw the credential %d times after the restart, want 2", g.hits.Load())
	}
}

// TestKeyFileKeepsKeys: a key file reopened gives the same keys; it is
// written 0600 and holds no key in the clear.
func TestKeyFileKeepsKeys(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "keys")
	a := openKeyFile(t, path, localWrapper(t, 1))
	b := openKeyFile(t, path, localWrapper(t, 1))
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %04o, want 0600", fi.Mode().Perm())
	}
	raw, _ := os.ReadFile(path)
	ta, _ := a.Token()
	tb, _ := b.Token()
	if !bytes.Equal(ta, tb) {
		t.Error("the token key changed on reopening")
	}
	if bytes.Contains(raw, ta) || bytes.Contains(raw, []byte(base64.StdEncoding.EncodeToString(ta))) {
		t.Error("the key file holds the token key in the clear")
	}
	da, _ := a.Deployment()
	db, _ := b.Deployment()
	if da.KeyID() != db.KeyID() {
		t.Error("the deployment key changed on reopening")
	}
	bind := custody.Binding{Namespace: "acme", Integration: "github", Handle: address.NewHandle()}
	ka, _ := a.Custody()
	sealed, err := ka.Seal(bind, custody.NewSecret([]byte("token")))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Rotate(ctx); err != nil {
		t.Fatal(err)
	}
	rotated, _ := openKeyFile(t, path, localWrapper(t, 1)).Custody()
	if rotated.Primary() != 2 || fmt.Sprint(rotated.Versions()) != "[1 2]" {
		t.Errorf("after Rotate the keyset is %v, want primary 2 of [1 2]", rotated)
	}
	if s, err := rotated.Open(bind, sealed); err != nil {
		t.Errorf("a record sealed before the rotation does not open: %v", err)
	} else {
		s.Destroy()
	}
	if got := fmt.Sprintf("%v %+v %#v", a, a, a); strings.Contains(got, base64.StdEncoding.EncodeToString(ta)) {
		t.Errorf("printing a KeyFile prints a key: %s", got)
	}
	if got := fmt.Sprint(a); !strings.Contains(got, "custody=[1 2]") {
		t.Errorf("KeyFile prints %s, want its custody versions", got)
	}
}

// TestKeyFileRefusals: a key file another user may read, a symlink, a
// file altered or wrapped under another key is refused with
// CodeKeyFileInvalid.
func TestKeyFileRefusals(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	good := filepath.Join(dir, "keys")
	openKeyFile(t, good, localWrapper(t, 1))
	raw, _ := os.ReadFile(good)
	write := func(name string, b []byte, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	flipped := bytes.Clone(raw)
	flipped[len(flipped)-1] ^= 1
	link := filepath.Join(dir, "link")
	if err := os.Symlink(good, link); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		path string
		w    runner.KeyWrapper
	}{
		"readable by others":  {write("open", raw, 0o644), localWrapper(t, 1)},
		"readable by group":   {write("group", raw, 0o640), localWrapper(t, 1)},
		"altered":             {write("flipped", flipped, 0o600), localWrapper(t, 1)},
		"truncated":           {write("short", raw[:len(raw)/2], 0o600), localWrapper(t, 1)},
		"no header":           {write("bare", raw[len("checkfu-keyfile/v1\n"):], 0o600), localWrapper(t, 1)},
		"another wrapper key": {good, localWrapper(t, 2)},
		"a symlink":           {link, localWrapper(t, 1)},
		"a directory":         {dir, localWrapper(t, 1)},
	} {
		if _, err := runner.OpenKeyFile(ctx, tc.path, tc.w); !errors.Is(err, runner.CodeKeyFileInvalid) {
			t.Errorf("%s: OpenKeyFile = %v, want %s", name, err, runner.CodeKeyFileInvalid)
		}
	}
	if _, err := runner.LocalKeyWrapper(make([]byte, 31)); err == nil {
		t.Error("LocalKeyWrapper took a 31-byte key")
	}
}
