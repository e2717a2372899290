package gateway_test

import (
	"testing"

	"github.com/checkfu/checkfu/internal/mutation"
)

func TestMutants(t *testing.T) { mutation.Run(t, append(mutants, remoteMutants...)) }

// mutants delete, one at a time, each check on the gateway's path; each
// must be killed by the named test.
var mutants = []mutation.Mutant{
	{Name: "1 channel authentication", File: "gateway.go",
		Edits: []mutation.Edit{{Old: "return ch.g == g && g.channels[ch]", New: "return true"}},
		Kills: "TestGatewayDenied"},
	{Name: "1 context from the call", File: "gateway.go",
		Edits: []mutation.Edit{{Old: "\tctx = checkfu.WithRequestContext(ctx, rc)\n", New: "\tif got, ok := checkfu.RequestContextFrom(ctx); ok {\n\t\trc = got\n\t}\n"}},
		Kills: "TestGatewayAllowedReadOnly"},
	{Name: "1 token MAC", File: "token.go",
		Edits: []mutation.Edit{{Old: "if err1 != nil || err2 != nil || !hmac.Equal(mac, h.mac(p)) {", New: "if _ = mac; err1 != nil || err2 != nil {"}},
		Kills: "TestOpenRefusesTokens"},
	{Name: "1 token expiry", File: "token.go",
		Edits: []mutation.Edit{{Old: "if !h.now().Before(time.Unix(tp.Expires, 0)) {", New: "if false {"}},
		Kills: "TestOpenRefusesTokens"},
	{Name: "2 permission assignment", File: "gateway.go",
		Edits: []mutation.Edit{{Old: "if err != nil || !listed {", New: "if !listed {"}},
		Kills: "TestGatewayDenied|TestPermissionDenialIsUniform"},
	{Name: "2 profile listing", File: "gateway.go",
		Edits: []mutation.Edit{{Old: "if err != nil || !listed {", New: "if _ = listed; err != nil {"}},
		Kills: "TestGatewayDenied"},
	{Name: "2 permission refusal names the capability", File: "gateway.go",
		Edits: []mutation.Edit{{Old: `return decided{}, checkfu.Refuse(authz.CodePermissionMissing, "authz: no permission assignment allows this call")`, New: `return decided{}, checkfu.Refuse(authz.CodePermissionMissing, "authz: no permission for %s", capability)`}},
		Kills: "TestPermissionDenialIsUniform"},
	{Name: "3 exact registration", File: "gateway.go",
		Edits: []mutation.Edit{{Old: "if _, err := g.cfg.Registry.Match(call, conn.Credential); err != nil {", New: "if _, err := g.cfg.Registry.Match(call, conn.Credential); false && err != nil {"}},
		Kills: "TestGatewayDenied"},
	{Name: "4 arguments", File: "gateway.go",
		Edits: []mutation.Edit{{Old: "\taction, err := g.cfg.Registry.Arguments(call)\n\tif err != nil {", New: "\taction, err := g.cfg.Registry.Arguments(call)\n\tif false && err != nil {"}},
		Kills: "TestGatewayDenied"},
	{Name: "5 lease", File: "gateway.go",
		Edits: []mutation.Edit{{Old: "lease, err := g.cfg.Leases.Use(ch.lease, authz.LeaseUse{Scope: scope, Capability: capability})\n\tif err != nil {", New: "lease, err := g.cfg.Leases.Use(ch.lease, authz.LeaseUse{Scope: scope, Capability: capability})\n\tif false && err != nil {"}},
		Kills: "TestGatewayDenied"},
	{Name: "5 lease scoped to the context's actor", File: "gateway.go",
		Edits: []mutation.Edit{{Old: "scope := authz.LeaseScope{Service: g.cfg.Service, Gateway: g.cfg.Name, Actor: rc.Actor}", New: "scope := authz.LeaseScope{Service: g.cfg.Service, Gateway: g.cfg.Name, Actor: \"user:bob\"}"}},
		Kills: "TestGatewayDenied"},
	{Name: "5 approval required", File: "gateway.go",
		Edits: []mutation.Edit{{Old: "if action.Effect != authz.ReadOnly {", New: "if false {"}},
		Kills: "TestGatewayDenied|TestGatewayAllowedExternalEffect"},
	{Name: "5 approval bound to the session", File: "gateway.go",
		Edits: []mutation.Edit{{Old: "Effect: action.Effect, Scope: rc.Session}", New: "Effect: action.Effect, Scope: \"sess-1\"}"}},
		Kills: "TestGatewayDenied"},
	{Name: "6 revalidation before the effect", File: "gateway.go",
		Edits: []mutation.Edit{{Old: "err = g.cfg.Approvals.Carry(ctx, d.approval, d.binding, send)", New: "err = send(ctx)"}},
		Kills: "TestGatewayAllowedExternalEffect"},
	{Name: "6 decision recorded before the effect", File: "gateway.go",
		Edits: []mutation.Edit{{Old: "\tif rerr := g.cfg.Evidence.Record(ctx, ev); rerr != nil {\n\t\treturn nil, &authz.EvidenceError{Kind: ev.Kind, Err: rerr}\n\t}\n", New: ""}},
		Kills: "TestGatewayAllowedReadOnly|TestUnrecordedDecisionIsNoCall"},
	{Name: "7 result recorded", File: "gateway.go",
		Edits: []mutation.Edit{{Old: "if rerr := g.cfg.Evidence.Record(context.WithoutCancel(ctx), res); rerr != nil {", New: "if rerr := error(nil); rerr != nil {"}},
		Kills: "TestGatewayAllowedReadOnly"},
	{Name: "7 denial recorded", File: "gateway.go",
		Edits: []mutation.Edit{{Old: "if rerr := g.cfg.Evidence.Record(context.WithoutCancel(ctx), ev); rerr != nil {\n\t\treturn errors.Join(err, &authz.EvidenceError{Kind: ev.Kind, Err: rerr})", New: "if rerr := error(nil); rerr != nil {\n\t\treturn errors.Join(err, &authz.EvidenceError{Kind: ev.Kind, Err: rerr})"}},
		Kills: "TestGatewayDenied"},
}
