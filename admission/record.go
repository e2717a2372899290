package admission

import (
	"errors"
	"strings"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/conformance"
	"github.com/checkfu/checkfu/signing"
)

// RecordPayloadType is the DSSE payload type and signing domain of a
// frozen admission record.
const RecordPayloadType = "checkfu.admission-record.v1"

// Provenance is the private declaration provenance of a session: who
// declared the workload's lane, in which role. It is frozen into the
// record and never appears in public session events.
type Provenance struct {
	// Actor is who declared the lane.
	Actor string `json:"actor"`
	// Role is the role they declared it in.
	Role string `json:"role"`
}

// declared reports whether p names who declared the lane: an actor and a
// role, each with some text that is not white space.
func (p Provenance) declared() bool {
	return strings.TrimSpace(p.Actor) != "" && strings.TrimSpace(p.Role) != ""
}

// laneOf returns the lane a session runs in: lane, except that a trusted
// lane nobody declared (missing provenance) is adversarial.
func laneOf(lane Lane, p Provenance) Lane {
	if lane == LaneTrusted && !p.declared() {
		return LaneAdversarial
	}
	return lane
}

// A ProviderOffer is one enrolled provider revision admission may choose,
// with the verified receipt held for it (nil for none).
type ProviderOffer struct {
	// Enrollment is the enrolled provider revision.
	Enrollment *Enrollment
	// Receipt is the verified receipt for it, or nil.
	Receipt *conformance.Receipt
}

// An AdmitRequest is everything [Admit] needs.
type AdmitRequest struct {
	// Deployment names the deployment whose key will sign the record.
	Deployment string
	// Session is the session's id.
	Session string
	// Profile is the published version the session runs.
	Profile *Published
	// Lane is the server-owned trust fact; the zero Lane is adversarial.
	// LaneTrusted without a declared Provenance (actor and role) is
	// missing provenance, so the session is admitted as adversarial.
	Lane Lane
	// Provenance is who declared the lane (private).
	Provenance Provenance
	// Providers are the candidates, in preference order.
	Providers []ProviderOffer
	// Harness names an entry of Harnesses.
	Harness string
	// Harnesses is the harness catalog (nil: DefaultHarnessCatalog).
	Harnesses *HarnessCatalog
	// Now is the admission time (UTC, whole seconds are recorded).
	Now time.Time
}

// AdmissionFacts are the contents of a frozen admission record: who
// admitted the session (Deployment, Session), which published version
// (name, version, digest and hashes), the Lane, the selected exact pair
// with its Placement and Effective capability, the Harness entry, the
// admission time (RFC 3339 UTC) and the private Provenance.
type AdmissionFacts struct {
	Deployment         string                   `json:"deployment"`
	Session            string                   `json:"session"`
	ProfileName        string                   `json:"profile_name"`
	ProfileVersion     int                      `json:"profile_version"`
	ProfileDigest      string                   `json:"profile_digest"`
	NetworkPolicyHash  string                   `json:"network_policy_hash"`
	DerivedImageDigest string                   `json:"derived_image_digest"`
	Lane               Lane                     `json:"lane"`
	Provider           string                   `json:"provider"`
	ProviderRevision   string                   `json:"provider_revision"`
	Placement          Placement                `json:"placement"`
	Effective          RunnerProviderCapability `json:"effective_capability"`
	Harness            HarnessEntry             `json:"harness"`
	AdmittedAt         string                   `json:"admitted_at"`
	Provenance         Provenance               `json:"provenance"`
}

// A Record is a session's complete admission, frozen: profile version and
// digest, lane, selected pair, effective capability and harness. Only
// [Admit] and [LoadRecord] make one, and it has no setter.
type Record struct {
	f AdmissionFacts
}

// Facts returns the record's contents, private provenance included (a
// copy). Use [PublicView] for anything a session event carries.
func (r *Record) Facts() AdmissionFacts {
	f := r.f
	f.Effective = cloneCapability(f.Effective)
	return f
}

