package adapters

import (
	"context"
	"io"
	"strings"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/admission"
	"github.com/checkfu/checkfu/conformance"
	"github.com/checkfu/checkfu/egress"
)

// A Provider is what an adapter author implements: a static description
// of one exact provider revision, and a way to create instances. It is
// the whole contract; everything else is a method of [Instance] or
// [Process], or an optional member declared in [Members].
type Provider interface {
	// Describe returns the provider's declarations. It is called often
	// and must return the same value every time.
	Describe() Description
	// Create makes a new instance for spec. spec.ID is chosen by the
	// Runner and is the identity the instance's evidence must carry.
	Create(ctx context.Context, spec InstanceSpec) (Instance, error)
}

// A Description is everything a provider declares about itself. It is
// a value, not a conversation: nothing here is discovered by trial.
type Description struct {
	// Identity is the exact (provider, provider_revision) pair grades,
	// receipts and enrollments attach to.
	Identity checkfu.ProviderRevision
	// MaterializationRevision names the provider's materialization code,
	// as its signed materialization statement does.
	MaterializationRevision string
	// Placement says whether the provider is the in-process Runner
	// adapter or sits across a wire. It caps the authority vocabulary
	// ([admission.CheckPlacement]) and decides the assurance of
	// [MatchEvidence].
	Placement admission.Placement
	// Capability is what the provider revision can do, on every axis of
	// admission. Capability.EgressCertification is the provider's
	// advertised egress grade; only [Grade] turns it into one the
	// Runner may use.
	Capability admission.RunnerProviderCapability
	// Members declares the optional members. Snapshots and ListDir must
	// equal the capability's axes of the same names.
	Members Members
	// Gaps declares where the provider's processes fall short of the
	// [Process] contract because the vendor's API cannot express it. The
	// zero Gaps is the full contract. A gap is declared, never faked:
	// package adaptertest tests everything not declared missing, and
	// checks that what is declared is so where it can see it.
	Gaps Gaps
}

// Gaps are the stdio and kill properties of the [Process] contract a
// provider's processes lack. Each field true is one property missing;
// the zero value declares none. NoStdin and StdinNoEOF contradict each
// other ([Check] refuses both). A provider with NoStdin or StdinNoEOF
// cannot carry an ACP agent ([CheckACP]).
type Gaps struct {
	// NoStdin: processes take no input. A Stdin write is refused and the
	// process reads end of input at once. Consequence: nothing can be
	// fed to a process; no ACP agent (it reads its requests from stdin).
	NoStdin bool
	// StdinNoEOF: stdin carries input but cannot end: Close does not
	// reach the process as end of input (it may be refused), so a
	// process reading to end of input never finishes and must be
	// killed. Consequence: no ACP agent (it is shut down by closing its
	// stdin); a process needing EOF cannot be driven.
	StdinNoEOF bool
	// LineFramed: stdin and output are carried a line at a time: input
	// reaches the process when its newline is written (a partial last
	// line may be refused), and output is delivered a whole line at a
	// time, so a partial line arrives only with its newline or at the
	// end of the stream, where it may gain a newline. Consequence: a
	// prompt without a newline is not seen while the process waits.
	LineFramed bool
	// TextOnly: stdin and output carry text, not bytes: bytes that are
	// not UTF-8, and NUL, may be refused, altered or lost. Consequence:
	// binary data cannot cross the pipes exactly.
	TextOnly bool
	// KillLeaderOnly: Kill signals the process, not the children it
	// started: they live until the instance is destroyed, and one that
	// holds stdout open keeps the stream (and Wait) from ending.
	// Consequence: to stop a process tree, destroy the instance.
	KillLeaderOnly bool
}

// Members declares the optional members of the contract. A member not
// declared is refused with [CodeMemberUndeclared] when called through
// [ListDir], [Snapshot], [ReadFile] or [WriteFile]; the zero Members
// declares none.
type Members struct {
	// Snapshots: the instance implements [Snapshotter].
	Snapshots bool
	// ListDir: the instance implements [DirLister].
	ListDir bool
	// FileTransfer: the instance implements [FileTransferer].
	FileTransfer bool
}

