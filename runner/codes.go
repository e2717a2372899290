package runner

import "github.com/checkfu/checkfu"

// The codes of the refusals this package adds; every other refusal on
// the Runner's path keeps the code of the package that refused
// (admission, adapters, acp, gateway, custody, egress). Values are
// object_condition and unique across the module.
const (
	// CodePermissionUnbound: an agent's session/request_permission does
	// not name an external_effect tool of the session's profile with
	// arguments that tool accepts, so there is no action to bind an
	// approval to. It is denied without asking the Approver.
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
