package admission_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/admission"
	"github.com/checkfu/checkfu/admission/admissiontest"
	"github.com/checkfu/checkfu/conformance"
)

// TestTrustedLaneNeedsProvenance: D243 defaults missing provenance to
// adversarial. A trusted lane that nobody declared (no actor or role) is
// missing provenance, so it is admitted, frozen and placed as
// adversarial: here the profile is unrestricted and the provider leaves
// an axis unenforced, so the session is refused.
func TestTrustedLaneNeedsProvenance(t *testing.T) {
	gap := admissiontest.Capability(admission.ProviderAttested, checkfu.AdvisoryFilter)
	gap.Enforcement[admission.AxisSyscalls] = admission.Unenforced
	e := admissiontest.Enroll(t, pairB, admission.PlacementRemote, gap, gap)
	v := mustPublish(t, nil, profileDoc("", `{"type": "unrestricted"}`))
	for name, p := range map[string]admission.Provenance{
		"none":       {},
		"no role":    {Actor: "alice"},
		"no actor":   {Role: "admin"},
		"blank text": {Actor: " ", Role: "\t"},
	} {
		rec, err := admission.Admit(admission.AdmitRequest{Deployment: "d1", Session: "s1", Profile: v, Lane: admission.LaneTrusted,
			Provenance: p, Providers: []admission.ProviderOffer{{Enrollment: e}}, Harness: "acp", Now: time.Unix(1764547200, 0)})
		if err == nil {
			t.Errorf("%s: trusted without provenance admitted as %v", name, rec.Facts().Lane)
			continue
		}
		wantCode(t, name, err, admission.CodeLaneRequirementUnmet)
	}
	rec, err := admission.Admit(admission.AdmitRequest{Deployment: "d1", Session: "s1", Profile: v, Lane: admission.LaneTrusted,
		Provenance: admission.Provenance{Actor: "alice", Role: "admin"}, Providers: []admission.ProviderOffer{{Enrollment: e}}, Harness: "acp"})
	if err != nil || rec.Facts().Lane != admission.LaneTrusted {
		t.Fatalf("declared trusted lane: %v", err)
	}
}

// TestPlaceTrustedNeedsProvenance: a validly signed record that says
// trusted but names nobody who declared it (as an admitter before the
// provenance rule would have frozen it) is placed as adversarial.
func TestPlaceTrustedNeedsProvenance(t *testing.T) {
	gap := admissiontest.Capability(admission.ProviderAttested, checkfu.AdvisoryFilter)
	gap.Enforcement[admission.AxisSyscalls] = admission.Unenforced
	e := admissiontest.Enroll(t, pairB, admission.PlacementRemote, gap, gap)
	v := mustPublish(t, nil, profileDoc("", `{"type": "unrestricted"}`))
	rec, err := admission.Admit(admission.AdmitRequest{Deployment: "d1", Session: "s1", Profile: v, Lane: admission.LaneTrusted,
		Provenance: admission.Provenance{Actor: "alice", Role: "admin"}, Providers: []admission.ProviderOffer{{Enrollment: e}}, Harness: "acp"})
	if err != nil {
		t.Fatal(err)
	}
	f := rec.Facts()
	f.Provenance = admission.Provenance{}
	payload, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	var tree any
	_ = json.Unmarshal(payload, &tree)
	payload, _ = json.Marshal(tree) // sorted members, as the canonical form
	env, err := admissiontest.Signer(t, "d1").SignPayload(admission.RecordPayloadType, payload)
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := admission.LoadRecord(env, "d1", "s1", admissiontest.KeySet(t, "d1"))
	if err != nil {
		t.Fatalf("LoadRecord: %v", err)
	}
	wantCode(t, "trusted record without provenance", admission.Place(loaded, v, e, nil), admission.CodeLaneRequirementUnmet)
	if err := admission.Place(rec, v, e, nil); err != nil {
		t.Errorf("declared trusted record: %v", err)
	}
}

