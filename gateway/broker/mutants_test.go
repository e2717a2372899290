package broker_test

import (
	"testing"

	"github.com/checkfu/checkfu/internal/mutation"
)

func TestMutants(t *testing.T) { mutation.Run(t, mutants) }

// mutants delete the broker's own checks; each must be killed by the
// named test.
var mutants = []mutation.Mutant{
	{Name: "descriptor must be registered", File: "broker.go",
		Edits: []mutation.Edit{{Old: "if !ok || reg.Tool.Name != pt.Tool || reg.Operation != pt.Operation || reg.Resource != pt.Resource {", New: "if !ok {"}},
		Kills: "TestBrokerRefusesUnregisteredDescriptor"},
	{Name: "refusal text is the code alone", File: "broker.go",
		Edits: []mutation.Edit{{Old: `text = "refused: " + string(code)`, New: `text = "refused: " + string(code) + ": " + err.Error()`}},
		Kills: "TestBrokerCallAllowedAndDenied"},
	{Name: "an unlisted tool is answered by the SDK, unrecorded", File: "broker.go",
		Edits: []mutation.Edit{{Old: "	b.server.AddReceivingMiddleware(b.unlisted)\n", New: ""}},
		Kills: "TestBrokerCallAllowedAndDenied"},
	{Name: "an unlisted tool's name passed to the gateway", File: "broker.go",
		Edits: []mutation.Edit{{Old: `return b.call(ctx, "", false, nil), nil`, New: `return b.call(ctx, call.Params.Name, false, call.Params.Arguments), nil`}},
		Kills: "TestBrokerCallAllowedAndDenied"},
}
