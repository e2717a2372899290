package runner

import (
	"strconv"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/acp"
	"github.com/checkfu/checkfu/adapters"
)

// The codes of the refusals this package adds; every other refusal on
// the Runner's path keeps the code of the package that refused
// (admission, adapters, acp, gateway, custody, egress). Values are
// object_condition and unique across the module.
const (
	// CodePermissionUnbound: an agent's session/request_permission does
	// not name an external_effect tool of the session's profile with
	// arguments that tool accepts, so there is no action to bind an
	// approval to, nor is it a read of the session's workspace by the
	// agent's own tool (CodeWorkspaceReadPermission). It is denied
	// without asking the Approver.
	CodePermissionUnbound checkfu.Code = "permission_unbound"
	// CodeProviderUnenrolled: the provider is not in-process and the
	// Config carries no enrollment for it; the Runner signs a
	// materialization statement only for code it runs itself.
	CodeProviderUnenrolled checkfu.Code = "provider_unenrolled"
	// CodeDescriptionMismatch: the provider's Description disagrees with
	// the operator's enrollment of it (placement, materialization
	// revision or declared capability), or an instance it made runs
	// across acp/wire while the enrollment places it in-process. The
	// enrollment decides; a provider that says otherwise is refused
	// before any instance exists, or its instance is destroyed unused.
	CodeDescriptionMismatch checkfu.Code = "description_mismatch"
	// CodeCapabilityUnsupported: the session is placed remote, where a
	// capability is unsupported: its sandbox gets no broker, and an
	// agent's permission request is denied without asking the Approver.
	CodeCapabilityUnsupported checkfu.Code = "capability_unsupported"
	// CodeRegistrationUnreachable: a tool registration's operation on its
	// resource (method, host, port, path) is allowed by no egress rule of
	// its Connection, so every call of it would be refused.
	CodeRegistrationUnreachable checkfu.Code = "registration_unreachable"
	// CodeProcessUnreaped: an agent process was killed and its provider
	// reported no exit within ExitGrace (a provider that ignores Kill);
	// the Runner stops waiting for it.
	CodeProcessUnreaped checkfu.Code = "process_unreaped"
	// CodeAgentRefusalsExceeded: the session's agents spent its refusal
	// budget, MaxRefusals; the Runner closed their ACP clients and
	// denies every later permission request unasked and unrecorded.
	CodeAgentRefusalsExceeded checkfu.Code = "agent_refusals_exceeded"
)

// The codes of a Runner's keys.
const (
	// CodeKeyFileInvalid: a key file is not a private regular file, is
	// malformed, or does not unwrap under the KeyWrapper's key.
	CodeKeyFileInvalid checkfu.Code = "key_file_invalid"
	// CodeStoreKeysMismatch: the credential store holds a record that no
	// key of the KeySource opens, as after a restart with other keys
	// (EphemeralKeys, another key file); New refuses to start rather
	// than fail each call that needs the credential.
	CodeStoreKeysMismatch checkfu.Code = "store_keys_mismatch"
)

// A ResultCode is what the Runner writes in an event's Result: for a
// denial, the step of the session that refused (the event's Code says
// why); for an allowed step, what it did. The values are stable, so a
// query over the log may match them, and written only here.
type ResultCode string

// The results of the Runner's own events.
const (
	// CodeRefused: Open refused the session itself (the event is
	// appended to PlaneSession), or a step with no narrower result.
	CodeRefused ResultCode = "refused"
	// CodeRefusedACP: the agent's ACP handshake failed; the agent is
	// killed.
	CodeRefusedACP ResultCode = "refused_acp"
	// CodeRefusedPlane: the session's plane (its gateway, leases and
	// channel) could not be built for the admitted profile.
	CodeRefusedPlane ResultCode = "refused_plane"
	// CodeRefusedInstance: the provider's instance was refused or could
	// not be made (an instance that disagrees with the enrollment's
	// placement included).
	CodeRefusedInstance ResultCode = "refused_instance"
	// CodeRefusedBroker: the session's broker could not be served or
	// handed to the instance, or a launch found the session still
	// serving an earlier agent.
	CodeRefusedBroker ResultCode = "refused_broker"
	// CodeRefusedProcess: the agent's process could not be started.
	CodeRefusedProcess ResultCode = "refused_process"
	// CodeRefusedPrompt: Agent.Prompt was refused: a turn of the agent
	// is in flight (ACP runs one at a time), or the agent is closed.
	CodeRefusedPrompt ResultCode = "refused_prompt"
	// CodeRefusedPermission: an agent's permission request was denied
	// before the Approver was asked (no capability, no action to bind,
	// no Approver, a remote placement).
	CodeRefusedPermission ResultCode = "refused_permission"
	// CodeWorkspaceReadPermission: an agent's permission request for its
	// own tool (one naming no tool of the profile) was allowed without
	// the Approver: its ACP kind is read, search or think, and each of
	// its at most MaxPermissionLocations locations is lexically inside
	// the session's workspace root.
	CodeWorkspaceReadPermission ResultCode = "workspace_read_permission"
	// CodeRefusedApprover: the Approver failed to answer.
	CodeRefusedApprover ResultCode = "refused_approver"
	// CodeRefusedApproval: the Approver's answer could not be recorded
	// as an approval.
	CodeRefusedApproval ResultCode = "refused_approval"
	// CodeRefusedBudget: the session's agents spent its refusal budget,
	// MaxRefusals.
	CodeRefusedBudget ResultCode = "refused_budget"
	// CodeRefusedACPPermission: the ACP client refused a permission
	// request alone (malformed or over its bounds).
	CodeRefusedACPPermission ResultCode = "refused_acp_permission"
	// CodeAdmitted: Session.Admit admitted the session for a published
	// profile version.
	CodeAdmitted ResultCode = "admitted"
	// CodePublished: Session.Publish published a SandboxProfile version.
	CodePublished ResultCode = "published"
)

