package vendorkit_test

import (
	"testing"

	"github.com/checkfu/checkfu/internal/mutation"
)

func TestMutants(t *testing.T) { mutation.Run(t, mutants) }

var mutants = []mutation.Mutant{
	{Name: "vendor error body quoted", File: "call.go",
		Edits: []mutation.Edit{{Old: `(a %d-byte body, not quoted)", c.Vendor, c.Method, c.Path, resp.StatusCode, want[0], len(data))`, New: `(a %d-byte body, not quoted) %s", c.Vendor, c.Method, c.Path, resp.StatusCode, want[0], len(data), data)`}},
		Kills: "TestCallNeverQuotesTheBody"},
	{Name: "status check in Read", File: "call.go",
		Edits: []mutation.Edit{{Old: `if !slices.Contains(want, resp.StatusCode) {`, New: `if false && !slices.Contains(want, resp.StatusCode) {`}},
		Kills: "TestCallNeverQuotesTheBody"},
	{Name: "answer not an object", File: "call.go",
		Edits: []mutation.Edit{{Old: `	m, ok := v.(map[string]any)
	if !ok {`, New: `	m, ok := v.(map[string]any)
	if false && !ok {`}},
		Kills: "TestCallObject"},
	{Name: "plain http base URL", File: "url.go",
		Edits: []mutation.Edit{{Old: `	if u.Scheme == "https" {
		return BaseURLOK
	}`, New: `	if u.Scheme == "https" || u.Scheme == "http" {
		return BaseURLOK
	}`}},
		Kills: "TestBaseURLProblem"},
	{Name: "user information in a base URL", File: "url.go",
		Edits: []mutation.Edit{{Old: `u.Host == "" || u.User != nil ||`, New: `u.Host == "" ||`}},
		Kills: "TestBaseURLProblem"},
	{Name: "network mode outside the capability", File: "spec.go",
		Edits: []mutation.Edit{{Old: `if !slices.Contains(o.Capability.NetworkModes, spec.NetworkMode) {`, New: `if false {`}},
		Kills: "TestCheckInstance"},
	{Name: "allowlist without a policy", File: "spec.go",
		Edits: []mutation.Edit{{Old: `if err != nil || policy == nil {`, New: `if err != nil {`}},
		Kills: "TestCheckInstance"},
	{Name: "image other than the offer's", File: "spec.go",
		Edits: []mutation.Edit{{Old: `spec.RootImage != "" && spec.RootImage != o.Image`, New: `false`}},
		Kills: "TestCheckInstance"},
	{Name: "limits ignored", File: "spec.go",
		Edits: []mutation.Edit{{Old: ` || spec.Limits != (adapters.Limits{}) {`, New: ` {`}},
		Kills: "TestCheckInstance"},
	{Name: "one live process", File: "slot.go",
		Edits: []mutation.Edit{{Old: `	case s.live != zero:`, New: `	case false:`}},
		Kills: "TestSlot"},
	{Name: "open after destroy", File: "slot.go",
		Edits: []mutation.Edit{{Old: `	case s.destroyed:`, New: `	case false:`}},
		Kills: "TestSlot"},
	{Name: "release of another process", File: "slot.go",
		Edits: []mutation.Edit{{Old: `	if s.live == p {`, New: `	if true {`}},
		Kills: "TestSlot"},
}
