// Package pipeline is the call pipeline: the one type that owns the order
// of the checks every credentialed tool call passes between sandbox code
// and custody's outbound edge. The gateway (package gateway) establishes
// a channel's request context from a server-owned token and runs every
// call through a [Pipeline]; the Runner's approval binding asks the same
// pipeline for the action a call will be ([Channel.Plan]), so there is
// one order and one action digest.
//
// Invariants:
//
//   - The order is fixed and written once ([Pipeline]): channel,
//     assignment, registration, arguments, rules, approval, lease, edge,
//     events. Nothing is skipped, and a call is looked up in the registry
//     once and decided by the Connection's egress rules once: the edge's
//     egress client, which holds the same rules, sends what they allowed
//     (egress.Client.Send), and decides again only a request other
//     rules, or these rules before a change, allowed. A model call
//     ([Channel.Model]) is decided the same way.
//   - A refusal spends nothing: the lease is checked at its step and
//     spent only when the call is about to leave, inside the approval's
//     revalidation for an external effect. A call refused
//     approval_required leaves the lease's budget unchanged.
//   - The outbound edge takes only an [edge.Authorized], and only this
//     package makes one: its type lives in custody/internal/outbound,
//     which only this package and custody/edge may import, and it has no
//     exported field. The value carries the action, the request built from
//     it, the spent lease and the approval the call runs under; it is
//     taken once. TestNoExportedPathReachesTheEdge checks the exported
//     API for any other path; TestEdgePathsFindsPlantedLeaks runs the same
//     check on a module in testdata that plants each kind of path, and
//     requires every one reported.
//   - The approval for an external effect is never named by the call: the
//     pipeline finds a live one bound to exactly this actor, lease,
//     action, effect and session ([authz.Approvals.Pending]); an expired
//     approval never shadows a live one.
//   - The decision and the result are separate evidence events, each
//     carrying the whole request context of the channel; a decision that
//     cannot be recorded is no decision and the call does not run. A call
//     over no open channel is recorded with no context at all.
//   - Every event of a call over a channel names the channel ([Channel.ID],
//     drawn at Open, distinct per channel): the decision and the result,
//     and, through the call's Go context ([authz.WithChannel]), the
//     edge's edge_call and the approval's result. A call over no open
//     channel names none.
//   - An agent's own model call ([Channel.Model]) passes the same order,
//     with the model route's checks in the place of the arguments: the
//     model registration, the dialect's method and path (Anthropic
//     Messages' count_tokens too, sent to the registered resource
//     followed by "/count_tokens", never a path the agent chose) and a
//     strict body, the allowed models, the rules, the session's model
//     budget (checked before the decision, spent as the call leaves; a
//     token count spends a request and no tokens), the lease.
//     The edge attaches the model key ([edge.Edge.Stream]); the agent's
//     own credential or routing headers never travel. Its result is a
//     model_result event: the model, the tokens, the status, the
//     duration, never the prompt or the completion.
//   - This package reads no credential: it never imports
//     custody/internal/reveal (imports_test.go); only the edge it hands a
//     call to opens one.
//   - Every zero value refuses.
package pipeline