// An InstanceSpec is what the Runner asks of a new instance. Every field
// but ID is state the Runner holds and [MatchEvidence] binds the
// instance's evidence to.
type InstanceSpec struct {
	// ID names the instance; chosen by the Runner. Required.
	ID string
	// RootImage is the image digest to run; empty for a provider with no
	// image (the host's own filesystem).
	RootImage string
	// Platform is the OS/architecture pair, one of the capability's
	// platforms ("linux/amd64").
	Platform string
	// ProfileDigest is the digest of the SandboxProfile version the
	// session was admitted under.
	ProfileDigest string
	// NetworkMode is the network policy member to apply ("none",
	// "allowlist", "unrestricted"), one of the capability's network
	// modes.
	NetworkMode string
	// AllowedHosts are the exact hosts of the allowlist the Runner
	// admitted (the host and port of each of admission.Published.Hosts),
	// canonical, sorted by host then port, and distinct. Required when
	// NetworkMode is "allowlist" and empty otherwise ([CheckSpec]).
	// [MatchEvidence] does not compare them: ProfileDigest binds the
	// published version, and so its hosts.
	AllowedHosts []egress.HostPort
	// Limits are the resource limits to apply; a zero field means no
	// limit asked.
	Limits Limits
}

// Limits are resource limits. A zero field means no limit.
type Limits struct {
	// MemoryBytes bounds memory, swap included.
	MemoryBytes int64 `json:"memory_bytes,omitempty"`
	// Pids bounds the number of processes.
	Pids int64 `json:"pids,omitempty"`
	// NanoCPUs bounds CPU time, in billionths of a CPU.
	NanoCPUs int64 `json:"nano_cpus,omitempty"`
}

// An Instance is one sandbox. It runs at most one live process at a
// time and keeps that reservation itself ([Slot] is a ready-made one):
// OpenProcess while a process has not been reaped is refused with
// acp/wire's process_already_open.
type Instance interface {
	// ID returns the spec's ID.
	ID() string
	// OpenProcess starts one process. After Destroy it is refused with
	// [CodeInstanceDestroyed].
	OpenProcess(ctx context.Context, spec ProcessSpec) (Process, error)
	// Destroy kills any live process and releases everything the
	// instance holds. It is idempotent.
	Destroy(ctx context.Context) error
}

// A ProcessSpec is one process to open.
type ProcessSpec struct {
	// Argv is the command and its arguments. Required.
	Argv []string
	// Env is added to the instance's environment ("K=V").
	Env []string
	// Dir is the working directory; empty means the instance's default.
	Dir string
}

// A Process is one live process, with the semantics of an OS process and
// its three pipes, whether it runs in-process or across acp/wire:
// stdout and stderr are independent (no ordering between them; read
// both, or a full one may stall the other), chunk boundaries mean
// nothing, closing Stdin is end of input, and the reservation of its
// instance ends only when Wait has returned.
type Process interface {
	// Stdin returns the process's standard input. Close ends it.
	Stdin() io.WriteCloser
	// Stdout returns the process's standard output; it ends with io.EOF.
	Stdout() io.Reader
	// Stderr returns the process's standard error, best effort; it ends
	// with io.EOF.
	Stderr() io.Reader
	// Wait waits for the process to be reaped and returns its exit
	// status: the exit code, or 128+signal. Read Stdout and Stderr to
	// EOF as well, as with OS pipes: an implementation may not return
	// from Wait while output it must deliver is unread (over acp/wire,
	// Wait returns once all stdout is delivered).
	Wait() (int, error)
	// Kill terminates the process. It is idempotent and does not wait.
	Kill() error
	// Evidence returns what the provider reports about this process's
	// sandbox, for [MatchEvidence].
	Evidence() Evidence
}