// TestDigestRefusesInvalidUTF8: encoding/json writes every invalid byte
// as U+FFFD, so two profiles built in Go that differ only in invalid
// bytes would share one canonical encoding and one digest. The canonical
// encoding must refuse them instead.
func TestDigestRefusesInvalidUTF8(t *testing.T) {
	p := mustProfile(t, profileDoc("", `{"type": "none"}`))
	a, b := *p, *p
	a.Description, b.Description = "x\xff", "x\xfe"
	da, errA := a.Digest()
	db, errB := b.Digest()
	if errA == nil && errB == nil {
		t.Fatalf("profiles differing in invalid bytes digest to %s and %s, want refusals", da, db)
	}
	wantCode(t, "invalid UTF-8 description", errA, admission.CodeProfileInvalid)
	if _, err := admission.Publish(nil, &a, nil); err == nil {
		t.Errorf("Publish accepted a profile with invalid UTF-8")
	}
	// A literal U+FFFD is valid text and keeps its own digest.
	c := *p
	c.Description = "x\uFFFD"
	if _, err := c.Digest(); err != nil {
		t.Errorf("valid U+FFFD refused: %v", err)
	}
	// So is the text of the escape itself, a backslash then "ufffd".
	c.Description = `x\ufffd`
	if _, err := c.Digest(); err != nil {
		t.Errorf("literal backslash-ufffd refused: %v", err)
	}
}

// TestSignRecordRefusesInvalidUTF8: a record whose session id holds
// invalid bytes would be signed as U+FFFD and load as another session.
func TestSignRecordRefusesInvalidUTF8(t *testing.T) {
	full := admissiontest.Capability(admission.ProviderAttested, checkfu.AdvisoryFilter)
	rec, err := admission.Admit(admission.AdmitRequest{Deployment: "d1", Session: "s\xff", Profile: mustPublish(t, nil, profileDoc("", `{"type": "none"}`)),
		Providers: []admission.ProviderOffer{{Enrollment: admissiontest.Enroll(t, pairB, admission.PlacementRemote, full, full)}}, Harness: "acp"})
	if err != nil {
		return // refused at admission: fine
	}
	if _, err := admission.SignRecord(admissiontest.Signer(t, "d1"), rec); err == nil {
		t.Errorf("SignRecord signed a session id that is not UTF-8")
	}
}

// TestRelayReasonQuotedBounded: a catalog's relay reason is text from
// outside; the relay_not_named refusal quotes it bounded.
func TestRelayReasonQuotedBounded(t *testing.T) {
	reason := "line one\n\x1b[2J" + strings.Repeat("r", 10000)
	quoted, _ := json.Marshal(reason)
	cat, err := admission.ParseCatalog([]byte(`{"version": "2026-12-02.1", "hosts": [{"ecosystem": "go", "host": "proxy.example", "port": 443, "purpose": "proxy", "relays_to_any_origin": ` + string(quoted) + `}]}`))
	if err != nil {
		t.Fatal(err)
	}
	v, err := admission.Publish(nil, mustProfile(t, profileDoc(`["go"]`, `{"type": "allowlist", "allow_package_managers": true}`)), cat)
	if err != nil {
		t.Fatal(err)
	}
	receipt, _ := admissiontest.Receipt(t, pairB)
	err = admission.CheckLane(admission.LaneAdversarial, v, admission.Candidate{Target: pairB, Advertised: checkfu.SecurityBoundary, Receipt: receipt},
		admissiontest.Capability(admission.ProviderAttested, checkfu.SecurityBoundary))
	wantCode(t, "relay by preset", err, admission.CodeRelayNotNamed)
	if msg := err.Error(); len(msg) > 512 || strings.ContainsAny(msg, "\n\x1b") {
		t.Errorf("refusal quotes the relay reason unbounded (%d bytes): %.200q", len(msg), msg)
	}
}

