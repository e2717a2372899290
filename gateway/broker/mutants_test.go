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
	{Name: "no line bound", File: "conn.go",
		Edits: []mutation.Edit{{Old: "if len(r.buf)+len(frag) > MaxLineBytes {", New: "if false {"}},
		Kills: "TestBrokerLineBound"},
	{Name: "an over-long line unrecorded", File: "conn.go",
		Edits: []mutation.Edit{{Old: "				c.b.refuse(ctx, err)\n", New: ""}},
		Kills: "TestBrokerLineBound"},
	{Name: "no connection bound", File: "broker.go",
		Edits: []mutation.Edit{{Old: "conns: make(chan struct{}, MaxConnections)", New: "conns: make(chan struct{}, 1<<10)"}},
		Kills: "TestBrokerConnectionBound"},
	{Name: "no bound on calls in flight", File: "broker.go",
		Edits: []mutation.Edit{{Old: "inflight: make(chan struct{}, MaxCallsInFlight)", New: "inflight: make(chan struct{}, 1<<10)"}},
		Kills: "TestBrokerCallsInFlightBound"},
	{Name: "a slot never given back", File: "conn.go",
		Edits: []mutation.Edit{{Old: "	<-c.b.inflight\n	return call", New: "	return call"}},
		Kills: "TestBrokerCallsInFlightBound"},
	{Name: "handlers outlive their connection", File: "broker.go",
		Edits: []mutation.Edit{{Old: "	go ss.Close()\n	c.Close()\n", New: "	go ss.Close()\n"}},
		Kills: "TestBrokerServeEndsWithContext"},
	{Name: "a tools/call the SDK answered unrecorded", File: "conn.go",
		Edits: []mutation.Edit{{Old: "if c.release(resp) && resp.Error != nil {", New: "if c.release(resp) && false {"}},
		Kills: "TestBrokerRecordsMalformedCalls"},
	{Name: "a tools/call notification unrecorded", File: "conn.go",
		Edits: []mutation.Edit{{Old: "				c.b.refuse(ctx, errCallMalformed)\n				continue", New: "				continue"}},
		Kills: "TestBrokerRecordsMalformedCalls"},
	{Name: "no refusal budget", File: "refusals.go",
		Edits: []mutation.Edit{{Old: "	r.spent++\n", New: ""}},
		Kills: "TestBrokerRefusalBounds"},
	{Name: "no refusal rate", File: "refusals.go",
		Edits: []mutation.Edit{{Old: "if wait <= 0 {", New: "if true {"}},
		Kills: "TestBrokerRefusalBounds"},
	{Name: "gateway refusals not counted", File: "broker.go",
		Edits: []mutation.Edit{{Old: "		if _, refused := checkfu.CodeOf(err); refused {\n			b.spent(ctx)\n		}\n", New: ""}},
		Kills: "TestBrokerRefusalBounds"},
}
