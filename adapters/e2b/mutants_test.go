package e2b_test

import (
	"testing"

	"github.com/checkfu/checkfu/internal/mutation"
)

func TestMutants(t *testing.T) { mutation.Run(t, mutants) }

var mutants = []mutation.Mutant{
	{Name: "Create drops the failed deletion of a sandbox it gave up", File: "client.go",
		Edits: []mutation.Edit{{Old: `			return c.call(ctx, http.MethodDelete, "/sandboxes/"+url.PathEscape(got.SandboxID), nil, nil, http.StatusNoContent, http.StatusNotFound)`, New: `			_ = c.call(ctx, http.MethodDelete, "/sandboxes/"+url.PathEscape(got.SandboxID), nil, nil, http.StatusNoContent, http.StatusNotFound)
			return nil`}},
		Kills: "TestCreateReportsASandboxItCouldNotRemove"},
	{Name: "port refusal in MapPolicy", File: "policy.go",
		Edits: []mutation.Edit{{Old: `if h.Port != 80 && h.Port != 443 {`, New: `if false {`}},
		Kills: "TestMapPolicy"},
	{Name: "non-public ranges under unrestricted", File: "policy.go",
		Edits: []mutation.Edit{{Old: `n.DenyOut = slices.Clone(nonPublicV4)`, New: `n.DenyOut = slices.Clone(nonPublicV4[1:])`}},
		Kills: "TestMapPolicy|TestDenyOutAgreesWithEgress"},
	{Name: "flattening caveat", File: "policy.go",
		Edits: []mutation.Edit{{Old: `n.Caveats = append(n.Caveats, caveatFlattened, caveatPorts, caveatResolver, caveatAddress)`, New: `n.Caveats = append(n.Caveats, caveatPorts, caveatResolver, caveatAddress)`}},
		Kills: "TestMapPolicy|TestEvidence"},
	{Name: "vendor error body quoted (shared Call)", File: "../internal/vendorkit/call.go",
		Edits: []mutation.Edit{{Old: `(a %d-byte body, not quoted)", c.Vendor, c.Method, c.path(), resp.StatusCode, want[0], len(data))`, New: `(a %d-byte body, not quoted) %s", c.Vendor, c.Method, c.path(), resp.StatusCode, want[0], len(data), data)`}},
		Kills: "TestCredentialNeverVisible"},
	{Name: "plain http base URL (shared check)", File: "../internal/vendorkit/url.go",
		Edits: []mutation.Edit{{Old: `	if u.Scheme == "https" {
		return BaseURLOK
	}`, New: `	if u.Scheme == "https" || u.Scheme == "http" {
		return BaseURLOK
	}`}},
		Kills: "TestNewRefusesBadConfig"},
	{Name: "one live process (shared Slot)", File: "../internal/vendorkit/slot.go",
		Edits: []mutation.Edit{{Old: `	case s.live != zero:`, New: `	case false:`}},
		Kills: "TestKillAndOneLiveProcess"},
	{Name: "stderr merged into stdout", File: "process.go",
		Edits: []mutation.Edit{{Old: `_, _ = errW.Write(d.Stderr)`, New: `_, _ = outW.Write(d.Stderr)`}},
		Kills: "TestStdioAndExitCodes"},
	{Name: "signal exit status", File: "process.go",
		Edits: []mutation.Edit{{Old: `return 128 + sig`, New: `return sig`}},
		Kills: "TestKillAndOneLiveProcess"},
	{Name: "dotted sandbox ID (envd's host)", File: "client.go",
		Edits: []mutation.Edit{{Old: `vendorkit.PathSafeID(got.SandboxID, ".")`, New: `vendorkit.PathSafeID(got.SandboxID, "")`}},
		Kills: "TestCreateRefusesADottedSandboxID"},
	{Name: "review2: a sandbox whose envd is refused is left running", File: "client.go",
		Edits: []mutation.Edit{{Old: `		return nil, vendorkit.Discard(ctx, err, "e2b", got.SandboxID, func(ctx context.Context) error {`, New: `		return nil, err
		return nil, vendorkit.Discard(ctx, err, "e2b", got.SandboxID, func(ctx context.Context) error {`}},
		Kills: "TestCreateDeletesASandboxWhoseEnvdIsRefused"},
	{Name: "rt: envd exit status outside 0-255", File: "process.go",
		Edits: []mutation.Edit{{Old: `if status < 0 || status > 255 {`, New: `if false {`}},
		Kills: "TestExitStatusOutOfRange"},
	{Name: "rt: envd redirects followed", File: "client.go",
		Edits: []mutation.Edit{{Old: `data.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }`, New: `data.CheckRedirect = nil`}},
		Kills: "TestEnvdRedirectIsNotFollowed"},
	{Name: "rt: envd control call unbounded", File: "process.go",
		Edits: []mutation.Edit{{Old: `ctx, cancel := context.WithTimeout(context.Background(), vendorkit.ControlTimeout)`, New: `ctx, cancel := context.WithCancel(context.Background())`}},
		Kills: "TestKillIsBounded"},
	{Name: "rt: envd host not checked", File: "client.go",
		Edits: []mutation.Edit{{Old: `err == nil && c.cfg.Envd == nil && !vendorkit.PublicHost(u.Hostname())`, New: `err == nil && c.cfg.Envd == nil && u == nil`}},
		Kills: "TestEnvdHostIsPublic"},
}
