package jail

import "github.com/checkfu/checkfu"

// The refusal codes of the jail provider. A second open while a process
// lives is refused with acp/wire's process_already_open; a spec outside
// the provider's declaration with adapters.CodeSpecUnsupported; a caller
// misconfiguration with checkfu.CodeConfigInvalid.
const (
	// CodeKernelUnsupported: the kernel lacks a mechanism the jail
	// cannot run without (user namespaces, Landlock, seccomp). The
	// message names every one missing; nothing degrades.
	CodeKernelUnsupported checkfu.Code = "kernel_unsupported"
	// CodeJailStartFailed: the init stage could not build the jail (a
	// mount, a lock or the exec of the workload failed); nothing of the
	// workload ran.
	CodeJailStartFailed checkfu.Code = "jail_start_failed"
	// CodeReadBackMismatch: what the kernel reports about a started
	// jail (namespaces, capabilities, no_new_privs, seccomp, mounts,
	// cgroups) differs from what the provider applies; the process is
	// killed before the workload runs.
	CodeReadBackMismatch checkfu.Code = "read_back_mismatch"
)
