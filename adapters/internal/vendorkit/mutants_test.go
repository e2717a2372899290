package vendorkit_test

import (
	"testing"

	"github.com/checkfu/checkfu/internal/mutation"
)

func TestMutants(t *testing.T) { mutation.Run(t, mutants) }

var mutants = []mutation.Mutant{
	{Name: "a discarded sandbox's failed removal is dropped", File: "discard.go",
		Edits: []mutation.Edit{{Old: `	if rerr := remove(ctx); rerr != nil {`, New: `	if rerr := remove(ctx); false && rerr != nil {`}},
		Kills: "TestDiscardReportsAFailedRemoval"},
	{Name: "a discarded sandbox is not removed", File: "discard.go",
		Edits: []mutation.Edit{{Old: `	if rerr := remove(ctx); rerr != nil {`, New: `	if rerr := error(nil); rerr != nil {`}},
		Kills: "TestDiscardReportsAFailedRemoval"},
	{Name: "a discarded sandbox's removal is unbounded", File: "discard.go",
		Edits: []mutation.Edit{{Old: `	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), DiscardTimeout)`, New: `	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))`}},
		Kills: "TestDiscardIsBoundedAndOutlivesTheCaller"},
	{Name: "a discarded sandbox's removal ends with the caller", File: "discard.go",
		Edits: []mutation.Edit{{Old: `	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), DiscardTimeout)`, New: `	ctx, cancel := context.WithTimeout(ctx, DiscardTimeout)`}},
		Kills: "TestDiscardIsBoundedAndOutlivesTheCaller"},
	{Name: "vendor error body quoted", File: "call.go",
		Edits: []mutation.Edit{{Old: `(a %d-byte body, not quoted)", c.Vendor, c.Method, c.path(), resp.StatusCode, want[0], len(data))`, New: `(a %d-byte body, not quoted) %s", c.Vendor, c.Method, c.path(), resp.StatusCode, want[0], len(data), data)`}},
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
	{Name: "reap ends before it releases", File: "slot.go",
		Edits: []mutation.Edit{{Old: `	s.Release(p)
	e.end(status, err)`, New: `	e.end(status, err)
	s.Release(p)`}},
		Kills: "TestReapReleasesFirst"},
	{Name: "status kept beside an error", File: "exit.go",
		Edits: []mutation.Edit{{Old: `	if err != nil {
		status = -1
	}`, New: ``}},
		Kills: "TestReap"},
	{Name: "destroy leaves the live process", File: "slot.go",
		Edits: []mutation.Edit{{Old: `	if kill && live != zero {`, New: `	if _ = kill; false && live != zero {`}},
		Kills: "TestSlot"},
	{Name: "destroy kills twice", File: "slot.go",
		Edits: []mutation.Edit{{Old: `	if kill && live != zero {`, New: `	if _ = kill; live != zero {`}},
		Kills: "TestSlot"},
	{Name: "a failed removal never retried", File: "slot.go",
		Edits: []mutation.Edit{{Old: `	if err := remove(); err != nil {
		return err
	}
	s.removed = true`, New: `	s.removed = true
	if err := remove(); err != nil {
		return err
	}`}},
		Kills: "TestSlotDestroyRetriesAFailedRemove"},
	{Name: "a removed sandbox removed again", File: "slot.go",
		Edits: []mutation.Edit{{Old: `	if s.removed {
		return nil
	}`, New: ``}},
		Kills: "TestSlot|TestSlotDestroyRetriesAFailedRemove|TestSlotDestroysAtOnceRemoveOnce"},
	{Name: "removals not serialized", File: "slot.go",
		Edits: []mutation.Edit{{Old: `	select {
	case removing <- struct{}{}:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	defer func() { <-removing }()`, New: `	_ = removing`}},
		Kills: "TestSlotDestroysAtOnceRemoveOnce"},
	{Name: "a Destroy waits for another's removal past its context", File: "slot.go",
		Edits: []mutation.Edit{{Old: `	case <-ctx.Done():
		return context.Cause(ctx)
	}`, New: `	}`}},
		Kills: "TestSlotDestroyWaitsNoLongerThanItsContext"},
	{Name: "vendor ID over the bound", File: "url.go",
		Edits: []mutation.Edit{{Old: `len(id) <= MaxVendorID`, New: `len(id) <= MaxVendorID+1`}},
		Kills: "TestPathSafeID"},
	{Name: "vendor's extra bytes ignored", File: "url.go",
		Edits: []mutation.Edit{{Old: `strings.ContainsAny(id, pathUnsafe+extra)`, New: `strings.ContainsAny(id, pathUnsafe)`}},
		Kills: "TestPathSafeID"},
	{Name: "empty env name", File: "command.go",
		Edits: []mutation.Edit{{Old: `if !ok || k == "" {`, New: `if !ok {`}},
		Kills: "TestEnvMap"},
	{Name: "empty command name", File: "command.go",
		Edits: []mutation.Edit{{Old: `len(argv) == 0 || argv[0] == ""`, New: `len(argv) == 0`}},
		Kills: "TestCheckArgv"},
	{Name: "exchange leaves the body open", File: "call.go",
		Edits: []mutation.Edit{{Old: `	defer resp.Body.Close()
	return c.Read(resp, max, want...)`, New: `	return c.Read(resp, max, want...)`}},
		Kills: "TestExchange"},
	{Name: "review2: request path shown raw", File: "call.go",
		Edits: []mutation.Edit{{Old: `if len(c.Path) > maxShownPath || !printableASCII(c.Path) {`, New: `if false {`}},
		Kills: "TestCallPathIsQuoted"},
	{Name: "review2: request path shown at any length", File: "call.go",
		Edits: []mutation.Edit{{Old: `if len(c.Path) > maxShownPath || !printableASCII(c.Path) {`, New: `if !printableASCII(c.Path) {`}},
		Kills: "TestCallPathIsQuoted"},
	{Name: "review2: vendor ID with a control character", File: "url.go",
		Edits: []mutation.Edit{{Old: `len(id) <= MaxVendorID && printableASCII(id) &&`, New: `len(id) <= MaxVendorID &&`}},
		Kills: "TestPathSafeIDIsPrintable"},
	{Name: "rt: a non-public address literal as a public host", File: "url.go",
		Edits: []mutation.Edit{{Old: `return egress.IsPublic(a)`, New: `return a.IsValid() || egress.IsPublic(a)`}},
		Kills: "TestPublicHost"},
	{Name: "rt: localhost as a public host", File: "url.go",
		Edits: []mutation.Edit{{Old: `if h == "" || h == "localhost" || strings.HasSuffix(h, ".localhost") {`, New: `if h == "" {`}},
		Kills: "TestPublicHost"},
	{Name: "rt: a numeric last label as a public name", File: "url.go",
		Edits: []mutation.Edit{{Old: `return last != "" && (last[0] < '0' || last[0] > '9')`, New: `return last != ""`}},
		Kills: "TestPublicHost"},
}
