package mount

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/checkfu/checkfu"
)

// FuzzReadFileStaysInside reads arbitrary names through a mount whose tree
// holds symlinks pointing out of it. Whatever the name, the outside body is
// never returned, and every failure is a typed refusal or an *Error.
func FuzzReadFileStaysInside(f *testing.F) {
	for _, s := range []string{"README.md", "src/main.go", "up/outside/secret", "../outside/secret", "rel-link", "abs-link", "src/deep/secret", "./README.md", "src/../README.md", "/etc/passwd", "a\x00b", "src//main.go"} {
		f.Add(s)
	}
	fx := newFixture(f)
	for name, target := range map[string]string{
		"rel-link": "../outside/secret",
		"abs-link": filepath.Join(fx.outside, "secret"),
		"up":       "..",
		"src/deep": "../../outside",
	} {
		if err := os.Symlink(target, filepath.Join(fx.root, name)); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, name string) {
		b, err := fx.r.ReadFile(context.Background(), "s1", "project", name)
		if strings.Contains(string(b), outsideBody) {
			t.Fatalf("ReadFile(%q) returned the outside body", name)
		}
		if err != nil {
			var me *Error
			if _, ok := checkfu.CodeOf(err); !ok && !errors.As(err, &me) {
				t.Fatalf("ReadFile(%q): untyped error %v", name, err)
			}
			if len(b) != 0 {
				t.Fatalf("ReadFile(%q) returned a body with an error", name)
			}
		}
	})
}
