package authz

import "github.com/checkfu/checkfu"

// Refusal codes of the authorization plane.
const (
	// CodeProviderUnknown: no versioned provider entry exists for the
	// exact provider revision a lease asks for.
	CodeProviderUnknown checkfu.Code = "provider_unknown"
	// CodeCapabilityUnqualified: a lease asks for a capability that is not
	// in the provider entry's qualified set or is not registered.
	CodeCapabilityUnqualified checkfu.Code = "capability_unqualified"
	// CodeLeaseRequestInvalid: a lease request lacks a scope field, a
	// positive budget or a positive expiry within the maximum.
	CodeLeaseRequestInvalid checkfu.Code = "lease_request_invalid"
	// CodeLeaseUnknown: no lease has that id.
	CodeLeaseUnknown checkfu.Code = "lease_unknown"
	// CodeLeaseRevoked: the lease was revoked.
	CodeLeaseRevoked checkfu.Code = "lease_revoked"
	// CodeLeaseExpired: the lease's expiry has passed.
	CodeLeaseExpired checkfu.Code = "lease_expired"
	// CodeLeaseOutOfScope: the use names a different service, gateway,
	// actor or a capability the lease does not hold.
	CodeLeaseOutOfScope checkfu.Code = "lease_out_of_scope"
	// CodeLeaseBudgetExhausted: the lease's budget of uses is spent.
	CodeLeaseBudgetExhausted checkfu.Code = "lease_budget_exhausted"

	// CodeApprovalInvalid: a decision lacks a bound field, an approver or
	// a positive lifetime within the maximum, or the approver is the actor.
	CodeApprovalInvalid checkfu.Code = "approval_invalid"
	// CodeApprovalRequired: an external-effect action was attempted
	// without an approval.
	CodeApprovalRequired checkfu.Code = "approval_required"
	// CodeApprovalUnknown: no approval has that id.
	CodeApprovalUnknown checkfu.Code = "approval_unknown"
	// CodeApprovalDenied: the approver denied the action.
	CodeApprovalDenied checkfu.Code = "approval_denied"
	// CodeApprovalExpired: the approval's expiry has passed.
	CodeApprovalExpired checkfu.Code = "approval_expired"
	// CodeApprovalMismatch: the attempted action differs from the approved
	// one in actor, grant, action, effect or scope.
	CodeApprovalMismatch checkfu.Code = "approval_mismatch"
	// CodeApprovalUsed: the approval was already spent on its one effect.
	CodeApprovalUsed checkfu.Code = "approval_used"

	// CodeRegistrationInvalid: a capability registration is incomplete,
	// malformed or duplicated; the registry is not built.
	CodeRegistrationInvalid checkfu.Code = "registration_invalid"
	// CodeCapabilityUnknown: a tool call names a capability id that is not
	// registered.
	CodeCapabilityUnknown checkfu.Code = "capability_unknown"
	// CodeCapabilityMismatch: a tool call's tool name, operation, resource
	// or credential reference differs from the registration.
	CodeCapabilityMismatch checkfu.Code = "capability_mismatch"
	// CodePermissionMissing: no permission assignment grants the actor
	// (or its role) the capability or its Connection in the request's
	// scope. The refusal names nothing: not whether the capability, the
	// resource or the credential exists.
	CodePermissionMissing checkfu.Code = "permission_missing"
	// CodeAssignmentInvalid: a permission assignment does not name exactly
	// one actor or role, exactly one capability or Connection, a tenant, a
	// workspace and an expiry, or its id is already held.
	CodeAssignmentInvalid checkfu.Code = "assignment_invalid"

	// CodeArgumentsInvalid: the tool arguments are not strict JSON or do
	// not satisfy the tool descriptor's JSON Schema.
	CodeArgumentsInvalid checkfu.Code = "arguments_invalid"
)