// Target returns the selected exact provider revision.
func (r *Record) Target() checkfu.ProviderRevision {
	return checkfu.ProviderRevision{Provider: r.f.Provider, Revision: r.f.ProviderRevision}
}

// Admit admits a session: the harness must launch ([CodeHarnessUnknown],
// [CodeHarnessBlocked]); then the first provider, in order, whose
// candidate passes [CheckEgress] and [CheckLane] on its effective
// capability is selected. When none does, Admit refuses with
// [CodeProviderUnavailable] wrapping the first candidate's refusal. It is
// pure: no provider is called.
func Admit(req AdmitRequest) (*Record, error) {
	harnesses := req.Harnesses
	if harnesses == nil {
		harnesses = DefaultHarnessCatalog()
	}
	h, err := harnesses.Launch(req.Harness)
	if err != nil {
		return nil, err
	}
	if !req.Profile.published() || req.Deployment == "" || req.Session == "" {
		return nil, checkfu.Refuse(CodeProfileInvalid, "admission: admit needs a published profile, a deployment and a session")
	}
	if req.Lane > LaneTrusted {
		return nil, checkfu.Refuse(CodeLaneInvalid, "admission: lane(%d) is not a lane", uint8(req.Lane))
	}
	lane := laneOf(req.Lane, req.Provenance)
	var first *checkfu.Refusal
	for _, o := range req.Providers {
		if !o.Enrollment.enrolled() {
			continue
		}
		c := o.Enrollment.Candidate(o.Receipt)
		err := CheckCapability(req.Profile, o.Enrollment.effective)
		if err == nil {
			err = CheckEgress(req.Profile, c)
		}
		if err == nil {
			err = CheckLane(lane, req.Profile, c, o.Enrollment.effective)
		}
		if err != nil {
			if first == nil {
				errors.As(err, &first)
			}
			continue
		}
		e := o.Enrollment
		return &Record{f: AdmissionFacts{
			Deployment: req.Deployment, Session: req.Session,
			ProfileName: req.Profile.Name(), ProfileVersion: req.Profile.Version(), ProfileDigest: req.Profile.ProfileDigest(),
			NetworkPolicyHash: req.Profile.NetworkPolicyHash(), DerivedImageDigest: req.Profile.DerivedImageDigest(),
			Lane: lane, Provider: e.target.Provider, ProviderRevision: e.target.Revision, Placement: e.placement,
			Effective: e.Effective(), Harness: h, AdmittedAt: req.Now.UTC().Truncate(time.Second).Format(time.RFC3339),
			Provenance: req.Provenance,
		}}, nil
	}
	return nil, &checkfu.Refusal{Code: CodeProviderUnavailable, Message: "admission: no enrolled provider can run session " + checkfu.Quote(req.Session) + " in the " + lane.String() + " lane", Err: first}
}

// SignRecord freezes r: it returns the DSSE envelope of r's canonical
// encoding signed by the deployment key under [RecordPayloadType].
func SignRecord(deploymentKey *signing.Signer, r *Record) ([]byte, error) {
	b, err := canonicalJSON(r.f)
	if err != nil {
		return nil, checkfu.Refuse(CodeRecordUnauthentic, "admission: record does not encode")
	}
	return deploymentKey.SignPayload(RecordPayloadType, b)
}

