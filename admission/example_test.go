package admission_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/admission"
	"github.com/checkfu/checkfu/signing"
)

func ExamplePublish() {
	p, err := admission.ParseProfile([]byte(`{
		"name": "go-build",
		"image": {"ref": "docker.io/library/golang:1.26", "digest": "sha256:1111111111111111111111111111111111111111111111111111111111111111"},
		"resources": {"cpu_millis": 2000, "memory_mib": 2048},
		"ecosystems": ["go"],
		"network_policy": {"type": "allowlist", "allowed_hosts": ["api.example.com"], "allow_package_managers": true, "allow_mcp_servers": true}
	}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	v, err := admission.Publish(nil, p, nil) // nil: the built-in preset catalog
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("version", v.Version(), "catalog", v.CatalogVersion())
	for _, h := range v.Hosts() {
		if h.RelaysToAnyOrigin != "" {
			fmt.Println(h, h.GrantedBy, "warning: relays to any origin")
			continue
		}
		fmt.Println(h, h.GrantedBy)
	}
	// Output:
	// version 1 catalog 2026-11-30.1
	// api.example.com:443 [allowed_hosts]
	// proxy.golang.org:443 [allow_package_managers] warning: relays to any origin
	// sum.golang.org:443 [allow_package_managers] warning: relays to any origin
}

func ExampleSelect() {
	p, _ := admission.ParseProfile([]byte(`{"name": "p",
		"image": {"ref": "docker.io/library/debian:12", "digest": "sha256:1111111111111111111111111111111111111111111111111111111111111111"},
		"resources": {"cpu_millis": 1000, "memory_mib": 512},
		"network_policy": {"type": "allowlist", "allowed_hosts": ["api.example.com"], "required_egress_certification": "security_boundary"}}`))
	v, _ := admission.Publish(nil, p, nil)
	// A provider's own advertisement never reaches security_boundary:
	// only a verified receipt for its exact revision can.
	s, err := admission.Select(v, []admission.Candidate{
		{Target: checkfu.ProviderRevision{Provider: "partner:vm", Revision: "7"}, Advertised: checkfu.SecurityBoundary, NetworkPolicyAuthority: admission.ProviderAttested},
	})
	code, _ := checkfu.CodeOf(err)
	fmt.Println(code)
	for _, c := range s.Candidates {
		cause, _ := checkfu.CodeOf(c.Err)
		fmt.Println(c.Target, c.Grade, cause)
	}
	// Output:
	// provider_unavailable
	// partner:vm@7 advisory_filter egress_certification_unsatisfied
}

func ExampleIntersect() {
	declared := admission.RunnerProviderCapability{
		Drivers: []string{"docker", "firecracker"}, MountKinds: []string{"memory", "project"}, ListDir: true,
		EgressCertification: checkfu.AdvisoryFilter,
		Enforcement:         admission.Enforcement{admission.ProviderAttested, admission.ProviderAttested},
	}
	ceiling := admission.RunnerProviderCapability{ // issued by the operator
		Drivers: []string{"docker"}, MountKinds: []string{"memory", "project"},
		EgressCertification: checkfu.AdvisoryFilter,
		Enforcement:         admission.Enforcement{admission.ProviderAttested},
	}
	eff := admission.Intersect(declared, ceiling)
	fmt.Println(eff.Drivers, eff.ListDir, eff.Enforcement[admission.AxisImage], eff.Enforcement[admission.AxisFilesystem])
	// Output: [docker] false provider_attested unenforced
}

func ExampleEnroll() {
	seed := sha256.Sum256([]byte("example provider key"))
	key, _, _ := signing.GenerateSigner(bytes.NewReader(seed[:]))
	set, _ := json.Marshal(map[string]any{"attesters": []map[string]string{{"name": "partner:vm", "public_key_pem": string(key.PublicKeyPEM())}}})
	signers, _ := signing.ParseAttesterSet(set)

	target := checkfu.ProviderRevision{Provider: "partner:vm", Revision: "7"}
	declared := admission.RunnerProviderCapability{MountKinds: []string{"memory"}, EgressCertification: checkfu.AdvisoryFilter}
	digest, _ := admission.CapabilityDigest(declared)
	statement, _ := admission.SignMaterialization(key, admission.MaterializationStatement{
		Provider: target.Provider, ProviderRevision: target.Revision, MaterializationRevision: "m1",
		Placement: admission.PlacementRemote, CapabilityDigest: digest, IssuedAt: "2026-12-01T00:00:00Z",
	})
	e, err := admission.Enroll(admission.EnrollmentRequest{Target: target, Placement: admission.PlacementRemote,
		Declared: declared, Ceiling: declared, Statement: statement, Signers: signers})
	if err != nil {
		fmt.Println(err)
		return
	}
	skip, ok := e.MemoryWriteback()
	fmt.Println(e.Target(), ok, skip.Code)
	// Output: partner:vm@7 false memory_writeback_skipped
}

// exampleEnrollment enrolls a remote provider whose every axis is
// provider_attested, for the examples below.
func exampleEnrollment() (*admission.Enrollment, error) {
	seed := sha256.Sum256([]byte("example provider key"))
	key, _, _ := signing.GenerateSigner(bytes.NewReader(seed[:]))
	set, _ := json.Marshal(map[string]any{"attesters": []map[string]string{{"name": "partner:vm", "public_key_pem": string(key.PublicKeyPEM())}}})
	signers, _ := signing.ParseAttesterSet(set)
	target := checkfu.ProviderRevision{Provider: "partner:vm", Revision: "7"}
	var e admission.Enforcement
	for i := range e {
		e[i] = admission.ProviderAttested
	}
	declared := admission.RunnerProviderCapability{NetworkModes: []string{"none"}, Enforcement: e, EgressCertification: checkfu.AdvisoryFilter}
	digest, _ := admission.CapabilityDigest(declared)
	statement, _ := admission.SignMaterialization(key, admission.MaterializationStatement{
		Provider: target.Provider, ProviderRevision: target.Revision, MaterializationRevision: "m1",
		Placement: admission.PlacementRemote, CapabilityDigest: digest, IssuedAt: "2026-12-01T00:00:00Z",
	})
	return admission.Enroll(admission.EnrollmentRequest{Target: target, Placement: admission.PlacementRemote,
		Declared: declared, Ceiling: declared, Statement: statement, Signers: signers})
}

func ExampleAdmit() {
	e, err := exampleEnrollment()
	if err != nil {
		fmt.Println(err)
		return
	}
	p, _ := admission.ParseProfile([]byte(`{"name": "offline",
		"image": {"ref": "docker.io/library/debian:12", "digest": "sha256:1111111111111111111111111111111111111111111111111111111111111111"},
		"resources": {"cpu_millis": 1000, "memory_mib": 512}, "network_policy": {"type": "none"}}`))
	v, _ := admission.Publish(nil, p, nil)
	rec, err := admission.Admit(admission.AdmitRequest{Deployment: "deploy-eu", Session: "s-1", Profile: v,
		// Lane omitted: missing provenance is adversarial.
		Provenance: admission.Provenance{Actor: "alice", Role: "admin"},
		Providers:  []admission.ProviderOffer{{Enrollment: e}}, Harness: "acp"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(rec.Target(), rec.Facts().Lane)

	// Freeze it under the deployment key and load it back.
	seed := sha256.Sum256([]byte("example deployment key"))
	key, _, _ := signing.GenerateSigner(bytes.NewReader(seed[:]))
	set, _ := json.Marshal(map[string]any{"attesters": []map[string]string{{"name": "deploy-eu", "public_key_pem": string(key.PublicKeyPEM())}}})
	keys, _ := signing.ParseAttesterSet(set)
	env, _ := admission.SignRecord(key, rec)
	loaded, err := admission.LoadRecord(env, "deploy-eu", "s-1", keys)
	fmt.Println(err == nil, admission.Place(loaded, v, e, nil) == nil)

	pub, _ := json.Marshal(admission.PublicView(loaded))
	fmt.Println(bytes.Contains(pub, []byte("alice")))
	// Output:
	// partner:vm@7 adversarial
	// true true
	// false
}

func ExampleCheckAcquire() {
	err := admission.CheckAcquire(admission.LaneTrusted, admission.AcquireThirdPartySteering)
	code, _ := checkfu.CodeOf(err)
	fmt.Println(code)
	// Output: trusted_lane_tainted
}

// A trusted session may not be granted a public package registry: what
// allow_package_managers grants is third-party executable content.
func ExampleCheckGrant() {
	p, _ := admission.ParseProfile([]byte(`{"name": "node",
		"image": {"ref": "docker.io/library/node:22", "digest": "sha256:1111111111111111111111111111111111111111111111111111111111111111"},
		"resources": {"cpu_millis": 1000, "memory_mib": 512}, "ecosystems": ["npm"],
		"network_policy": {"type": "allowlist", "allowed_hosts": ["api.example.com"], "allow_package_managers": true}}`))
	v, _ := admission.Publish(nil, p, nil)
	for _, h := range v.Hosts() {
		verdict := "granted"
		if code, refused := checkfu.CodeOf(admission.CheckGrant(admission.LaneTrusted, h)); refused {
			verdict = "refused " + string(code)
		}
		fmt.Println(h, h.GrantedBy, verdict)
	}
	// Output:
	// api.example.com:443 [allowed_hosts] granted
	// registry.npmjs.org:443 [allow_package_managers] refused trusted_lane_tainted
}

func ExampleHarnessCatalog_Launch() {
	c := admission.DefaultHarnessCatalog()
	e, _ := c.Launch("acp")
	_, err := c.Launch("oneshot")
	code, _ := checkfu.CodeOf(err)
	fmt.Println(e.Protocol, code)
	// Output: acp-v1 harness_blocked
}

func ExampleDiffVersions() {
	doc := func(np string) []byte {
		return []byte(`{"name": "p", "image": {"ref": "docker.io/library/debian:12", "digest": "sha256:1111111111111111111111111111111111111111111111111111111111111111"},
			"resources": {"cpu_millis": 1000, "memory_mib": 512}, "ecosystems": ["npm"], "network_policy": ` + np + `}`)
	}
	p1, _ := admission.ParseProfile(doc(`{"type": "allowlist", "allowed_hosts": ["api.example.com"]}`))
	p2, _ := admission.ParseProfile(doc(`{"type": "allowlist", "allowed_hosts": ["api.example.com"], "allow_package_managers": true}`))
	v1, _ := admission.Publish(nil, p1, nil)
	v2, _ := admission.Publish(v1, p2, nil)
	d := admission.DiffVersions(v1, v2)
	fmt.Println(d.OldVersion, d.NewVersion, d.Widened[0], d.Widens())
	// Output: 1 2 registry.npmjs.org:443 true
}

// ExampleCheckCapability: the ceiling leaves the provider no
// unrestricted network mode, so an unrestricted profile cannot run on it.
func ExampleCheckCapability() {
	ceiling := admission.RunnerProviderCapability{NetworkModes: []string{"allowlist", "none"}}
	declared := admission.RunnerProviderCapability{NetworkModes: []string{"none", "unrestricted"}}
	eff := admission.Intersect(declared, ceiling)
	for _, np := range []string{`{"type": "none"}`, `{"type": "unrestricted"}`} {
		p, _ := admission.ParseProfile([]byte(`{"name": "p",
			"image": {"ref": "docker.io/library/debian:12", "digest": "sha256:1111111111111111111111111111111111111111111111111111111111111111"},
			"resources": {"cpu_millis": 1000, "memory_mib": 512}, "network_policy": ` + np + `}`))
		v, _ := admission.Publish(nil, p, nil)
		code, _ := checkfu.CodeOf(admission.CheckCapability(v, eff))
		fmt.Printf("%s: %q\n", v.PolicyType(), code)
	}
	// Output:
	// none: ""
	// unrestricted: "capability_unmet"
}
