package admission

import (
	"errors"
	"slices"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/conformance"
	"github.com/checkfu/checkfu/signing"
)

// MaterializationPayloadType is the DSSE payload type and signing domain
// of a materialization statement.
const MaterializationPayloadType = "checkfu.materialization-statement.v1"

// capabilityDigestDomain separates capability digests from every other.
const capabilityDigestDomain = "checkfu.runner-provider-capability.v1\n"

// A MaterializationStatement is what a provider signs when it enrolls:
// this exact provider revision, at this placement, materializes sandboxes
// with this declared capability. Signing makes the claim attributable;
// the enrollment ceiling bounds it; neither makes it true.
type MaterializationStatement struct {
	// Provider and ProviderRevision are the exact pair enrolling.
	Provider         string `json:"provider"`
	ProviderRevision string `json:"provider_revision"`
	// MaterializationRevision names the provider's materialization code.
	MaterializationRevision string `json:"materialization_revision"`
	// Placement is where the provider runs.
	Placement Placement `json:"placement"`
	// CapabilityDigest is [CapabilityDigest] of the declared capability.
	CapabilityDigest string `json:"capability_digest"`
	// IssuedAt is RFC 3339 UTC, whole seconds.
	IssuedAt string `json:"issued_at"`
}

// CapabilityDigest returns "sha256:" and the hex SHA-256 of the domain
// "checkfu.runner-provider-capability.v1\n" and the canonical JSON of c.
func CapabilityDigest(c RunnerProviderCapability) (string, error) {
	if err := c.Check(); err != nil {
		return "", err
	}
	b, err := canonicalJSON(c)
	if err != nil {
		return "", checkfu.Refuse(CodeCapabilityInvalid, "admission: capability does not encode")
	}
	return digestOf(capabilityDigestDomain, b), nil
}

func (s MaterializationStatement) check() error {
	if s.Provider == "" || s.ProviderRevision == "" || s.MaterializationRevision == "" || max(len(s.Provider), len(s.ProviderRevision), len(s.MaterializationRevision)) > 255 {
		return checkfu.Refuse(CodeStatementInvalid, "admission: statement needs provider, provider_revision and materialization_revision of at most 255 bytes each")
	}
	if s.Placement != PlacementInProcess && s.Placement != PlacementRemote {
		return checkfu.Refuse(CodeStatementInvalid, "admission: statement placement %s is not in_process or remote", checkfu.Quote(string(s.Placement)))
	}
	if t, err := time.Parse(time.RFC3339, s.IssuedAt); err != nil || t.UTC().Format(time.RFC3339) != s.IssuedAt {
		return checkfu.Refuse(CodeStatementInvalid, "admission: statement issued_at %s is not RFC 3339 UTC whole seconds", checkfu.Quote(s.IssuedAt))
	}
	return nil
}

// SignMaterialization signs s with the provider's key under
// [MaterializationPayloadType] and returns the DSSE envelope.
func SignMaterialization(signer *signing.Signer, s MaterializationStatement) ([]byte, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	b, err := canonicalJSON(s)
	if err != nil {
		return nil, checkfu.Refuse(CodeStatementInvalid, "admission: statement does not encode")
	}
	return signer.SignPayload(MaterializationPayloadType, b)
}

// An EnrollmentRequest is everything [Enroll] needs.
type EnrollmentRequest struct {
	// Target is the exact provider revision enrolling.
	Target checkfu.ProviderRevision
	// Placement is where it runs; it caps the authority vocabulary.
	Placement Placement
	// Declared is what the provider says it can do.
	Declared RunnerProviderCapability
	// Ceiling is the operator-issued enrollment ceiling.
	Ceiling RunnerProviderCapability
	// Statement is the provider's signed materialization statement (a
	// DSSE envelope).
	Statement []byte
	// Signers holds the operator's enrolled provider keys; the key that
	// signed Statement must be named exactly Target.Provider.
	Signers *signing.AttesterSet
}

// An Enrollment is an admitted provider revision: its effective
// capability, bound to the signed statement that declared it. Only
// [Enroll] makes one; nothing sets its capability afterwards.
type Enrollment struct {
	target    checkfu.ProviderRevision
	placement Placement
	effective RunnerProviderCapability
	statement MaterializationStatement
	signer    string
}

