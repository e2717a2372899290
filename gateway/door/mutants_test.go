package door_test

import (
	"testing"

	"github.com/checkfu/checkfu/internal/mutation"
)

func TestMutants(t *testing.T) { mutation.Run(t, mutants) }

// mutants delete or loosen the door's bounds; each must be killed by the
// named test.
var mutants = []mutation.Mutant{
	{Name: "a line of exactly the bound is refused", File: "mcp.go",
		Edits: []mutation.Edit{{Old: "if len(long)+len(piece) > MaxLineBytes {", New: "if len(long)+len(piece) >= MaxLineBytes {"}},
		Kills: "TestRelayMCPLineBound"},
	{Name: "no line bound", File: "mcp.go",
		Edits: []mutation.Edit{
			{Old: "if len(long)+len(piece) > MaxLineBytes {", New: "if false {"},
			{Old: "if len(long)+len(piece) >= MaxLineBytes {", New: "if false {"},
		},
		Kills: "TestRelayMCPLineBound"},
	{Name: "no connection bound on the model relay", File: "model.go",
		Edits: []mutation.Edit{{Old: "		default:\n			c.Close()\n			continue\n", New: ""}},
		Kills: "TestServeModelConnBound"},
	{Name: "the model relay listens beyond loopback", File: "model.go",
		Edits: []mutation.Edit{{Old: "if err != nil || !ap.Addr().IsLoopback() {", New: "if err != nil {"}},
		Kills: "TestListenModelLoopbackOnly"},
	// The model route's checks, killed end to end: an agent in its own
	// process behind the real door program.
	{Name: "end to end: the model key never attached", File: "../../custody/edge/stream.go",
		Edits: []mutation.Edit{{Old: "c.Allowed, c.Rules), e.attach(secret, c.Credential, c.Lease.ID, c.Scope, header, c.KeyPrefix))", New: "c.Allowed, c.Rules), nil)"}},
		Kills: "TestModelRouteThroughTheDoor"},
	{Name: "end to end: any model allowed", File: "../../custody/pipeline/model.go",
		Edits: []mutation.Edit{{Old: "if err := (modelroute.Policy{Models: reg.Model.Models}).Check(req); err != nil {", New: "if false {"}},
		Kills: "TestModelRouteThroughTheDoor"},
	{Name: "end to end: no model budget", File: "../../gateway/modelroute/policy.go",
		Edits: []mutation.Edit{{Old: "if m.used.Requests >= m.budget.Requests || m.used.Tokens >= m.budget.Tokens {", New: "if false {"}},
		Kills: "TestModelRouteThroughTheDoor"},
	{Name: "end to end: the agent's headers travel to the model", File: "../../custody/pipeline/model.go",
		Edits: []mutation.Edit{{Old: "hreq.Header = req.Headers(call.Header)", New: "hreq.Header = call.Header.Clone()"}},
		Kills: "TestModelRouteThroughTheDoor"},
	{Name: "an agent that outlives its input is never stopped", File: "run.go",
		Edits: []mutation.Edit{{Old: "inputEnded, stop = nil, time.After(InputGrace)", New: "inputEnded = nil"}},
		Kills: "TestRunStopsAnAgentThatOutlivesItsInput"},
	{Name: "the stop reaches the agent, not its process group", File: "attr_linux.go",
		Edits: []mutation.Edit{{Old: "syscall.Kill(-p.Pid, sig)", New: "syscall.Kill(p.Pid, sig)"}},
		Kills: "TestRunStopsAnAgentThatOutlivesItsInput"},
}
