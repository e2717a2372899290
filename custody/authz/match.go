package authz

import (
	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/address"
)

func (r *Registry) registered(capability string) (*registered, error) {
	var reg *registered
	if r != nil {
		reg = r.regs[capability]
	}
	if reg == nil {
		return nil, errUnknown(capability)
	}
	return reg, nil
}

// errUnknown refuses a capability that is not registered.
func errUnknown(capability string) error {
	return checkfu.Refuse(CodeCapabilityUnknown, "authz: capability %s is not registered", checkfu.Quote(capability))
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
