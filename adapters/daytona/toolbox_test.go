package daytona_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters/daytona"
	"github.com/checkfu/checkfu/adapters/internal/vendortest"
)

// TestToolboxURLIsChecked: the API key goes to the toolbox proxy URL
// Daytona's answer names, so a hostile answer could send it to a
// listener of a local stranger on the Runner's loopback, or to a
// private network's service. Create refuses such a URL, deletes the
// sandbox, and sends nothing to the host it names; Daytona's own proxy
// (https://proxy.app.daytona.io/toolbox) is admitted. A loopback
// toolbox is admitted only when the API itself is on loopback (the
// fakes), and ToolboxHosts, when set, is the only list that counts.
func TestToolboxURLIsChecked(t *testing.T) {
	const api = "https://app.daytona.io/api"
	for _, c := range []struct {
		base, proxy string
		hosts       []string
		ok          bool
	}{
		{api, "https://proxy.app.daytona.io/toolbox", nil, true},
		{api, "https://proxy.app.daytona.io:8443/toolbox", nil, true},
		{api, "http://127.0.0.1:8080/toolbox", nil, false},
		{api, "https://127.0.0.1/toolbox", nil, false},
		{api, "https://[::1]:9/toolbox", nil, false},
		{api, "https://localhost/toolbox", nil, false},
		{api, "https://proxy.localhost/toolbox", nil, false},
		{api, "https://127.1/toolbox", nil, false},
		{api, "https://2130706433/toolbox", nil, false},
		{api, "https://[::ffff:127.0.0.1]/toolbox", nil, false},
		{api, "https://10.0.0.5/toolbox", nil, false},
		{api, "https://169.254.169.254/toolbox", nil, false},
		{api, "http://proxy.app.daytona.io/toolbox", nil, false},
		{api, "https://u@proxy.app.daytona.io/toolbox", nil, false},
		{api, "https://10.0.0.5/toolbox", []string{"10.0.0.5"}, true},
		{api, "https://Proxy.Internal./toolbox", []string{"proxy.internal"}, true},
		{api, "http://10.0.0.5/toolbox", []string{"10.0.0.5"}, false},
		{api, "https://proxy.app.daytona.io/toolbox", []string{"10.0.0.5"}, false},
		{"http://127.0.0.1:1/api", "http://127.0.0.1:2/toolbox", nil, true},
		{"http://127.0.0.1:1/api", "https://proxy.app.daytona.io/toolbox", nil, false},
	} {
		edge := &scriptedEdge{answers: map[string]any{
			"POST /sandbox": map[string]any{"id": "sb1", "state": "started", "toolboxProxyUrl": c.proxy},
		}}
		cl, err := daytona.New(daytona.Config{Edge: edge, Credential: "lease:daytona", BaseURL: c.base, ToolboxHosts: c.hosts})
		if err != nil {
			t.Fatal(err)
		}
		s, err := cl.Create(context.Background(), daytona.SandboxSpec{ID: "i1", Policy: vendortest.Compiled(t, `{"type":"none"}`), ProfileDigest: "sha256:p"})
		if c.ok {
			if err != nil {
				t.Errorf("API %s, toolbox %s, hosts %v: Create = %v, want it admitted", c.base, c.proxy, c.hosts, err)
			} else {
				_ = s.Destroy(context.Background())
			}
			continue
		}
		if !errors.Is(err, daytona.CodeSandboxRequestRefused) || !strings.Contains(err.Error(), checkfu.Quote(c.proxy)) {
			t.Errorf("API %s, toolbox %s, hosts %v: Create = %v, want sandbox_request_refused naming it", c.base, c.proxy, c.hosts, err)
		}
		apiHost := strings.Split(strings.TrimPrefix(strings.TrimPrefix(c.base, "https://"), "http://"), "/")[0]
		for i, h := range edge.hosts {
			if h != apiHost {
				t.Errorf("toolbox %s: a request went to %s (%s)", c.proxy, h, edge.asked[i])
			}
		}
		if got := strings.Join(edge.asked, ", "); got != "POST /api/sandbox, DELETE /api/sandbox/sb1" {
			t.Errorf("toolbox %s: asked %s, want the sandbox created and deleted", c.proxy, got)
		}
	}
}

// TestToolboxHostsMustBeHosts: a configured toolbox host is a bare host
// name or address, not a URL.
func TestToolboxHostsMustBeHosts(t *testing.T) {
	for _, h := range []string{"", "https://proxy.example", "proxy.example:443", "u@proxy.example", "proxy.example/x"} {
		_, err := daytona.New(daytona.Config{Edge: &scriptedEdge{}, Credential: "lease:daytona", ToolboxHosts: []string{h}})
		if !errors.Is(err, checkfu.CodeConfigInvalid) {
			t.Errorf("ToolboxHosts %q: New = %v, want config_invalid", h, err)
		}
	}
	if _, err := daytona.New(daytona.Config{Edge: &scriptedEdge{}, Credential: "lease:daytona", ToolboxHosts: []string{"fd00::5", "proxy.internal"}}); err != nil {
		t.Errorf("New = %v", err)
	}
}