// LoadRecord verifies the frozen admission record of session for
// deployment against keys, the deployment keys the Runner trusts, each
// named by its deployment. It refuses a record that does not verify
// (altered, unsigned, signed by a key not in keys) or is not canonical
// with [CodeRecordUnauthentic], wrapping signing's refusal; one
// signed by, or naming, another deployment with [CodeDeploymentMismatch];
// and a validly signed record of another session (a replayed record)
// with [CodeSessionMismatch].
func LoadRecord(envelope []byte, deployment, session string, keys *signing.AttesterSet) (*Record, error) {
	signer, payload, err := keys.VerifyPayload(envelope, RecordPayloadType)
	if err != nil {
		var r *checkfu.Refusal
		if !errors.As(err, &r) {
			r = checkfu.Refuse(CodeRecordUnauthentic, "admission: %v", err)
		}
		return nil, &checkfu.Refusal{Code: CodeRecordUnauthentic, Message: "admission: admission record does not verify", Err: r}
	}
	var f AdmissionFacts
	if err := strictUnmarshal(payload, &f, CodeRecordUnauthentic, "admission record"); err != nil {
		return nil, err
	}
	if again, err := canonicalJSON(f); err != nil || string(again) != string(payload) {
		return nil, checkfu.Refuse(CodeRecordUnauthentic, "admission: admission record is not canonical")
	}
	if signer.Name != deployment || f.Deployment != deployment {
		return nil, checkfu.Refuse(CodeDeploymentMismatch, "admission: record of deployment %s signed by the key of %s, loaded by %s", checkfu.Quote(f.Deployment), checkfu.Quote(signer.Name), checkfu.Quote(deployment))
	}
	if session == "" || f.Session != session {
		return nil, checkfu.Refuse(CodeSessionMismatch, "admission: record of session %s loaded for session %s", checkfu.Quote(f.Session), checkfu.Quote(session))
	}
	return &Record{f: f}, nil
}

// A PublicAdmission is what public session events may carry of an
// admission: the fields of [AdmissionFacts] that are not private, and
// no declaration actor or role.
type PublicAdmission struct {
	Session            string       `json:"session"`
	ProfileName        string       `json:"profile_name"`
	ProfileVersion     int          `json:"profile_version"`
	ProfileDigest      string       `json:"profile_digest"`
	NetworkPolicyHash  string       `json:"network_policy_hash"`
	DerivedImageDigest string       `json:"derived_image_digest"`
	Lane               Lane         `json:"lane"`
	Provider           string       `json:"provider"`
	ProviderRevision   string       `json:"provider_revision"`
	Harness            HarnessEntry `json:"harness"`
	AdmittedAt         string       `json:"admitted_at"`
}

// PublicView returns the public form of r: no declaration actor, no role.
func PublicView(r *Record) PublicAdmission {
	f := r.f
	return PublicAdmission{Session: f.Session, ProfileName: f.ProfileName, ProfileVersion: f.ProfileVersion,
		ProfileDigest: f.ProfileDigest, NetworkPolicyHash: f.NetworkPolicyHash, DerivedImageDigest: f.DerivedImageDigest,
		Lane: f.Lane, Provider: f.Provider, ProviderRevision: f.ProviderRevision, Harness: f.Harness, AdmittedAt: f.AdmittedAt}
}

// Place re-checks, at placement, that the session of r may run on e: e
// must be the exact provider revision r selected and v the exact profile
// version r froze ([CodePlacementMismatch]), and the egress requirement
// and the lane's rule must hold against e's own effective capability
// now ([CheckEgress], [CheckLane]), whatever the record says. So a
// provider that cannot meet the adversarial lane never receives an
// adversarial session.
func Place(r *Record, v *Published, e *Enrollment, receipt *conformance.Receipt) error {
	if !e.enrolled() || e.target != r.Target() {
		return checkfu.Refuse(CodePlacementMismatch, "admission: session %s was admitted for %s, not this provider", checkfu.Quote(r.f.Session), checkfu.Quote(r.Target().String()))
	}
	if !v.published() || v.ProfileDigest() != r.f.ProfileDigest || v.NetworkPolicyHash() != r.f.NetworkPolicyHash || v.Version() != r.f.ProfileVersion {
		return checkfu.Refuse(CodePlacementMismatch, "admission: session %s was admitted for another profile version", checkfu.Quote(r.f.Session))
	}
	if err := CheckCapability(v, e.effective); err != nil {
		return err
	}
	c := e.Candidate(receipt)
	if err := CheckEgress(v, c); err != nil {
		return err
	}
	return CheckLane(laneOf(r.f.Lane, r.f.Provenance), v, c, e.effective)
}
