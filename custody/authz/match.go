package authz

import (
	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/address"
)

// Match is the registration half of [Registry.Resolve], for a caller that
// orders the checks itself (the gateway): the capability must be
// registered ([CodeCapabilityUnknown]) and the call's tool name,
// operation, resource and the credential reference the caller will use
// must equal the registration byte for byte ([CodeCapabilityMismatch]).
// The arguments are not looked at; [Registry.Arguments] checks them. It
// is pure: no I/O, no provider contact.
func (r *Registry) Match(call ToolCall, credential address.Binding) (Registration, error) {
	reg, err := r.registered(call.Capability)
	if err != nil {
		return Registration{}, err
	}
	if err := reg.match(call, credential); err != nil {
		return Registration{}, err
	}
	out := reg.Registration
	out.Tool.InputSchema = append([]byte(nil), out.Tool.InputSchema...)
	return out, nil
}

// Arguments is the argument half of [Registry.Resolve]: the call's
// arguments must be strict JSON satisfying the registered tool's JSON
// Schema ([CodeArgumentsInvalid]); it returns the canonical Action. It
// does not compare the call's other fields with the registration: call
// [Registry.Match] first. It is pure.
func (r *Registry) Arguments(call ToolCall) (Action, error) {
	reg, err := r.registered(call.Capability)
	if err != nil {
		return Action{}, err
	}
	body, err := validateArguments(reg, call.Arguments)
	if err != nil {
		return Action{}, err
	}
	return reg.action(body), nil
}

func (r *Registry) registered(capability string) (*registered, error) {
	var reg *registered
	if r != nil {
		reg = r.regs[capability]
	}
	if reg == nil {
		return nil, checkfu.Refuse(CodeCapabilityUnknown, "authz: capability %s is not registered", checkfu.Quote(capability))
	}
	return reg, nil
}

func (reg *registered) match(call ToolCall, credential address.Binding) error {
	mismatch := func(field, got, want string) error {
		return checkfu.Refuse(CodeCapabilityMismatch, "authz: capability %s: %s %s does not match the registration (%s)", checkfu.Quote(call.Capability), field, checkfu.Quote(got), checkfu.Quote(want))
	}
	switch {
	case call.Tool != reg.Tool.Name:
		return mismatch("tool", call.Tool, reg.Tool.Name)
	case call.Operation != reg.Operation:
		return mismatch("operation", call.Operation, reg.Operation)
	case call.Resource != reg.Resource:
		return mismatch("resource", call.Resource, reg.Resource)
	case credential != reg.Credential:
		return mismatch("credential reference", credential.String(), reg.Credential.String())
	}
	return nil
}

func (reg *registered) action(body []byte) Action {
	return Action{
		Capability: reg.Capability,
		Operation:  reg.Operation,
		Resource:   reg.Resource,
		Effect:     reg.Effect,
		Body:       body,
	}
}
