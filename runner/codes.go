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
	// CodeProcessUnreaped: an agent process was killed and its provider
	// reported no exit within ExitGrace (a provider that ignores Kill);
	// the Runner stops waiting for it.
	CodeProcessUnreaped checkfu.Code = "process_unreaped"
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