// TestLoadRecordRefusesAnotherSession: a record is signed by the right
// deployment key but is of another session. Loaded in place of this
// session's record (say a trusted session's record swapped in at rest
// for an adversarial one's), it must be refused.
func TestLoadRecordRefusesAnotherSession(t *testing.T) {
	full := admissiontest.Capability(admission.ProviderAttested, checkfu.AdvisoryFilter)
	rec, err := admission.Admit(admission.AdmitRequest{Deployment: "d1", Session: "trusted-1", Profile: mustPublish(t, nil, profileDoc("", `{"type": "none"}`)),
		Lane: admission.LaneTrusted, Provenance: admission.Provenance{Actor: "alice", Role: "admin"},
		Providers: []admission.ProviderOffer{{Enrollment: admissiontest.Enroll(t, pairB, admission.PlacementRemote, full, full)}}, Harness: "acp"})
	if err != nil {
		t.Fatal(err)
	}
	env, err := admission.SignRecord(admissiontest.Signer(t, "d1"), rec)
	if err != nil {
		t.Fatal(err)
	}
	keys := admissiontest.KeySet(t, "d1")
	if _, err := admission.LoadRecord(env, "d1", "trusted-1", keys); err != nil {
		t.Fatalf("own session: %v", err)
	}
	_, err = admission.LoadRecord(env, "d1", "adversarial-2", keys)
	wantCode(t, "another session", err, admission.CodeSessionMismatch)
	_, err = admission.LoadRecord(env, "d1", "", keys)
	wantCode(t, "no session", err, admission.CodeSessionMismatch)
}

// TestPayloadTypesAreNotConfused: a record, a materialization statement
// and a conformance receipt are signed under three payload types; none
// is accepted as another, even when the same key signs all three and
// the verifying set trusts it. Nil key sets refuse, never panic.
func TestPayloadTypesAreNotConfused(t *testing.T) {
	full := admissiontest.Capability(admission.ProviderAttested, checkfu.AdvisoryFilter)
	rec, err := admission.Admit(admission.AdmitRequest{Deployment: pairB.Provider, Session: "s1", Profile: mustPublish(t, nil, profileDoc("", `{"type": "none"}`)),
		Providers: []admission.ProviderOffer{{Enrollment: admissiontest.Enroll(t, pairB, admission.PlacementRemote, full, full)}}, Harness: "acp"})
	if err != nil {
		t.Fatal(err)
	}
	key := admissiontest.Signer(t, pairB.Provider)
	keys := admissiontest.KeySet(t, pairB.Provider)
	recordEnv, err := admission.SignRecord(key, rec)
	if err != nil {
		t.Fatal(err)
	}
	stmtEnv := admissiontest.Statement(t, pairB.Provider, pairB, admission.PlacementRemote, full)
	receiptEnv, err := conformance.Sign(key, conformance.Record{Target: pairB, Facts: conformance.AllFacts(), Label: checkfu.LabelProduction,
		IssuedAt: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), Evidence: []conformance.Digest{conformance.DigestOf([]byte("e"))}})
	if err != nil {
		t.Fatal(err)
	}
	for name, env := range map[string][]byte{"statement": stmtEnv, "receipt": receiptEnv} {
		_, err := admission.LoadRecord(env, pairB.Provider, "s1", keys)
		wantCode(t, name+" as a record", err, admission.CodeRecordUnauthentic)
	}
	for name, env := range map[string][]byte{"record": recordEnv, "receipt": receiptEnv} {
		req := admissiontest.Request(t, pairB, admission.PlacementRemote, full, full)
		req.Statement = env
		_, err := admission.Enroll(req)
		wantCode(t, name+" as a statement", err, admission.CodeStatementInvalid)
	}
	for name, env := range map[string][]byte{"record": recordEnv, "statement": stmtEnv} {
		if _, err := conformance.Verify(keys, env); err == nil {
			t.Errorf("%s verified as a receipt", name)
		}
	}
	_, err = admission.LoadRecord(recordEnv, pairB.Provider, "s1", nil)
	wantCode(t, "nil deployment keys", err, admission.CodeRecordUnauthentic)
	req := admissiontest.Request(t, pairB, admission.PlacementRemote, full, full)
	req.Signers = nil
	_, err = admission.Enroll(req)
	wantCode(t, "nil provider keys", err, admission.CodeStatementInvalid)
}

