package e2b_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters/e2b"
	"github.com/checkfu/checkfu/adapters/internal/vendortest"
)

// TestCreateDeletesASandboxWhoseEnvdIsRefused: a control plane that
// creates the sandbox but names a domain the envd URL check refuses (a
// query here) gets a refusal, and the sandbox it created is deleted,
// not left running until its Timeout.
func TestCreateDeletesASandboxWhoseEnvdIsRefused(t *testing.T) {
	s, asked, err := createWithDomain(t, "e2b.app?x=1")
	if s != nil || !errors.Is(err, checkfu.CodeConfigInvalid) {
		t.Fatalf("Create with domain %q = %v, %v; want a config_invalid refusal", "e2b.app?x=1", s, err)
	}
	if len(asked) != 2 || asked[1] != "DELETE /sandboxes/sbx1" {
		t.Errorf("the control plane was asked %q; want the create, then DELETE /sandboxes/sbx1", asked)
	}
}

// TestCreateReportsASandboxItCouldNotRemove: when the deletion of the
// sandbox whose envd was refused fails, Create returns the refusal
// joined with that failure, naming the sandbox by E2B's id, so the host
// can delete what runs on until its Timeout. Before, the failure was
// dropped.
func TestCreateReportsASandboxItCouldNotRemove(t *testing.T) {
	s, asked, err := createWith(t, "localhost", http.StatusInternalServerError)
	if s != nil || !errors.Is(err, e2b.CodeControlPlaneRefused) {
		t.Fatalf("Create = %v, %v; want control_plane_refused", s, err)
	}
	if len(asked) != 2 || asked[1] != "DELETE /sandboxes/sbx1" {
		t.Errorf("the control plane was asked %q; want the create, then the delete", asked)
	}
	if msg := err.Error(); !strings.Contains(msg, "left at the vendor") || !strings.Contains(msg, checkfu.Quote("sbx1")) {
		t.Errorf("Create's error %q does not say that sandbox \"sbx1\" was left", msg)
	}
}

// TestEnvdHostIsPublic: the control plane's domain names envd's host;
// one that is not public (loopback, a private address, localhost, a
// name resolvers read as an address) is refused and the sandbox deleted.
func TestEnvdHostIsPublic(t *testing.T) {
	for _, domain := range []string{"localhost", "127.0.0.1", "10.0.0.1", "0x7f000001", "e2b.localhost", "169.254.169.254"} {
		s, asked, err := createWithDomain(t, domain)
		if s != nil || !errors.Is(err, e2b.CodeControlPlaneRefused) {
			t.Errorf("domain %q: Create = %v, %v; want control_plane_refused", domain, s, err)
		}
		if len(asked) != 2 || asked[1] != "DELETE /sandboxes/sbx1" {
			t.Errorf("domain %q: the control plane was asked %q; want the create, then the delete", domain, asked)
		}
	}
}

// createWithDomain runs Create against a control plane that creates
// sandbox sbx1 with domain as envd's domain and deletes it when asked,
// and returns Create's results with what the control plane was asked,
// in order.
func createWithDomain(t *testing.T, domain string) (*e2b.Sandbox, []string, error) {
	t.Helper()
	return createWith(t, domain, http.StatusNoContent)
}

// createWith is createWithDomain whose control plane answers the
// deletion with status deleted.
func createWith(t *testing.T, domain string, deleted int) (*e2b.Sandbox, []string, error) {
	t.Helper()
	var mu sync.Mutex
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.Method+" "+r.URL.Path)
		mu.Unlock()
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/sandboxes":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write([]byte(`{"templateID":"base","sandboxID":"sbx1","clientID":"c","envdVersion":"0.1.0","envdAccessToken":"t","domain":"` + domain + `"}`))
		case r.Method == http.MethodDelete && r.URL.Path == "/sandboxes/sbx1":
			w.WriteHeader(deleted)
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer srv.Close()
	c, err := e2b.New(e2b.Config{Edge: &vendortest.Edge{Keys: map[string]string{"lease:e2b": canary}}, Credential: "lease:e2b", Template: "base", BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Create(context.Background(), e2b.SandboxSpec{ID: "inst-1", Policy: vendortest.Compiled(t, `{"type":"none"}`), ProfileDigest: "sha256:profile"})
	mu.Lock()
	defer mu.Unlock()
	return s, asked, err
}
