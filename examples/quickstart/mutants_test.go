package main

import (
	"testing"

	"github.com/checkfu/checkfu/internal/mutation"
)

// TestMutants proves the quickstart's bounds on agent text and its
// secret checks are tested: every mutant deletes one, and a named test
// must go red.
func TestMutants(t *testing.T) { mutation.Run(t, mutants) }

var mutants = []mutation.Mutant{
	{Name: "agent text keeps its control and format characters", File: "session.go",
		Edits: []mutation.Edit{{Old: `if r == utf8.RuneError || !unicode.IsPrint(r) {`, New: `if r == utf8.RuneError || unicode.IsControl(r) {`}},
		Kills: "TestAgentTextCannotDriveTheTerminal"},
	{Name: "agent text of any length is printed", File: "session.go",
		Edits: []mutation.Edit{{Old: `	if n > maxAgentText {
		i := maxAgentText`, New: `	if false {
		i := maxAgentText`}},
		Kills: "TestAgentTextCannotDriveTheTerminal"},
	{Name: "the credential check sees nothing", File: "session.go",
		Edits: []mutation.Edit{{Old: `return bytes.Contains(b, []byte(secret)) || bytes.Contains(b, []byte(hex.EncodeToString([]byte(secret))))`, New: `return false`}},
		Kills: "TestCredentialCheckCanFail"},
	{Name: "an agent without agentInfo crashes the quickstart", File: "session.go",
		Edits: []mutation.Edit{{Old: `	if info == nil || info.AgentInfo == nil {`, New: `	if false {`}},
		Kills: "TestAgentTextCannotDriveTheTerminal"},
	{Name: "the real agent's output is never scanned for the keys", File: "realagent.go",
		Edits: []mutation.Edit{{Old: `		if holds(buf, s) {`, New: `		if false {`}},
		Kills: "TestLeakScanFindsSecrets"},
	{Name: "a secret split across two writes of the real agent is missed", File: "realagent.go",
		Edits: []mutation.Edit{{Old: `keep = max(keep, 2*len(s)-1)`, New: `keep = max(keep, 0)`}},
		Kills: "TestLeakScanFindsSecrets"},
	{Name: "the refused request reaching the upstream goes unnoticed", File: "allowlist.go",
		Edits: []mutation.Edit{{Old: `	case refused != 0:`, New: `	case false:`}},
		Kills: "TestAllowlistCheckCanFail"},
	{Name: "the agent's answers through the guard are not checked", File: "allowlist.go",
		Edits: []mutation.Edit{{Old: `		if said[i] != prefix && `, New: `		if false && said[i] != prefix && `}},
		Kills: "TestAllowlistCheckCanFail"},
}
