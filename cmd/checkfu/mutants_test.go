package main

import (
	"testing"

	"github.com/checkfu/checkfu/internal/mutation"
)

func TestMutants(t *testing.T) { mutation.Run(t, mutants) }

var mutants = []mutation.Mutant{
	{Name: "log read: an empty session is not refused", File: "log.go",
		Edits: []mutation.Edit{{Old: `if !printed && !follow {`, New: `if false && !printed && !follow {`}},
		Kills: "TestLogReadAgreesWithVerify"},
	// "log verify" reports the seq the library's verifier names.
	{Name: "log verify: record hash check", File: "../../eventlog/verify.go",
		Edits: []mutation.Edit{{Old: "if chainHash(r.Envelope) != r.Hash {", New: "if false {"}},
		Kills: "TestLogVerifyDetectsEditedRow"},
	{Name: "log verify: checkpoint against the log", File: "../../eventlog/checkpoint.go",
		Edits: []mutation.Edit{{Old: "\treturn VerifyHead(ctx, store, session, cp.Head)\n}", New: "\treturn Verify(ctx, store, session)\n}"}},
		Kills: "TestLogCheckpointRefusesTruncatedAndRolledBack"},
	{Name: "rt: checkpoint-out through a fresh temporary file", File: "log_checkpoint.go",
		Edits: []mutation.Edit{{Old: `f, err := os.CreateTemp(dir, "."+base+".*.tmp")`, New: `f, err := os.OpenFile(filepath.Join(dir, base+".tmp"), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)`}},
		Kills: "TestLogAppendCheckpointOutFollowsNoLink"},
	{Name: "rt: log verify -key-file checks shred tags", File: "log.go",
		Edits: []mutation.Edit{{Old: "_, err = l.Verify(ctx, lf.session)", New: "_, err = eventlog.Verify(ctx, l.Store(), lf.session)"}},
		Kills: "TestLogVerifyKeyFileRefusesForeignShred"},
	{Name: "process: key file mode check", File: "process.go",
		Edits: []mutation.Edit{{Old: "if perm := fi.Mode().Perm(); perm&forbidden != 0 {", New: "if perm := fi.Mode().Perm(); perm&forbidden != 0 && false {"}},
		Kills: "TestProcessKeyFilePermissions"},
	{Name: "process: key file owner check", File: "process.go",
		Edits: []mutation.Edit{{Old: "ok && st.Uid != 0 && int(st.Uid) != keyFileUser() {", New: "ok && false {"}},
		Kills: "TestProcessKeyFileOwnedByAnotherUser"},
	{Name: "guard: -max-idle-connections not passed on", File: "guard.go",
		Edits: []mutation.Edit{{Old: "MaxIdleConnections:      *maxIdle,", New: "MaxIdleConnections:      0 * *maxIdle,"}},
		Kills: "TestGuardCapFlagsReachTheGuard"},
	{Name: "guard: -max-tunnels-per-source not passed on", File: "guard.go",
		Edits: []mutation.Edit{{Old: "MaxTunnelsPerSource:     *maxPerSource,", New: "MaxTunnelsPerSource:     0 * *maxPerSource,"}},
		Kills: "TestGuardCapFlagsReachTheGuard"},
	{Name: "guard: -max-connections not passed on", File: "guard.go",
		Edits: []mutation.Edit{{Old: "MaxConnections:          *maxConns,", New: "MaxConnections:          0 * *maxConns,"}},
		Kills: "TestGuardCapFlagsReachTheGuard|TestGuardServesMetrics"},
	{Name: "guard: -max-tunnels not passed on", File: "guard.go",
		Edits: []mutation.Edit{{Old: "MaxTunnels:              *maxTunnels,", New: "MaxTunnels:              0 * *maxTunnels,"}},
		Kills: "TestGuardCapFlagsReachTheGuard|TestGuardServesMetrics"},
	{Name: "receipt verify: -evidence not matched", File: "receipt.go",
		Edits: []mutation.Edit{{Old: "if err = matchEvidenceFile(evidence, receipt.Record()); err != nil {", New: "if err = nil; false {"}},
		Kills: "TestReceiptVerifyEvidence"},
}
