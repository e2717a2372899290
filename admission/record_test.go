package admission_test

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/admission"
	"github.com/checkfu/checkfu/admission/admissiontest"
)

func admitted(t *testing.T) *admission.Record {
	t.Helper()
	full := admissiontest.Capability(admission.ProviderAttested, checkfu.AdvisoryFilter)
	rec, err := admission.Admit(admission.AdmitRequest{Deployment: "deploy-eu", Session: "sess-1",
		Profile: mustPublish(t, nil, profileDoc("", `{"type": "none"}`)), Lane: admission.LaneAdversarial,
		Provenance: admission.Provenance{Actor: "alice@example.com", Role: "workspace_admin"},
		Providers:  []admission.ProviderOffer{{Enrollment: admissiontest.Enroll(t, pairB, admission.PlacementRemote, full, full)}},
		Harness:    "acp", Now: time.Date(2026, 12, 1, 12, 0, 0, 5, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func TestRecordSignLoad(t *testing.T) {
	rec := admitted(t)
	env, err := admission.SignRecord(admissiontest.Signer(t, "deploy-eu"), rec)
	if err != nil {
		t.Fatal(err)
	}
	keys := admissiontest.KeySet(t, "deploy-eu", "deploy-us")
	back, err := admission.LoadRecord(env, "deploy-eu", "sess-1", keys)
	if err != nil {
		t.Fatal(err)
	}
	if back.Facts().Provenance.Actor != "alice@example.com" || back.Target() != pairB || back.Facts().AdmittedAt != "2026-12-01T12:00:00Z" {
		t.Errorf("loaded %+v", back.Facts())
	}

	// Altered: flip the lane inside the signed payload.
	var m map[string]any
	_ = json.Unmarshal(env, &m)
	payload, _ := base64.StdEncoding.DecodeString(m["payload"].(string))
	m["payload"] = base64.StdEncoding.EncodeToString([]byte(strings.Replace(string(payload), `"adversarial"`, `"trusted"`, 1)))
	altered, _ := json.Marshal(m)
	_, err = admission.LoadRecord(altered, "deploy-eu", "sess-1", keys)
	wantCode(t, "altered", err, admission.CodeRecordUnauthentic)

	// Signed by another deployment's key, or by a key not trusted at all.
	us, _ := admission.SignRecord(admissiontest.Signer(t, "deploy-us"), rec)
	_, err = admission.LoadRecord(us, "deploy-eu", "sess-1", keys)
	wantCode(t, "signed by deploy-us", err, admission.CodeDeploymentMismatch)
	_, err = admission.LoadRecord(us, "deploy-eu", "sess-1", admissiontest.KeySet(t, "deploy-eu"))
	wantCode(t, "signed by an unknown key", err, admission.CodeRecordUnauthentic)
	// A deploy-eu record loaded by deploy-us.
	_, err = admission.LoadRecord(env, "deploy-us", "sess-1", keys)
	wantCode(t, "loaded by another deployment", err, admission.CodeDeploymentMismatch)
	// deploy-us's key signing a record that names deploy-eu, loaded by
	// deploy-us.
	_, err = admission.LoadRecord(us, "deploy-us", "sess-1", keys)
	wantCode(t, "record names another deployment", err, admission.CodeDeploymentMismatch)
	// Validly signed but not canonical.
	var indented []byte
	{
		var v any
		_ = json.Unmarshal(payload, &v)
		indented, _ = json.MarshalIndent(v, "", " ")
	}
	nc, _ := admissiontest.Signer(t, "deploy-eu").SignPayload(admission.RecordPayloadType, indented)
	_, err = admission.LoadRecord(nc, "deploy-eu", "sess-1", keys)
	wantCode(t, "not canonical", err, admission.CodeRecordUnauthentic)
	_, err = admission.LoadRecord([]byte("{}"), "deploy-eu", "sess-1", keys)
	wantCode(t, "unsigned", err, admission.CodeRecordUnauthentic)
}

func TestPublicViewOmitsProvenance(t *testing.T) {
	rec := admitted(t)
	pub, err := json.Marshal(admission.PublicView(rec))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"alice@example.com", "workspace_admin", "actor", "role", "provenance"} {
		if strings.Contains(string(pub), s) {
			t.Errorf("public view %s holds %q", pub, s)
		}
	}
	priv, _ := json.Marshal(rec.Facts())
	for _, s := range []string{"alice@example.com", "workspace_admin"} {
		if !strings.Contains(string(priv), s) {
			t.Errorf("private record %s lacks %q", priv, s)
		}
	}
	if !strings.Contains(string(pub), `"lane":"adversarial"`) || !strings.Contains(string(pub), pairB.Provider) {
		t.Errorf("public view lost the lane or the pair: %s", pub)
	}
}

func TestHarnessCatalog(t *testing.T) {
	c := admission.DefaultHarnessCatalog()
	if e, err := c.Launch("acp"); err != nil || e.Protocol != admission.ProtocolACPv1 {
		t.Errorf("acp: %v, %v", e, err)
	}
	_, err := c.Launch("oneshot")
	wantCode(t, "oneshot", err, admission.CodeHarnessBlocked)
	_, err = c.Launch("claude")
	wantCode(t, "unknown", err, admission.CodeHarnessUnknown)
	for _, es := range [][]admission.HarnessEntry{
		{{Name: "a", Protocol: "acp-v2", Availability: admission.Available}},
		{{Name: "a", Protocol: admission.ProtocolACPv1, Availability: "soon"}},
		{{Name: "a", Protocol: admission.ProtocolACPv1, Availability: admission.Available}, {Name: "a", Protocol: admission.ProtocolACPv1, Availability: admission.Available}},
	} {
		_, err := admission.NewHarnessCatalog(es)
		wantCode(t, "bad catalog", err, admission.CodeCapabilityInvalid)
	}
}
