package gateway

import (
	"context"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/authz"
)

// Refuse records err, a refusal the broker decided for a call over ch
// before the call named a capability (a message over the broker's bound,
// a tools/call its MCP session could not take), as a refused gateway
// decision with ch's request context and err's code, and returns err
// (joined with the recording failure, if any). On a channel this gateway
// did not open, or has closed, it records and returns what [Channel.Call]
// would: [CodeChannelUnknown], with no request context.
func (ch *Channel) Refuse(ctx context.Context, err error) error {
	if ch == nil {
		return errChannel
	}
	g := ch.g
	if g == nil || g.channels == nil || !g.authenticated(ch) {
		return g.refuseChannel(ctx)
	}
	rc := ch.rc
	ctx = checkfu.WithRequestContext(ctx, rc)
	return g.deny(ctx, authz.Evidence{Kind: authz.EvidenceGatewayDecision, Request: rc, Label: g.cfg.Label, Actor: rc.Actor, Scope: rc.Session}, err)
}