// Enroll admits a provider revision. It refuses, in this order: a
// declared capability or ceiling outside its vocabulary
// ([CodeCapabilityInvalid]); runner_enforced claimed by a provider that
// is not in-process ([CodeAuthorityExceedsPlacement]); a statement that
// is unsigned, malformed, not canonical or signed by a key outside
// Signers ([CodeStatementInvalid], wrapping signing's refusal); a
// statement for another revision, placement or capability, or signed by
// the key of another provider ([CodeStatementMismatch]).
//
// The effective capability is [Intersect](Declared, Ceiling) on every
// axis; nothing outside it exists for the Runner.
func Enroll(req EnrollmentRequest) (*Enrollment, error) {
	if err := req.Declared.Check(); err != nil {
		return nil, err
	}
	if err := req.Ceiling.Check(); err != nil {
		return nil, err
	}
	if err := CheckPlacement(req.Placement, req.Declared); err != nil {
		return nil, err
	}
	signer, payload, err := req.Signers.VerifyPayload(req.Statement, MaterializationPayloadType)
	if err != nil {
		var r *checkfu.Refusal
		if !errors.As(err, &r) {
			r = checkfu.Refuse(CodeStatementInvalid, "admission: %v", err)
		}
		return nil, &checkfu.Refusal{Code: CodeStatementInvalid, Message: "admission: materialization statement of " + checkfu.Quote(req.Target.String()) + " does not verify", Err: r}
	}
	var st MaterializationStatement
	if err := strictUnmarshal(payload, &st, CodeStatementInvalid, "materialization statement"); err != nil {
		return nil, err
	}
	if err := st.check(); err != nil {
		return nil, err
	}
	if again, _ := canonicalJSON(st); string(again) != string(payload) {
		return nil, checkfu.Refuse(CodeStatementInvalid, "admission: materialization statement is not canonical")
	}
	want, err := CapabilityDigest(req.Declared)
	if err != nil {
		return nil, err
	}
	switch {
	case signer.Name != req.Target.Provider:
		return nil, checkfu.Refuse(CodeStatementMismatch, "admission: statement for %s is signed by the key enrolled for %s", checkfu.Quote(req.Target.Provider), checkfu.Quote(signer.Name))
	case st.Provider != req.Target.Provider || st.ProviderRevision != req.Target.Revision:
		return nil, checkfu.Refuse(CodeStatementMismatch, "admission: statement is for %s, not %s", checkfu.Quote(st.Provider+"@"+st.ProviderRevision), checkfu.Quote(req.Target.String()))
	case st.Placement != req.Placement:
		return nil, checkfu.Refuse(CodeStatementMismatch, "admission: statement says placement %s, enrollment %s", st.Placement, req.Placement)
	case st.CapabilityDigest != want:
		return nil, checkfu.Refuse(CodeStatementMismatch, "admission: statement binds capability %s, but the declared capability is %s", checkfu.Quote(st.CapabilityDigest), want)
	}
	return &Enrollment{target: req.Target, placement: req.Placement, effective: cloneCapability(Intersect(req.Declared, req.Ceiling)), statement: st, signer: signer.Name}, nil
}

func cloneCapability(c RunnerProviderCapability) RunnerProviderCapability {
	out := c
	os, cs := out.sets(), c.sets()
	for i := range os {
		*os[i].v = slices.Clone(*cs[i].v)
	}
	return out
}

// enrolled reports whether e was made by Enroll: the zero Enrollment
// names no provider and verified no statement.
func (e *Enrollment) enrolled() bool {
	return e != nil && e.signer != "" && e.target.Provider != "" && e.target.Revision != ""
}

// Target returns the exact provider revision enrolled.
func (e *Enrollment) Target() checkfu.ProviderRevision { return e.target }

// Placement returns where the provider runs.
func (e *Enrollment) Placement() Placement { return e.placement }

// Effective returns the effective capability (a copy): declared
// intersected with the ceiling.
func (e *Enrollment) Effective() RunnerProviderCapability { return cloneCapability(e.effective) }

// Statement returns the verified materialization statement.
func (e *Enrollment) Statement() MaterializationStatement { return e.statement }

// Candidate returns the selection candidate of e: its exact revision and
// the effective (ceilinged) advertised grade, with receipt (nil for none)
// as the only evidence that can lift it.
func (e *Enrollment) Candidate(receipt *conformance.Receipt) Candidate {
	return Candidate{Target: e.target, Advertised: e.effective.EgressCertification,
		NetworkPolicyAuthority: e.effective.Enforcement[AxisNetworkPolicy], Receipt: receipt}
}

// CheckCapability refuses, with [CodeCapabilityUnmet], running v on a
// provider revision whose effective capability eff cannot: v's network
// policy member must be one of eff's network_modes, and every ecosystem v
// declares one of eff's package_managers. Only the intersection with the
// ceiling counts, so a ceiling that narrows either axis binds admission
// and placement.
func CheckCapability(v *Published, eff RunnerProviderCapability) error {
	if !v.published() {
		return notPublished()
	}
	if mode := string(v.PolicyType()); !slices.Contains(eff.NetworkModes, mode) {
		return checkfu.Refuse(CodeCapabilityUnmet, "admission: %s needs network mode %s, which the effective capability lacks", checkfu.Quote(v.Name()), mode)
	}
	for _, eco := range v.profile.Ecosystems {
		if !slices.Contains(eff.PackageManagers, eco) {
			return checkfu.Refuse(CodeCapabilityUnmet, "admission: %s declares ecosystem %s, which the effective capability cannot materialize", checkfu.Quote(v.Name()), eco)
		}
	}
	return nil
}

// A Skip is a visible, recorded decision not to do something, for the
// Runner to log as an event. It is a value, never a silent branch.
type Skip struct {
	// Event is the event kind to record.
	Event string
	// Code is the stable reason.
	Code checkfu.Code
	// Provider is the exact provider revision that caused it.
	Provider checkfu.ProviderRevision
	// Reason is for people.
	Reason string
}

// MemoryWriteback says whether memory writeback runs for a session on e
// that mounts memory. When the effective capability admits memory mounts
// but not list_dir, writeback is skipped, and the Skip to record is
// returned with ok false. Without memory mounts there is nothing to write
// back: ok is true.
func (e *Enrollment) MemoryWriteback() (skip Skip, ok bool) {
	if !slices.Contains(e.effective.MountKinds, "memory") || e.effective.ListDir {
		return Skip{}, true
	}
	return Skip{Event: "memory_writeback_skipped", Code: CodeMemoryWritebackSkipped, Provider: e.target,
		Reason: "the provider is admitted for memory mounts but declines list_dir, which memory writeback needs"}, false
}
