package admission_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/admission"
	"github.com/checkfu/checkfu/admission/admissiontest"
)

// publishedSeeds publishes every retained profile fixture and returns
// the documents; it fails when there are none.
func publishedSeeds(f *testing.F) [][]byte {
	f.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "profiles", "*.json"))
	if err != nil || len(paths) == 0 {
		f.Fatalf("no seed profiles under testdata/profiles (%v)", err)
	}
	var out [][]byte
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		v := mustPublish(f, nil, string(b))
		doc, err := v.MarshalJSON()
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, doc)
	}
	return out
}

// FuzzParsePublished: the reader never panics, and a version it accepts
// re-encodes to the same bytes (nothing in it is ignored or rewritten).
func FuzzParsePublished(f *testing.F) {
	for _, s := range publishedSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		v, err := admission.ParsePublished(doc)
		if err != nil {
			if _, ok := checkfu.CodeOf(err); !ok {
				t.Fatalf("untyped refusal %v", err)
			}
			return
		}
		again, err := v.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, doc) {
			t.Fatalf("accepted %q but re-encodes as %q", doc, again)
		}
	})
}

// FuzzParseCatalog: the catalog reader never panics and refuses typed.
func FuzzParseCatalog(f *testing.F) {
	f.Add([]byte(`{"version": "2026-12-02.1", "hosts": [{"ecosystem": "go", "host": "proxy.golang.org", "port": 443, "purpose": "module proxy", "relays_to_any_origin": "any module path"}]}`))
	f.Add([]byte(`{"version": "2026-12-02.1", "hosts": [{"ecosystem": "npm", "host": "registry.yarnpkg.com", "port": 443, "purpose": "mirror", "redirects_to": ["registry.yarnpkg.com"]}]}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		if _, err := admission.ParseCatalog(doc); err != nil {
			if _, ok := checkfu.CodeOf(err); !ok {
				t.Fatalf("untyped refusal %v", err)
			}
		}
	})
}

// FuzzParseCandidates: the providers reader never panics, refuses typed,
// and never yields a candidate whose grade exceeds advisory_filter (it
// carries no receipt).
func FuzzParseCandidates(f *testing.F) {
	f.Add([]byte(`{"providers": [{"provider": "checkfu:docker-provider", "provider_revision": "3", "egress_certification": "security_boundary", "enforcement": {"network_policy": "provider_attested"}}]}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		cs, err := admission.ParseCandidates(doc)
		if err != nil {
			if _, ok := checkfu.CodeOf(err); !ok {
				t.Fatalf("untyped refusal %v", err)
			}
			return
		}
		for _, c := range cs {
			if c.Grade() > checkfu.AdvisoryFilter {
				t.Fatalf("%v graded %v without a receipt", c.Target, c.Grade())
			}
		}
	})
}

// FuzzSelect: whatever providers document ParseCandidates accepts,
// Select against each retained profile never panics; it chooses a
// candidate whose check passes, or refuses provider_unavailable with an
// error that prints, and whose every wrapped cause is a typed refusal.
func FuzzSelect(f *testing.F) {
	for _, doc := range []string{
		`{}`,
		`{"providers": []}`,
		`{"providers": [{"provider": "checkfu:docker-provider", "provider_revision": "3", "egress_certification": "advisory_filter", "enforcement": {"network_policy": "provider_attested"}}]}`,
		`{"providers": [{"provider": "partner:vm-provider", "provider_revision": "7", "egress_certification": "unsupported"}]}`,
		`{"providers": [{"provider": "a", "provider_revision": "1", "egress_certification": "unsupported"}, {"provider": "b", "provider_revision": "2", "egress_certification": "advisory_filter", "enforcement": {"network_policy": "runner_enforced"}}]}`,
	} {
		f.Add([]byte(doc))
	}
	var profiles []*admission.Published
	for _, doc := range publishedSeeds(f) {
		v, err := admission.ParsePublished(doc)
		if err != nil {
			f.Fatal(err)
		}
		profiles = append(profiles, v)
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		cs, err := admission.ParseCandidates(doc)
		if err != nil {
			return // FuzzParseCandidates covers the reader
		}
		for _, v := range profiles {
			s, err := admission.Select(v, cs)
			if err == nil {
				if admission.CheckEgress(v, s.Chosen) != nil {
					t.Fatalf("chose %v, which fails CheckEgress", s.Chosen.Target)
				}
				continue
			}
			_ = err.Error()
			if !errors.Is(err, admission.CodeProviderUnavailable) {
				t.Fatalf("Select refused %v, want %s", err, admission.CodeProviderUnavailable)
			}
			for e := errors.Unwrap(err); e != nil; e = errors.Unwrap(e) {
				if r, ok := e.(*checkfu.Refusal); !ok || r == nil {
					t.Fatalf("Select's refusal wraps %#v", e)
				}
				_ = e.Error()
			}
		}
	})
}

