package gateway_test

import (
	"testing"

	"github.com/checkfu/checkfu/internal/mutation"
)

func TestMutants(t *testing.T) { mutation.Run(t, append(mutants, remoteMutants...)) }

// pipelineFile is the call pipeline the gateway runs every call through;
// its checks are mutated from here, where the gateway's tests kill them.
const pipelineFile = "../custody/pipeline/pipeline.go"

// mutants delete, one at a time, each check on the gateway's path; each
// must be killed by the named test.
var mutants = []mutation.Mutant{
	{Name: "1 channel authentication", File: pipelineFile,
		Edits: []mutation.Edit{{Old: "return ch.p == p && p.channels[ch]", New: "return true"}},
		Kills: "TestGatewayDenied"},
	{Name: "1 a call on no open channel left unrecorded", File: pipelineFile,
		Edits: []mutation.Edit{{Old: "\t\treturn nil, p.refuseChannel(ctx)\n", New: "\t\treturn nil, errChannel\n"}},
		Kills: "TestChannelProbeLeavesATrace|TestGatewayDenied"},
	{Name: "1 a probe recorded with the channel's context", File: pipelineFile,
		Edits: []mutation.Edit{{Old: "\t\treturn nil, p.refuseChannel(ctx)\n", New: "\t\tif ch != nil && p != nil && p.channels != nil {\n\t\t\treturn nil, p.deny(ctx, authz.Evidence{Kind: authz.EvidenceGatewayDecision, Label: p.cfg.Label, Request: ch.rc, Actor: ch.rc.Actor}, errChannel)\n\t\t}\n\t\treturn nil, p.refuseChannel(ctx)\n"}},
		Kills: "TestChannelProbeLeavesATrace|TestGatewayDenied"},
	{Name: "1 a probe's recording failure lifts the refusal", File: pipelineFile,
		Edits: []mutation.Edit{{Old: "\treturn p.deny(ctx, authz.Evidence{Kind: authz.EvidenceGatewayDecision, Label: p.cfg.Label}, errChannel)", New: "\terr := p.deny(ctx, authz.Evidence{Kind: authz.EvidenceGatewayDecision, Label: p.cfg.Label}, errChannel)\n\tif ee := new(*authz.EvidenceError); errors.As(err, ee) {\n\t\treturn *ee\n\t}\n\treturn err"}},
		Kills: "TestChannelProbeLeavesATrace"},
	{Name: "1 context from the call", File: pipelineFile,
		Edits: []mutation.Edit{{Old: "\tctx = checkfu.WithRequestContext(ctx, rc)\n\tev := authz.Evidence{Kind: authz.EvidenceGatewayDecision, Request: rc, Label: p.cfg.Label, Actor: rc.Actor, Scope: rc.Session}\n\td, err := p.authorize(", New: "\tif got, ok := checkfu.RequestContextFrom(ctx); ok {\n\t\trc = got\n\t}\n\tev := authz.Evidence{Kind: authz.EvidenceGatewayDecision, Request: rc, Label: p.cfg.Label, Actor: rc.Actor, Scope: rc.Session}\n\td, err := p.authorize("}},
		Kills: "TestGatewayAllowedReadOnly"},
	{Name: "1 token MAC", File: "token.go",
		Edits: []mutation.Edit{{Old: "if err1 != nil || err2 != nil || !hmac.Equal(mac, h.mac(p)) {", New: "if _ = mac; err1 != nil || err2 != nil {"}},
		Kills: "TestOpenRefusesTokens"},
	{Name: "1 token expiry", File: "token.go",
		Edits: []mutation.Edit{{Old: "if !h.now().Before(time.Unix(tp.Expires, 0)) {", New: "if false {"}},
		Kills: "TestOpenRefusesTokens"},
	{Name: "2 permission assignment", File: pipelineFile,
		Edits: []mutation.Edit{{Old: "if err != nil || !listed {", New: "if _ = err; !listed {"}},
		Kills: "TestGatewayDenied|TestPermissionDenialIsUniform"},
	{Name: "2 profile listing", File: pipelineFile,
		Edits: []mutation.Edit{{Old: "if err != nil || !listed {", New: "if _ = listed; err != nil {"}},
		Kills: "TestGatewayDenied"},
	{Name: "2 permission refusal names the capability", File: pipelineFile,
		Edits: []mutation.Edit{{Old: `return Tool{}, authz.Entry{}, false, checkfu.Refuse(authz.CodePermissionMissing, "authz: no permission assignment allows this call")`, New: `return Tool{}, authz.Entry{}, false, checkfu.Refuse(authz.CodePermissionMissing, "authz: no permission for %s", capability)`}},
		Kills: "TestPermissionDenialIsUniform"},
	{Name: "3 exact registration", File: "../custody/authz/capability.go",
		Edits: []mutation.Edit{{Old: "\tif err := reg.match(call, credential); err != nil {\n\t\treturn Action{}, err", New: "\tif err := reg.match(call, credential); false && err != nil {\n\t\treturn Action{}, err"}},
		Kills: "TestGatewayDenied"},
	{Name: "4 arguments", File: "../custody/authz/capability.go",
		Edits: []mutation.Edit{{Old: "if err := reg.schema.Validate(v); err != nil {", New: "if err := reg.schema.Validate(v); false && err != nil {"}},
		Kills: "TestGatewayDenied"},
	{Name: "4 rules checked before the lease", File: pipelineFile,
		Edits: []mutation.Edit{{Old: "\tif err := outbound.Decide(conn.Rules, req); err != nil {\n\t\treturn nil, err\n\t}\n", New: ""}},
		Kills: "TestRefusedByRulesSpendsNoBudget"},
	{Name: "5 lease", File: pipelineFile,
		Edits: []mutation.Edit{{Old: "lease, err := p.cfg.Leases.Usable(d.lease, authz.LeaseUse{Scope: d.scope, Capability: capability})\n\tif err != nil {", New: "lease, err := p.cfg.Leases.Usable(d.lease, authz.LeaseUse{Scope: d.scope, Capability: capability})\n\tif false && err != nil {"}},
		Kills: "TestGatewayDenied"},
	{Name: "5 lease scoped to the context's actor", File: pipelineFile,
		Edits: []mutation.Edit{{Old: "scope: authz.LeaseScope{Service: p.cfg.Service, Gateway: p.cfg.Name, Actor: rc.Actor}}", New: "scope: authz.LeaseScope{Service: p.cfg.Service, Gateway: p.cfg.Name, Actor: \"user:bob\"}}"}},
		Kills: "TestGatewayDenied"},
	{Name: "5 approval required", File: pipelineFile,
		Edits: []mutation.Edit{{Old: "\tif d.action.Effect != authz.ReadOnly {\n\t\tid, ok :=", New: "\tif false {\n\t\tid, ok :="}},
		Kills: "TestGatewayDenied|TestGatewayAllowedExternalEffect"},
	{Name: "5 approval bound to the session", File: pipelineFile,
		Edits: []mutation.Edit{{Old: "Effect: action.Effect, Scope: rc.Session}", New: "Effect: action.Effect, Scope: \"sess-1\"}"}},
		Kills: "TestGatewayDenied"},
	{Name: "6 revalidation before the effect", File: pipelineFile,
		Edits: []mutation.Edit{{Old: "err = p.cfg.Approvals.Carry(actx, d.approval, d.binding, send)", New: "err = send(actx)"}},
		Kills: "TestGatewayAllowedExternalEffect"},
	{Name: "6 decision recorded before the effect", File: pipelineFile,
		Edits: []mutation.Edit{{Old: "\tif rerr := p.cfg.Evidence.Record(ctx, ev); rerr != nil {\n\t\tp.unrecorded(ctx, ev, rerr)\n\t\treturn nil, &authz.EvidenceError{Kind: ev.Kind, Err: rerr}\n\t}\n", New: ""}},
		Kills: "TestGatewayAllowedReadOnly|TestUnrecordedDecisionIsNoCall"},
	{Name: "6 the edge sent without the context", File: pipelineFile,
		Edits: []mutation.Edit{{Old: "resp, err = p.send(ctx, d)", New: "resp, err = p.send(context.WithoutCancel(context.Background()), d)"}},
		Kills: "TestEveryHopCarriesTheContext"},
	{Name: "6 the approval carried without the context", File: pipelineFile,
		Edits: []mutation.Edit{{Old: "err = p.cfg.Approvals.Carry(actx, d.approval, d.binding, send)", New: "_ = actx\n\t\terr = p.cfg.Approvals.Carry(context.Background(), d.approval, d.binding, send)"}},
		Kills: "TestEveryHopCarriesTheContext"},
	{Name: "7 result recorded", File: pipelineFile,
		Edits: []mutation.Edit{{Old: "if rerr := p.cfg.Evidence.Record(context.WithoutCancel(ctx), res); rerr != nil {", New: "if rerr := error(nil); rerr != nil {"}},
		Kills: "TestGatewayAllowedReadOnly"},
	{Name: "7 denial recorded", File: pipelineFile,
		Edits: []mutation.Edit{{Old: "if rerr := p.cfg.Evidence.Record(context.WithoutCancel(ctx), ev); rerr != nil {\n\t\tp.unrecorded(ctx, ev, rerr)\n", New: "if rerr := error(nil); rerr != nil {\n\t\tp.unrecorded(ctx, ev, rerr)\n"}},
		Kills: "TestGatewayDenied"},
	{Name: "Refuse records a closed channel's refusal with its context", File: pipelineFile,
		Edits: []mutation.Edit{{Old: "if p == nil || p.channels == nil || !p.open(ch) {\n\t\treturn p.refuseChannel(ctx)\n\t}\n\trc := ch.rc\n\tctx = checkfu.WithRequestContext(ctx, rc)\n\treturn p.deny(", New: "if p == nil || p.channels == nil {\n\t\treturn p.refuseChannel(ctx)\n\t}\n\trc := ch.rc\n\tctx = checkfu.WithRequestContext(ctx, rc)\n\treturn p.deny("}},
		Kills: "TestChannelRefuse"},
}