// TestZeroValuesFailClosed: a Published or an Enrollment not made by
// Publish, ParsePublished or Enroll is the zero value. Selection, the
// lane rule, admission and placement must refuse them, not treat a
// missing policy as "no restriction" or an unenrolled provider as one.
func TestZeroValuesFailClosed(t *testing.T) {
	full := admissiontest.Capability(admission.ProviderAttested, checkfu.SecurityBoundary)
	receipt, _ := admissiontest.Receipt(t, pairB)
	unsupported := admission.Candidate{Target: pairB, Advertised: checkfu.Unsupported}
	zeroV := &admission.Published{}
	if err := admission.CheckEgress(zeroV, unsupported); err == nil {
		t.Errorf("CheckEgress selected an unsupported provider for a zero Published")
	}
	if s, err := admission.Select(zeroV, []admission.Candidate{unsupported}); err == nil {
		t.Errorf("Select chose %v for a zero Published", s.Chosen.Target)
	}
	if err := admission.CheckLane(admission.LaneTrusted, zeroV, unsupported, full); err == nil {
		t.Errorf("CheckLane admitted a zero Published")
	}
	e := admissiontest.Enroll(t, pairB, admission.PlacementRemote, full, full)
	v := mustPublish(t, nil, profileDoc("", `{"type": "none"}`))
	trusted := admission.Provenance{Actor: "alice", Role: "admin"}
	if _, err := admission.Admit(admission.AdmitRequest{Deployment: "d1", Session: "s1", Profile: zeroV, Lane: admission.LaneTrusted, Provenance: trusted,
		Providers: []admission.ProviderOffer{{Enrollment: e, Receipt: receipt}}, Harness: "acp"}); err == nil {
		t.Errorf("Admit admitted a zero Published")
	}
	rec, err := admission.Admit(admission.AdmitRequest{Deployment: "d1", Session: "s1", Profile: v, Lane: admission.LaneTrusted, Provenance: trusted,
		Providers: []admission.ProviderOffer{{Enrollment: &admission.Enrollment{}}}, Harness: "acp"})
	if err == nil {
		t.Errorf("Admit placed a session on a zero Enrollment %q", rec.Target())
	}
	rec, err = admission.Admit(admission.AdmitRequest{Deployment: "d1", Session: "s1", Profile: v, Lane: admission.LaneTrusted, Provenance: trusted,
		Providers: []admission.ProviderOffer{{Enrollment: e}}, Harness: "acp"})
	if err != nil {
		t.Fatal(err)
	}
	wantCode(t, "place with a zero Published", admission.Place(rec, zeroV, e, nil), admission.CodePlacementMismatch)
	wantCode(t, "place on a zero Enrollment", admission.Place(rec, v, &admission.Enrollment{}, nil), admission.CodePlacementMismatch)
}

// TestLargeProfileReadsBack: the canonical encoding writes each host as
// host:port, which is longer than "host" as written. A profile whose
// policy fits egress's bound only as written would publish to a version
// that ParsePublished can never read back. Every profile accepted must
// publish to a readable version (or be refused up front).
func TestLargeProfileReadsBack(t *testing.T) {
	var hosts []string
	label := strings.Repeat("a", 36)
	for i := 0; i < 512; i++ {
		hosts = append(hosts, fmt.Sprintf(`"h%03d.%s.%s.%s.example"`, i, label, label, label))
	}
	doc := profileDoc("", `{"type": "allowlist", "allowed_hosts": [`+strings.Join(hosts, ",")+`]}`)
	p, err := admission.ParseProfile([]byte(doc))
	if err != nil {
		wantCode(t, "oversized canonical policy", err, admission.CodeProfileInvalid)
		return
	}
	v, err := admission.Publish(nil, p, nil)
	if err != nil {
		t.Fatalf("accepted profile does not publish: %v", err)
	}
	b, err := v.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admission.ParsePublished(b); err != nil {
		t.Fatalf("a version Publish made (%d bytes) does not read back: %v", len(b), err)
	}
}

