package docker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestNamePrefixAndRemoveLabelled: an Engine with a name prefix and a
// label of its own builds PREFIX-busybox:HASH, finds nothing cached
// under a fresh prefix, and RemoveLabelled removes its image and its
// containers while an image another label made stays.
func TestNamePrefixAndRemoveLabelled(t *testing.T) {
	shared := testEngine(t) // skips, or fails under CI, without an engine
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	id := make([]byte, 4)
	rand.Read(id)
	run := hex.EncodeToString(id)
	e, err := Connect(ctx, Options{Label: "checkfu.test.cleanup=" + run, NamePrefix: "checkfu-cleanup-" + run})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	t.Cleanup(func() { e.RemoveLabelled(context.Background()) })
	img, err := e.BusyboxImage(ctx, ImageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(img, "checkfu-cleanup-"+run+"-busybox:") {
		t.Fatalf("BusyboxImage = %s, want the prefix checkfu-cleanup-%s-busybox", img, run)
	}
	other, err := shared.BusyboxImage(ctx, ImageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n, err := e.RemoveLabelled(ctx)
	if err != nil || n != 1 {
		t.Fatalf("RemoveLabelled = %d, %v; want 1 (the image)", n, err)
	}
	if _, err := e.c.InspectImage(ctx, img); !errors.Is(err, CodeImageMissing) {
		t.Errorf("after RemoveLabelled, %s: %v; want %s", img, err, CodeImageMissing)
	}
	if _, err := shared.c.InspectImage(ctx, other); err != nil {
		t.Errorf("RemoveLabelled removed %s, another label's image: %v", other, err)
	}
	if n, err := e.RemoveLabelled(ctx); err != nil || n != 0 {
		t.Errorf("a second RemoveLabelled = %d, %v; want 0, nil", n, err)
	}
	for _, bad := range []string{"Upper", "-lead", "a b", "a/b", strings.Repeat("a", 65)} {
		if _, err := Connect(ctx, Options{NamePrefix: bad}); err == nil {
			t.Errorf("Connect took the name prefix %q", bad)
		}
	}
}
