package daytona_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters/daytona"
	"github.com/checkfu/checkfu/adapters/internal/vendortest"
	"github.com/checkfu/checkfu/egress"
)

// TestMapPolicy: what Daytona expresses exactly, and what it refuses
// rather than widens.
func TestMapPolicy(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy string
		want   daytona.Network
		code   checkfu.Code
	}{
		{name: "none is networkBlockAll", policy: `{"type":"none"}`, want: daytona.Network{NetworkBlockAll: true}},
		{name: "unrestricted has no deny list for private ranges", policy: `{"type":"unrestricted"}`, code: daytona.CodeAllowlistInexpressible},
		{name: "an allowlist on 443 would open every port", policy: `{"type":"allowlist","allowed_hosts":["api.example.com"]}`, code: daytona.CodeAllowlistInexpressible},
		{name: "an allowlist on another port too", policy: `{"type":"allowlist","allowed_hosts":["db.example.com:5432"]}`, code: daytona.CodeAllowlistInexpressible},
		{name: "package managers expand to hosts, refused alike", policy: `{"type":"allowlist","allow_package_managers":true}`, code: daytona.CodeAllowlistInexpressible},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := egress.ParseNetworkPolicy([]byte(tc.policy))
			if err != nil {
				t.Fatal(err)
			}
			c, err := p.Compile(nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := daytona.MapPolicy(c)
			if tc.code != "" {
				if !errors.Is(err, tc.code) || got != (daytona.Network{}) {
					t.Fatalf("MapPolicy = %+v, %v; want nothing and %s", got, err, tc.code)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("MapPolicy = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
	if _, err := daytona.MapPolicy(nil); !errors.Is(err, checkfu.CodeConfigInvalid) {
		t.Errorf("MapPolicy(nil) = %v", err)
	}
}

// TestCreateRefusesBeforeAnyRequest: a policy Daytona cannot express
// never reaches the vendor.
func TestCreateRefusesBeforeAnyRequest(t *testing.T) {
	c, f, edge := newClient(t)
	_, err := c.Create(t.Context(), daytona.SandboxSpec{ID: "x", Policy: vendortest.Compiled(t, `{"type":"unrestricted"}`)})
	if !errors.Is(err, daytona.CodeAllowlistInexpressible) {
		t.Fatalf("Create = %v", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if edge.Sent() != 0 || len(f.created) != 0 {
		t.Errorf("%d requests were sent for a refused policy", edge.Sent())
	}
}

// TestSpecCatchesDeviation: the fakes' validator is not a rubber stamp.
func TestSpecCatchesDeviation(t *testing.T) {
	s := vendortest.LoadSpec(t, "testdata/toolbox.yaml", vendortest.Bearer)
	ok := func(_, v string) error {
		if v != "k" {
			return errors.New("no key")
		}
		return nil
	}
	for name, tc := range map[string]struct{ body, auth string }{
		"unknown member": {`{"command":"true","runAsync":true,"stdin":"x"}`, "Bearer k"},
		"no command":     {`{"runAsync":true}`, "Bearer k"},
		"no bearer":      {`{"command":"true"}`, "k"},
		"control":        {`{"command":"true","runAsync":true}`, "Bearer k"},
	} {
		req := httptest.NewRequest(http.MethodPost, "/process/session/s1/exec", strings.NewReader(tc.body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", tc.auth)
		_, err := s.Check(req, ok)
		if (err == nil) != (name == "control") {
			t.Errorf("%s: check = %v", name, err)
		}
	}
}
