package main

import (
	"testing"

	"github.com/checkfu/checkfu/internal/mutation"
)

// TestNetMutants proves the guard command's checks are tested:
// internal/mutation builds each mutant with `go test -overlay` and
// requires a named test to fail. (TestGuardProcess runs a binary that
// clitest builds without the overlay, so the egress Dialer's checks are
// proved by egress's own TestMutants, not through it.) It runs only when
// CHECKFU_MUTANTS=1:
//
//	CHECKFU_MUTANTS=1 go test -run '^TestNetMutants$' ./cmd/checkfu/
func TestNetMutants(t *testing.T) { mutation.Run(t, guardMutants) }

var guardMutants = []mutation.Mutant{
	{Name: "-resolver names are looked up", File: "guard.go", Kills: "TestResolverAddress",
		Edits: []mutation.Edit{{Old: "\taddrs, err := lookup(ctx, \"ip\", host)", New: "\treturn hostport, nil\n\taddrs, err := lookup(ctx, \"ip\", host)"}}},
	{Name: "-resolver needs a port from 1 to 65535", File: "guard.go", Kills: "TestResolverAddress",
		Edits: []mutation.Edit{{Old: `err != nil || host == "" || perr != nil || n == 0 {`, New: `err != nil || host == "" || (perr != nil || n == 0) && port != "" {`}}},
	{Name: "hints chosen by code, not by call site", File: "guard.go", Kills: "TestGuardHintByCode",
		Edits: []mutation.Edit{{Old: "if h, ok := guardHints[code]; ok {", New: "if h := guardHints[checkfu.CodeConfigInvalid]; code != \"\" {"}}},
}
