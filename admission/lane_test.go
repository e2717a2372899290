package admission_test

import (
	"strings"
	"testing"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/admission"
	"github.com/checkfu/checkfu/admission/admissiontest"
)

func TestParseLane(t *testing.T) {
	for in, want := range map[string]admission.Lane{"": admission.LaneAdversarial, "adversarial": admission.LaneAdversarial, "trusted": admission.LaneTrusted} {
		if got, err := admission.ParseLane(in); err != nil || got != want {
			t.Errorf("ParseLane(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	_, err := admission.ParseLane("Trusted")
	wantCode(t, "Trusted", err, admission.CodeLaneInvalid)
	var zero admission.Lane
	if zero != admission.LaneAdversarial {
		t.Errorf("the zero lane is %v, want adversarial", zero)
	}
}

func TestCheckLane(t *testing.T) {
	full := admissiontest.Capability(admission.ProviderAttested, checkfu.SecurityBoundary)
	gap := full
	gap.Enforcement[admission.AxisSyscalls] = admission.Unenforced
	receipt, _ := admissiontest.Receipt(t, pairB)
	certified := admission.Candidate{Target: pairB, Advertised: checkfu.SecurityBoundary, Receipt: receipt}
	advisory := admission.Candidate{Target: pairB, Advertised: checkfu.AdvisoryFilter}
	goByHand := profileDoc(`["go"]`, `{"type": "allowlist", "allowed_hosts": ["proxy.golang.org", "sum.golang.org"], "allow_package_managers": true}`)
	tests := []struct {
		name    string
		lane    admission.Lane
		profile string
		c       admission.Candidate
		eff     admission.RunnerProviderCapability
		code    checkfu.Code // "" for admitted
	}{
		{"adversarial, none, full", admission.LaneAdversarial, profileDoc("", `{"type": "none"}`), advisory, full, ""},
		{"adversarial, certified allowlist", admission.LaneAdversarial, profileDoc("", allowNoReq), certified, full, ""},
		{"adversarial, advisory allowlist", admission.LaneAdversarial, profileDoc("", allowNoReq), advisory, full, admission.CodeLaneRequirementUnmet},
		{"adversarial, unrestricted", admission.LaneAdversarial, profileDoc("", `{"type": "unrestricted"}`), certified, full, admission.CodeLaneRequirementUnmet},
		{"adversarial, an axis unenforced", admission.LaneAdversarial, profileDoc("", `{"type": "none"}`), advisory, gap, admission.CodeLaneRequirementUnmet},
		{"adversarial, relay by preset only", admission.LaneAdversarial, string(readFixture(t, "profiles/go.json")), certified, full, admission.CodeRelayNotNamed},
		{"adversarial, relay named by hand", admission.LaneAdversarial, goByHand, certified, full, ""},
		{"trusted, anything", admission.LaneTrusted, profileDoc("", `{"type": "unrestricted"}`), advisory, gap, ""},
		{"trusted, hosts by hand", admission.LaneTrusted, profileDoc("", allowNoReq), advisory, gap, ""},
		{"trusted, package registries", admission.LaneTrusted, string(readFixture(t, "profiles/python.json")), certified, full, admission.CodeTrustedLaneTainted},
		{"trusted, a registry also named by hand", admission.LaneTrusted, goByHand, certified, full, admission.CodeTrustedLaneTainted},
	}
	for _, tt := range tests {
		err := admission.CheckLane(tt.lane, mustPublish(t, nil, tt.profile), tt.c, tt.eff)
		if tt.code == "" {
			if err != nil {
				t.Errorf("%s: %v", tt.name, err)
			}
			continue
		}
		wantCode(t, tt.name, err, tt.code)
	}
}

func TestCheckAcquire(t *testing.T) {
	for _, a := range []admission.Acquisition{admission.AcquireThirdPartyExecutable, admission.AcquireThirdPartySteering} {
		wantCode(t, "trusted third-party", admission.CheckAcquire(admission.LaneTrusted, a), admission.CodeTrustedLaneTainted)
		if err := admission.CheckAcquire(admission.LaneAdversarial, a); err != nil {
			t.Errorf("adversarial acquiring %v: %v", a, err)
		}
	}
	if err := admission.CheckAcquire(admission.LaneTrusted, admission.AcquireFirstParty); err != nil {
		t.Errorf("trusted first-party: %v", err)
	}
}

// TestTrustedLaneRefusesPackageRegistries: a trusted session may not
// acquire third-party executable content (D243), and a public package
// registry is that: a profile whose allow_package_managers grants one is
// refused at admission and at placement, the refusal naming the lane,
// the host and the grant.
func TestTrustedLaneRefusesPackageRegistries(t *testing.T) {
	full := admissiontest.Capability(admission.ProviderAttested, checkfu.AdvisoryFilter)
	e := admissiontest.Enroll(t, pairB, admission.PlacementRemote, full, full)
	registries := mustPublish(t, nil, profileDoc(`["npm"]`, `{"type": "allowlist", "allowed_hosts": ["api.example.com"], "allow_package_managers": true}`))
	req := admission.AdmitRequest{Deployment: "d1", Session: "s1", Profile: registries, Lane: admission.LaneTrusted,
		Provenance: admission.Provenance{Actor: "alice", Role: "admin"},
		Providers:  []admission.ProviderOffer{{Enrollment: e}}, Harness: "acp", Now: time.Unix(1764547200, 0)}
	_, err := admission.Admit(req)
	wantCode(t, "admission", err, admission.CodeTrustedLaneTainted)
	for _, want := range []string{"trusted lane", `"registry.npmjs.org:443"`, "allow_package_managers"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Admit = %v; want it to name %s", err, want)
		}
	}

	// The same hosts by hand are the deployment's own grant: admitted.
	// Placement then meets a version that grants the registry.
	byHand := mustPublish(t, nil, profileDoc(`["npm"]`, `{"type": "allowlist", "allowed_hosts": ["api.example.com", "registry.npmjs.org"]}`))
	req.Profile = byHand
	rec, err := admission.Admit(req)
	if err != nil {
		t.Fatalf("hosts by hand: %v", err)
	}
	if err := admission.Place(rec, byHand, e, nil); err != nil {
		t.Fatalf("placement of the admitted version: %v", err)
	}
	wantCode(t, "placement", admission.CheckLane(rec.Facts().Lane, registries, e.Candidate(nil), e.Effective()), admission.CodeTrustedLaneTainted)

	// The adversarial lane may acquire it (its own rules still apply).
	for _, h := range registries.Hosts() {
		if err := admission.CheckGrant(admission.LaneAdversarial, h); err != nil {
			t.Errorf("adversarial lane, %s: %v", h, err)
		}
	}
}

// TestPlacementRechecksLane: a validly signed record says the session is
// adversarial on pairB, admitted when pairB's enrollment met the lane.
// pairB re-enrolls under a ceiling that leaves an axis unenforced: it
// never receives the session, whatever the record says.
func TestPlacementRechecksLane(t *testing.T) {
	full := admissiontest.Capability(admission.ProviderAttested, checkfu.AdvisoryFilter)
	v := mustPublish(t, nil, profileDoc("", `{"type": "none"}`))
	then := admissiontest.Enroll(t, pairB, admission.PlacementRemote, full, full)
	rec, err := admission.Admit(admission.AdmitRequest{Deployment: "d1", Session: "s1", Profile: v, Lane: admission.LaneAdversarial,
		Providers: []admission.ProviderOffer{{Enrollment: then}}, Harness: "acp", Now: time.Unix(1764547200, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if err := admission.Place(rec, v, then, nil); err != nil {
		t.Fatalf("placement on the admitted enrollment: %v", err)
	}
	lowered := full
	lowered.Enforcement[admission.AxisProcessIsolation] = admission.Unenforced
	now := admissiontest.Enroll(t, pairB, admission.PlacementRemote, full, lowered)
	wantCode(t, "provider below the lane", admission.Place(rec, v, now, nil), admission.CodeLaneRequirementUnmet)

	other := admissiontest.Enroll(t, pairA, admission.PlacementRemote, full, full)
	wantCode(t, "another provider", admission.Place(rec, v, other, nil), admission.CodePlacementMismatch)
	v2 := mustPublish(t, v, profileDoc("", `{"type": "unrestricted"}`))
	wantCode(t, "another profile version", admission.Place(rec, v2, then, nil), admission.CodePlacementMismatch)
}

func TestAdmitRefuses(t *testing.T) {
	full := admissiontest.Capability(admission.ProviderAttested, checkfu.AdvisoryFilter)
	e := admissiontest.Enroll(t, pairB, admission.PlacementRemote, full, full)
	base := admission.AdmitRequest{Deployment: "d1", Session: "s1", Profile: mustPublish(t, nil, profileDoc("", allowNoReq)),
		Provenance: admission.Provenance{Actor: "alice", Role: "admin"},
		Providers:  []admission.ProviderOffer{{Enrollment: e}}, Harness: "acp"}
	tests := []struct {
		name string
		edit func(*admission.AdmitRequest)
		code checkfu.Code
	}{
		{"missing provenance is adversarial", func(*admission.AdmitRequest) {}, admission.CodeLaneRequirementUnmet},
		{"blocked harness", func(r *admission.AdmitRequest) { r.Lane = admission.LaneTrusted; r.Harness = "oneshot" }, admission.CodeHarnessBlocked},
		{"unknown harness", func(r *admission.AdmitRequest) { r.Lane = admission.LaneTrusted; r.Harness = "nope" }, admission.CodeHarnessUnknown},
		{"no provider", func(r *admission.AdmitRequest) { r.Lane = admission.LaneTrusted; r.Providers = nil }, admission.CodeProviderUnavailable},
		{"requirement unmet", func(r *admission.AdmitRequest) {
			r.Lane = admission.LaneTrusted
			r.Profile = mustPublish(t, nil, profileDoc("", allowBoundary))
		}, admission.CodeEgressCertificationUnsatisfied},
		{"invalid lane", func(r *admission.AdmitRequest) { r.Lane = 7 }, admission.CodeLaneInvalid},
	}
	for _, tt := range tests {
		r := base
		tt.edit(&r)
		_, err := admission.Admit(r)
		wantCode(t, tt.name, err, tt.code)
	}
	r := base
	r.Lane = admission.LaneTrusted
	if _, err := admission.Admit(r); err != nil {
		t.Errorf("trusted lane on an advisory allowlist: %v", err)
	}
}