// Check refuses, with [CodeProviderInvalid], a Description the Runner
// cannot admit: an empty provider, revision or materialization revision;
// a capability outside its vocabulary; runner_enforced claimed by a
// provider that is not in-process; Members that disagree with the
// capability's snapshots or list_dir axis; gaps that contradict each
// other (NoStdin with StdinNoEOF). A description with consistent gaps is
// accepted: a gap is an honest declaration, not a defect.
func Check(d Description) error {
	if d.Identity.Provider == "" || d.Identity.Revision == "" || d.MaterializationRevision == "" {
		return checkfu.Refuse(CodeProviderInvalid, "adapters: a provider needs a provider name, a revision and a materialization revision")
	}
	if err := d.Capability.Check(); err != nil {
		return &checkfu.Refusal{Code: CodeProviderInvalid, Message: "adapters: " + d.Identity.String() + ": capability refused", Err: err}
	}
	if err := admission.CheckPlacement(d.Placement, d.Capability); err != nil {
		return &checkfu.Refusal{Code: CodeProviderInvalid, Message: "adapters: " + d.Identity.String() + ": placement refused", Err: err}
	}
	if d.Members.Snapshots != d.Capability.Snapshots || d.Members.ListDir != d.Capability.ListDir {
		return checkfu.Refuse(CodeProviderInvalid, "adapters: %s: members (snapshots %t, list_dir %t) disagree with its capability (snapshots %t, list_dir %t)",
			d.Identity, d.Members.Snapshots, d.Members.ListDir, d.Capability.Snapshots, d.Capability.ListDir)
	}
	if d.Gaps.NoStdin && d.Gaps.StdinNoEOF {
		return checkfu.Refuse(CodeProviderInvalid, "adapters: %s: gaps NoStdin and StdinNoEOF contradict each other (no stdin has no end to lack)", d.Identity)
	}
	return nil
}

// CheckSpec refuses, with checkfu.CodeConfigInvalid, an instance spec
// whose network fields contradict each other: NetworkMode "allowlist"
// without AllowedHosts, AllowedHosts with any other mode, and a host that
// is not canonical (as egress.ParseHostPort gives it back), not sorted by
// host then port, or repeated. A provider calls it before anything else
// in Create, so a spec the Runner built wrong reaches no engine. It is
// pure.
func CheckSpec(spec InstanceSpec) error {
	if spec.NetworkMode == "allowlist" && len(spec.AllowedHosts) == 0 {
		return checkfu.Refuse(checkfu.CodeConfigInvalid, "adapters: instance %s asks for network mode allowlist without its hosts", checkfu.Quote(spec.ID))
	}
	if spec.NetworkMode != "allowlist" && len(spec.AllowedHosts) > 0 {
		return checkfu.Refuse(checkfu.CodeConfigInvalid, "adapters: instance %s names %d allowed hosts for network mode %s; hosts go only with allowlist",
			checkfu.Quote(spec.ID), len(spec.AllowedHosts), checkfu.Quote(spec.NetworkMode))
	}
	for i, h := range spec.AllowedHosts {
		if c, err := egress.ParseHostPort(h.String()); err != nil || c != h {
			return checkfu.Refuse(checkfu.CodeConfigInvalid, "adapters: instance %s: allowed host %s is not a canonical host:port", checkfu.Quote(spec.ID), checkfu.Quote(h.String()))
		}
		if i > 0 && compareHostPort(spec.AllowedHosts[i-1], h) >= 0 {
			return checkfu.Refuse(checkfu.CodeConfigInvalid, "adapters: instance %s: allowed hosts are not sorted and distinct at %s", checkfu.Quote(spec.ID), checkfu.Quote(h.String()))
		}
	}
	return nil
}

// compareHostPort orders hosts as admission publishes them: by host,
// then by port.
func compareHostPort(a, b egress.HostPort) int {
	if a.Host != b.Host {
		return strings.Compare(a.Host, b.Host)
	}
	return int(a.Port) - int(b.Port)
}

// CheckACP refuses, with [CodeStdioInsufficient], a provider that cannot
// carry an ACP agent: one whose processes have no stdin (the agent reads
// its requests there) or whose stdin cannot end (the agent is shut down
// by closing it). It is pure: it reads only d.Gaps. LineFramed and
// TextOnly do not refuse: ACP is newline-delimited UTF-8 JSON.
func CheckACP(d Description) error {
	switch {
	case d.Gaps.NoStdin:
		return checkfu.Refuse(CodeStdioInsufficient, "adapters: %s cannot carry an ACP agent: its processes take no stdin", d.Identity)
	case d.Gaps.StdinNoEOF:
		return checkfu.Refuse(CodeStdioInsufficient, "adapters: %s cannot carry an ACP agent: its processes' stdin cannot be closed", d.Identity)
	}
	return nil
}

// Grade returns the egress grade the Runner may use for the provider
// described by d: its advertised grade (d.Capability.EgressCertification)
// capped by [conformance.EffectiveGrade] for its exact identity and the
// receipt the host holds (nil for none). A provider's own advertisement
// never reaches security_boundary.
func Grade(d Description, receipt *conformance.Receipt) checkfu.Grade {
	return conformance.EffectiveGrade(d.Identity, d.Capability.EgressCertification, receipt)
}