// TestCeilingBindsAdmission: the ceiling narrows network_modes and
// package_managers, and the effective capability is all the Runner may
// use. Admission and placement must not pick a provider for a profile
// whose network policy or declared ecosystems lie outside it, or the
// ceiling narrows nothing that matters.
func TestCeilingBindsAdmission(t *testing.T) {
	full := admissiontest.Capability(admission.ProviderAttested, checkfu.AdvisoryFilter)
	noUnrestricted := full
	noUnrestricted.NetworkModes = []string{"allowlist", "none"}
	noPip := full
	noPip.PackageManagers = []string{"apt", "go"}
	trusted := admission.Provenance{Actor: "alice", Role: "admin"}
	for name, tt := range map[string]struct {
		ceiling admission.RunnerProviderCapability
		profile string
	}{
		"unrestricted outside network_modes": {noUnrestricted, profileDoc("", `{"type": "unrestricted"}`)},
		"pip outside package_managers":       {noPip, profileDoc(`["pip"]`, `{"type": "none"}`)},
	} {
		e := admissiontest.Enroll(t, pairB, admission.PlacementRemote, full, tt.ceiling)
		v := mustPublish(t, nil, tt.profile)
		_, err := admission.Admit(admission.AdmitRequest{Deployment: "d1", Session: "s1", Profile: v, Lane: admission.LaneTrusted, Provenance: trusted,
			Providers: []admission.ProviderOffer{{Enrollment: e}}, Harness: "acp"})
		wantCode(t, name, err, admission.CodeCapabilityUnmet)
		// Admitted while the provider could; re-enrolled under the
		// narrower ceiling, it never receives the session.
		then := admissiontest.Enroll(t, pairB, admission.PlacementRemote, full, full)
		rec, err := admission.Admit(admission.AdmitRequest{Deployment: "d1", Session: "s1", Profile: v, Lane: admission.LaneTrusted, Provenance: trusted,
			Providers: []admission.ProviderOffer{{Enrollment: then}}, Harness: "acp"})
		if err != nil {
			t.Fatalf("%s: under the full ceiling: %v", name, err)
		}
		wantCode(t, name+" at placement", admission.Place(rec, v, e, nil), admission.CodeCapabilityUnmet)
	}
}

// TestHandNamedRelayIsWarned: naming a relay by hand accepts it on the
// adversarial lane, knowingly; it must still be shown as a relay in the
// published expansion, with or without allow_package_managers.
func TestHandNamedRelayIsWarned(t *testing.T) {
	for name, doc := range map[string]string{
		"by hand only":       profileDoc("", `{"type": "allowlist", "allowed_hosts": ["proxy.golang.org"]}`),
		"by hand and preset": profileDoc(`["go"]`, `{"type": "allowlist", "allowed_hosts": ["proxy.golang.org"], "allow_package_managers": true}`),
		"other ecosystem":    profileDoc(`["pip"]`, `{"type": "allowlist", "allowed_hosts": ["proxy.golang.org"], "allow_package_managers": true}`),
	} {
		v := mustPublish(t, nil, doc)
		var relays []string
		for _, h := range v.Relays() {
			relays = append(relays, h.String())
		}
		if len(relays) == 0 || relays[0] != "proxy.golang.org:443" {
			t.Errorf("%s: relays %v, want proxy.golang.org:443 warned", name, relays)
		}
		b, _ := v.MarshalJSON()
		if _, err := admission.ParsePublished(b); err != nil {
			t.Errorf("%s: does not read back: %v", name, err)
		}
	}
}

// TestStatementFieldBounds: each of provider, provider_revision and
// materialization_revision is at most 255 bytes, as documented, not
// merely their sum.
func TestStatementFieldBounds(t *testing.T) {
	long := checkfu.ProviderRevision{Provider: strings.Repeat("p", 600), Revision: "1"}
	full := admissiontest.Capability(admission.ProviderAttested, checkfu.AdvisoryFilter)
	d, err := admission.CapabilityDigest(full)
	if err != nil {
		t.Fatal(err)
	}
	_, err = admission.SignMaterialization(admissiontest.Signer(t, long.Provider), admission.MaterializationStatement{
		Provider: long.Provider, ProviderRevision: long.Revision, MaterializationRevision: "m1",
		Placement: admission.PlacementRemote, CapabilityDigest: d, IssuedAt: "2026-12-01T00:00:00Z"})
	wantCode(t, "600-byte provider", err, admission.CodeStatementInvalid)
}