// The results of a process_started event: what the comparison of the
// instance's evidence with what the Runner holds can mean
// (adapters.Assurance), recorded whether it passed or not.
const (
	// CodeIsolationChecked: the provider is in-process, and the
	// enforcement clause compared its statement with a Runner-owned fact
	// (adapters.AssuranceIsolationChecked).
	CodeIsolationChecked ResultCode = "isolation_checked"
	// CodeIdentityOnly: the provider sits across a wire, or its
	// placement is unknown; the match is an identity check, never an
	// isolation check (adapters.AssuranceIdentityOnly).
	CodeIdentityOnly ResultCode = "identity_only"
)

// The results of a turn_ended event: the ACP stop reason the agent gave
// (acp.StopReason), or why the turn ended without one.
const (
	// CodeEndTurn: the agent ended its turn (acp.StopEndTurn).
	CodeEndTurn ResultCode = "end_turn"
	// CodeMaxTokens: the model's token limit ended the turn
	// (acp.StopMaxTokens).
	CodeMaxTokens ResultCode = "max_tokens"
	// CodeMaxTurnRequests: the agent's limit of requests in one turn
	// ended it (acp.StopMaxTurnRequests).
	CodeMaxTurnRequests ResultCode = "max_turn_requests"
	// CodeRefusal: the agent refused to go on (acp.StopRefusal).
	CodeRefusal ResultCode = "refusal"
	// CodeCancelled: the turn was cancelled (acp.StopCancelled).
	CodeCancelled ResultCode = "cancelled"
	// CodeFailed: the prompt failed; the event's Code says why.
	CodeFailed ResultCode = "failed"
	// CodeClosed: Agent.Close or Session.Close ended the turn before
	// the agent did.
	CodeClosed ResultCode = "closed"
)

// The results of a process_exited event; an exit with a status is
// exit_<status> (exitResult).
const (
	// CodeKilled: the Runner killed the process (a failed
	// handshake, evidence that does not match, Session.Close) and did not
	// wait for its status.
	CodeKilled ResultCode = "killed"
	// CodeUnreaped: the process was killed and its provider reported
	// no exit within ExitGrace (the refusal's code is
	// CodeProcessUnreaped).
	CodeUnreaped ResultCode = "unreaped"
)

// assuranceResult returns the result of a process_started event whose
// evidence comparison had assurance a. Anything but isolation_checked is
// identity_only: a result never claims more than the comparison meant.
func assuranceResult(a adapters.Assurance) ResultCode {
	if a == adapters.AssuranceIsolationChecked {
		return CodeIsolationChecked
	}
	return CodeIdentityOnly
}

// stopResult returns the result of a turn_ended event for the stop
// reason r; a reason ACP v1 does not define (which the ACP client
// refuses before it gets here) is CodeFailed.
func stopResult(r acp.StopReason) ResultCode {
	switch r {
	case acp.StopEndTurn:
		return CodeEndTurn
	case acp.StopMaxTokens:
		return CodeMaxTokens
	case acp.StopMaxTurnRequests:
		return CodeMaxTurnRequests
	case acp.StopRefusal:
		return CodeRefusal
	case acp.StopCancelled:
		return CodeCancelled
	}
	return CodeFailed
}

// exitResult returns the result of a process_exited event for a process
// that exited with status: exit_<status>, the one result that carries a
// number (the provider's exit status, never text).
func exitResult(status int) ResultCode {
	return ResultCode("exit_" + strconv.Itoa(status))
}
