package pipeline_test

import (
	"testing"

	"github.com/checkfu/checkfu/internal/mutation"
)

func TestMutants(t *testing.T) { mutation.Run(t, mutants) }

// approvalStep and leaseStep are steps 6 and 7 of the pipeline, as the
// mutants below find them.
const (
	approvalStep = "\t// 6. The approval, for an external effect: a live one, bound to\n\t// exactly this call. The agent never names it.\n\tif d.action.Effect != authz.ReadOnly {\n\t\tid, ok := p.cfg.Approvals.Pending(d.binding)\n\t\tif !ok {\n\t\t\treturn nil, checkfu.Refuse(authz.CodeApprovalRequired, \"pipeline: capability %s has an external effect and runs only under an approval\", checkfu.Quote(capability))\n\t\t}\n\t\td.approval, ev.Approval = id, id\n\t}\n"
	leaseStep    = "\t// 7. The lease would allow the use; it is spent only when the call\n\t// leaves.\n\tlease, err := p.cfg.Leases.Usable(d.lease, authz.LeaseUse{Scope: d.scope, Capability: capability})\n\tif err != nil {\n\t\treturn nil, err\n\t}\n"
)

// mutants break the pipeline's order and its budget rule one at a time;
// the gateway's mutants (gateway/mutants_test.go) break each check.
var mutants = []mutation.Mutant{
	{Name: "the approval and lease steps reordered", File: "pipeline.go",
		Edits: []mutation.Edit{{Old: approvalStep + leaseStep, New: leaseStep + approvalStep}},
		Kills: "TestApprovalBeforeLease"},
	{Name: "the lease spent before the approval", File: "pipeline.go",
		Edits: []mutation.Edit{{Old: approvalStep + leaseStep, New: "\tlease, err := p.cfg.Leases.Use(d.lease, authz.LeaseUse{Scope: d.scope, Capability: capability})\n\tif err != nil {\n\t\treturn nil, err\n\t}\n" + approvalStep}},
		Kills: "TestApprovalRequiredSpendsNothing"},
	{Name: "the lease spent at the check", File: "pipeline.go",
		Edits: []mutation.Edit{{Old: "lease, err := p.cfg.Leases.Usable(d.lease,", New: "lease, err := p.cfg.Leases.Use(d.lease,"}},
		Kills: "TestApprovalRequiredSpendsNothing|TestExpiredApprovalDoesNotShadow"},
	{Name: "an expired approval shadows a live one", File: "../authz/approval_find.go",
		Edits: []mutation.Edit{{Old: "st.approval.Check(b, now) == nil", New: "st.approval.Approved && now == now"}},
		Kills: "TestExpiredApprovalDoesNotShadow"},
	{Name: "an error answer recorded as a success", File: "pipeline.go",
		Edits: []mutation.Edit{{Old: "\t\t\tfailed = answerFailed(d.protocol, resp)\n", New: "\t\t\tfailed = nil\n"}},
		Kills: "TestProviderErrorIsAFailure"},
	{Name: "a call looks its registration up twice", File: "pipeline.go",
		Edits: []mutation.Edit{{Old: "\taction, err := reg.Resolve(call, conn.Credential)\n", New: "\treg, _ = p.registry.Find(capability)\n\taction, err := reg.Resolve(call, conn.Credential)\n"}},
		Kills: "TestOneLookupPerCall"},
	{Name: "two Connections for one credential accepted", File: "pipeline.go",
		Edits: []mutation.Edit{{Old: "if _, dup := p.conns[c.Credential]; dup {", New: "if _, dup := p.conns[c.Credential]; dup && false {"}},
		Kills: "TestNewRefusesTwoConnectionsForOneCredential"},
	{Name: "the dry run skips the channel", File: "plan.go",
		Edits: []mutation.Edit{{Old: "if ch == nil || ch.p == nil || !ch.p.open(ch) {", New: "if ch == nil || ch.p == nil {"}},
		Kills: "TestPlanIsTheCall"},
	{Name: "the caller's context values shadow the channel's", File: "pipeline.go",
		Edits: []mutation.Edit{{Old: "\tif v := c.values.Value(key); v != nil {\n\t\treturn v\n\t}\n\treturn c.Context.Value(key)\n", New: "\tif v := c.Context.Value(key); v != nil {\n\t\treturn v\n\t}\n\treturn c.values.Value(key)\n"}},
		Kills: "TestBindIsTheLayeredContext"},
	// Red team (docs/changes/wt-rtpipe.md).
	{Name: "a model call refused at the lease keeps its reservation", File: "model.go",
		Edits: []mutation.Edit{{Old: "\t\td.meter.Release(hold)\n", New: ""}},
		Kills: "TestModelCallRefusedAtTheLeaseSpendsNoRequest"},
	// The model call decided once (docs/changes/wt-stream1.md).
	{Name: "a model call's refusal by the rules ignored", File: "model.go",
		Edits: []mutation.Edit{{Old: "\tallowed, err := conn.Rules.Allow(hreq)\n\tif err != nil {", New: "\tallowed, err := conn.Rules.Allow(hreq)\n\tif false && err != nil {"}},
		Kills: "TestModelHeadersCannotSmuggle"},
	{Name: "closing a channel no pipeline opened", File: "pipeline.go",
		Edits: []mutation.Edit{{Old: "func (ch *Channel) Close() {\n\tif ch == nil || ch.p == nil {\n\t\treturn\n\t}\n", New: "func (ch *Channel) Close() {\n"}},
		Kills: "TestZeroChannelNeitherPanicsNorCalls"},
}
