// Package authz is the authorization plane of custody: what may use a
// credential, never the credential itself. It holds the static capability
// registrations ([Registry]) and the validation of tool arguments against
// them, credential leases ([Leases]) over a versioned provider
// [Catalog], action-bound [Approvals], and the governance [Evidence]
// they record through an [EvidenceSink], and the [PermissionAssignment]s
// that say who may call what ([Assignments], [Permit]).
//
// Invariants:
//
//   - This package cannot read a Secret: it never imports package custody
//     or custody/internal/reveal, directly or transitively (imports_test.go
//     makes that a build fact). It names a credential only by its
//     address.Binding.
//   - Resolve is pure: no I/O, no provider contact. A tool call is matched
//     to an exact static registration (capability id, tool, operation,
//     https resource, credential reference, read_only or external_effect)
//     and its arguments must be strict JSON (no duplicate keys, valid
//     UTF-8, bounded size, depth and numbers) satisfying the tool's JSON
//     Schema; anything unknown or mismatched is refused, typed.
//   - Leases are revocable by id alone; expired, revoked, exhausted or
//     out-of-scope leases are refused typed. An approval binds actor,
//     grant, canonical action, intended effect, scope and expiry;
//     changing any of them refuses, an actor may not approve its own
//     action, and an approval is used at most once.
//   - Approval decisions and effect results are recorded as separate
//     Evidence, each with a checkfu.Label; a decision that cannot be
//     recorded is no decision. Evidence carries identifiers, digests and
//     codes only: never a credential, never tool arguments.
//   - Permission is a pure decision over assignments, a
//     checkfu.RequestContext and a target: an assignment grants one actor
//     or role one capability or Connection within a tenant, a workspace
//     and optionally a project, until its expiry; a request outside that
//     scope is never permitted by it. No assignment means
//     [CodePermissionMissing], one refusal with one message that names
//     nothing (not whether the capability, resource or credential
//     exists). Revoking an assignment denies the next call.
//   - [Registry.Resolve] checks the exact registration before it looks at
//     the arguments, the order of the call pipeline (package
//     custody/pipeline), which alone orders the checks of a call.
//     [Leases.Usable] checks a use without spending it, so that the
//     pipeline spends a lease only when a call leaves; [Approvals.Pending]
//     finds only a live approval (approved, unspent, inside its lifetime).
//   - Every zero value fails closed, and every refusal is a
//     *checkfu.Refusal with an exported Code.
package authz