// FuzzLoadRecord: whatever payload the trusted deployment key signs,
// LoadRecord never panics, refuses typed, and accepts only a canonical
// record of this deployment and session.
func FuzzLoadRecord(f *testing.F) {
	f.Add([]byte(`{"deployment":"d1","session":"s1"}`))
	f.Add([]byte(`{}`))
	key := admissiontest.Signer(f, "d1")
	keys := admissiontest.KeySet(f, "d1")
	full := admissiontest.Capability(admission.ProviderAttested, checkfu.AdvisoryFilter)
	rec, err := admission.Admit(admission.AdmitRequest{Deployment: "d1", Session: "s1", Profile: mustPublish(f, nil, profileDoc("", `{"type": "none"}`)),
		Providers: []admission.ProviderOffer{{Enrollment: admissiontest.Enroll(f, pairB, admission.PlacementRemote, full, full)}}, Harness: "acp"})
	if err != nil {
		f.Fatal(err)
	}
	env, err := admission.SignRecord(key, rec)
	if err != nil {
		f.Fatal(err)
	}
	var dsse struct {
		Payload []byte `json:"payload"`
	}
	if err := json.Unmarshal(env, &dsse); err != nil || len(dsse.Payload) == 0 {
		f.Fatalf("record envelope %s: %v", env, err)
	}
	f.Add(dsse.Payload)
	f.Fuzz(func(t *testing.T, payload []byte) {
		env, err := key.SignPayload(admission.RecordPayloadType, payload)
		if err != nil {
			return
		}
		r, err := admission.LoadRecord(env, "d1", "s1", keys)
		if err != nil {
			if _, ok := checkfu.CodeOf(err); !ok {
				t.Fatalf("untyped refusal %v", err)
			}
			return
		}
		if f := r.Facts(); f.Deployment != "d1" || f.Session != "s1" {
			t.Fatalf("accepted a record of %q/%q", f.Deployment, f.Session)
		}
		if again, err := admission.SignRecord(key, r); err != nil || !bytes.Equal(again, env) {
			t.Fatalf("accepted payload %q does not re-sign to the same envelope (%v)", payload, err)
		}
	})
}

// FuzzEnrollStatement: whatever statement payload the enrolled key
// signs, Enroll never panics, refuses typed, and admits only a statement
// for the exact pair, placement and declared capability.
func FuzzEnrollStatement(f *testing.F) {
	full := admissiontest.Capability(admission.ProviderAttested, checkfu.AdvisoryFilter)
	d, err := admission.CapabilityDigest(full)
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(`{"capability_digest":"` + d + `","issued_at":"2026-12-01T00:00:00Z","materialization_revision":"m1","placement":"remote","provider":"partner:vm-provider","provider_revision":"7"}`))
	f.Add([]byte(`{"capability_digest":"` + d + `","issued_at":"2026-12-01T00:00:00Z","materialization_revision":"m1","placement":"in_process","provider":"partner:vm-provider","provider_revision":"7 "}`))
	key := admissiontest.Signer(f, pairB.Provider)
	req := admissiontest.Request(f, pairB, admission.PlacementRemote, full, full)
	f.Fuzz(func(t *testing.T, payload []byte) {
		env, err := key.SignPayload(admission.MaterializationPayloadType, payload)
		if err != nil {
			return
		}
		r := req
		r.Statement = env
		e, err := admission.Enroll(r)
		if err != nil {
			if _, ok := checkfu.CodeOf(err); !ok {
				t.Fatalf("untyped refusal %v", err)
			}
			return
		}
		s := e.Statement()
		if s.Provider != pairB.Provider || s.ProviderRevision != pairB.Revision || s.Placement != admission.PlacementRemote || s.CapabilityDigest != d {
			t.Fatalf("enrolled on statement %+v", s)
		}
	})
}
