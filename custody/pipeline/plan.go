package pipeline

import (
	"encoding/json"

	"github.com/checkfu/checkfu/custody/authz"
)

// A Plan is what a call would be if it were made now: the action the
// pipeline resolves it to, and for an external effect the exact binding
// an approval must carry for the call to run. Arguments are the
// canonical arguments the action's digest covers.
type Plan struct {
	Capability string
	Tool       string
	Effect     authz.Effect
	Action     string // the action's digest, as the pipeline computes it for the call
	Arguments  json.RawMessage
	Binding    authz.ApprovalBinding // zero for a read_only action
}

// Plan is the pipeline's dry run of a call of capability with args over
// ch: steps 1 to 5 (channel, assignment, registration, arguments, rules),
// with the refusal a call would get. It records nothing, spends nothing,
// asks for no approval and contacts nothing. The Runner uses it to bind
// an approval to exactly the action the call will be.
func (ch *Channel) Plan(capability string, args json.RawMessage) (Plan, error) {
	if ch == nil || ch.p == nil || !ch.p.open(ch) {
		return Plan{}, errChannel
	}
	var ev authz.Evidence
	d, err := ch.p.resolve(ch, capability, args, &ev)
	if err != nil {
		return Plan{}, err
	}
	return Plan{
		Capability: d.action.Capability, Tool: d.tool, Effect: d.action.Effect, Action: d.digest,
		Arguments: json.RawMessage(append([]byte(nil), d.action.Body...)), Binding: d.binding,
	}, nil
}
