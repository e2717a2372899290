package admission_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/admission"
	"github.com/checkfu/checkfu/admission/admissiontest"
	"github.com/checkfu/checkfu/conformance"
)

func TestIntersectEveryAxis(t *testing.T) {
	full := admissiontest.Capability(admission.RunnerEnforced, checkfu.SecurityBoundary)
	var zero admission.RunnerProviderCapability
	if got := admission.Intersect(full, zero); !reflect.DeepEqual(got, zero) {
		t.Errorf("Intersect(full, zero) = %+v, want the zero capability on every axis", got)
	}
	if got := admission.Intersect(full, full); !reflect.DeepEqual(got, full) {
		t.Errorf("Intersect(full, full) = %+v", got)
	}
	// Every field of the type is an axis Intersect narrows: a capability
	// that differs from full in any one field must pull the result down.
	rt := reflect.TypeOf(full)
	for i := range rt.NumField() {
		c := full
		reflect.ValueOf(&c).Elem().Field(i).Set(reflect.Zero(rt.Field(i).Type))
		if got := admission.Intersect(full, c); !reflect.DeepEqual(reflect.ValueOf(got).Field(i).Interface(), reflect.ValueOf(c).Field(i).Interface()) {
			t.Errorf("axis %s escapes the ceiling: got %v", rt.Field(i).Name, reflect.ValueOf(got).Field(i).Interface())
		}
	}
	if rt.NumField() != 18 {
		t.Errorf("RunnerProviderCapability has %d fields; the seed names 11 axes and 7 that escaped the ceiling (18)", rt.NumField())
	}
}

func TestCheckPlacement(t *testing.T) {
	c := admissiontest.Capability(admission.ProviderAttested, checkfu.AdvisoryFilter)
	if err := admission.CheckPlacement(admission.PlacementRemote, c); err != nil {
		t.Errorf("remote attesting: %v", err)
	}
	c.Enforcement[admission.AxisSyscalls] = admission.RunnerEnforced
	wantCode(t, "remote runner_enforced", admission.CheckPlacement(admission.PlacementRemote, c), admission.CodeAuthorityExceedsPlacement)
	if err := admission.CheckPlacement(admission.PlacementInProcess, c); err != nil {
		t.Errorf("in-process runner_enforced: %v", err)
	}
	wantCode(t, "unknown placement", admission.CheckPlacement("nearby", c), admission.CodeCapabilityInvalid)
}

func TestCapabilityCheck(t *testing.T) {
	bad := map[string]func(*admission.RunnerProviderCapability){
		"unsorted":        func(c *admission.RunnerProviderCapability) { c.Drivers = []string{"z", "a"} },
		"repeated":        func(c *admission.RunnerProviderCapability) { c.Tiers = []string{"a", "a"} },
		"empty name":      func(c *admission.RunnerProviderCapability) { c.MountKinds = []string{""} },
		"package manager": func(c *admission.RunnerProviderCapability) { c.PackageManagers = []string{"maven"} },
		"authority":       func(c *admission.RunnerProviderCapability) { c.Enforcement[0] = 9 },
		"grade":           func(c *admission.RunnerProviderCapability) { c.EgressCertification = 9 },
	}
	for name, mutate := range bad {
		c := admissiontest.Capability(admission.ProviderAttested, checkfu.AdvisoryFilter)
		mutate(&c)
		wantCode(t, name, c.Check(), admission.CodeCapabilityInvalid)
	}
}

func TestEnforcementJSON(t *testing.T) {
	var e admission.Enforcement
	if err := json.Unmarshal([]byte(`{"image": "runner_enforced", "syscalls": "provider_attested"}`), &e); err != nil {
		t.Fatal(err)
	}
	if e[admission.AxisImage] != admission.RunnerEnforced || e[admission.AxisSyscalls] != admission.ProviderAttested || e[admission.AxisMounts] != admission.Unenforced {
		t.Errorf("decoded %v", e)
	}
	for _, doc := range []string{`{"kernel": "unenforced"}`, `{"image": "enforced"}`} {
		wantCode(t, doc, json.Unmarshal([]byte(doc), &e), admission.CodeCapabilityInvalid)
	}
	if len(admission.Axes()) != 9 {
		t.Errorf("%d axes, want nine", len(admission.Axes()))
	}
}

func TestEnroll(t *testing.T) {
	declared := admissiontest.Capability(admission.ProviderAttested, checkfu.AdvisoryFilter)
	ceiling := declared
	ceiling.Drivers = nil
	ceiling.ListDir = false
	ceiling.Enforcement[admission.AxisLifetime] = admission.Unenforced
	e := admissiontest.Enroll(t, pairB, admission.PlacementRemote, declared, ceiling)
	eff := e.Effective()
	if len(eff.Drivers) != 0 || eff.ListDir || eff.Enforcement[admission.AxisLifetime] != admission.Unenforced || e.Target() != pairB {
		t.Errorf("effective capability is not the intersection: %+v", eff)
	}
	// The returned capability is a copy.
	eff.MountKinds[0] = "x"
	if e.Effective().MountKinds[0] == "x" {
		t.Errorf("Effective exposes the enrollment's storage")
	}
}

func TestEnrollRefuses(t *testing.T) {
	declared := admissiontest.Capability(admission.ProviderAttested, checkfu.AdvisoryFilter)
	good := func() admission.EnrollmentRequest {
		return admissiontest.Request(t, pairB, admission.PlacementRemote, declared, declared)
	}
	runner := admissiontest.Capability(admission.RunnerEnforced, checkfu.AdvisoryFilter)
	tests := []struct {
		name string
		edit func(*admission.EnrollmentRequest)
		code checkfu.Code
	}{
		{"remote claims runner_enforced", func(r *admission.EnrollmentRequest) {
			r.Declared = runner
			r.Statement = admissiontest.Statement(t, pairB.Provider, pairB, admission.PlacementRemote, runner)
		}, admission.CodeAuthorityExceedsPlacement},
		{"unsigned", func(r *admission.EnrollmentRequest) { r.Statement = []byte(`{"provider": "partner:vm-provider"}`) }, admission.CodeStatementInvalid},
		{"no statement", func(r *admission.EnrollmentRequest) { r.Statement = nil }, admission.CodeStatementInvalid},
		{"unknown signer", func(r *admission.EnrollmentRequest) { r.Signers = admissiontest.KeySet(t, "someone-else") }, admission.CodeStatementInvalid},
		{"empty signer set", func(r *admission.EnrollmentRequest) { r.Signers = conformance.BuiltinAttesters() }, admission.CodeStatementInvalid},
		{"signed by another provider's key", func(r *admission.EnrollmentRequest) {
			r.Statement = admissiontest.Statement(t, "other", pairB, admission.PlacementRemote, declared)
			r.Signers = admissiontest.KeySet(t, pairB.Provider, "other")
		}, admission.CodeStatementMismatch},
		{"statement for another revision", func(r *admission.EnrollmentRequest) {
			r.Statement = admissiontest.Statement(t, pairB.Provider, checkfu.ProviderRevision{Provider: pairB.Provider, Revision: "8"}, admission.PlacementRemote, declared)
		}, admission.CodeStatementMismatch},
		{"statement for another placement", func(r *admission.EnrollmentRequest) {
			r.Statement = admissiontest.Statement(t, pairB.Provider, pairB, admission.PlacementInProcess, declared)
		}, admission.CodeStatementMismatch},
		{"statement for another capability", func(r *admission.EnrollmentRequest) {
			wider := declared
			wider.Drivers = []string{"docker", "firecracker"}
			r.Declared = wider
		}, admission.CodeStatementMismatch},
		{"non-canonical statement", func(r *admission.EnrollmentRequest) {
			d, _ := admission.CapabilityDigest(declared)
			b, _ := json.MarshalIndent(admission.MaterializationStatement{Provider: pairB.Provider, ProviderRevision: pairB.Revision,
				MaterializationRevision: "m1", Placement: admission.PlacementRemote, CapabilityDigest: d, IssuedAt: "2026-12-01T00:00:00Z"}, "", " ")
			r.Statement, _ = admissiontest.Signer(t, pairB.Provider).SignPayload(admission.MaterializationPayloadType, b)
		}, admission.CodeStatementInvalid},
		{"invalid ceiling", func(r *admission.EnrollmentRequest) { r.Ceiling.Drivers = []string{"b", "a"} }, admission.CodeCapabilityInvalid},
	}
	for _, tt := range tests {
		r := good()
		tt.edit(&r)
		_, err := admission.Enroll(r)
		wantCode(t, tt.name, err, tt.code)
	}
	if _, err := admission.Enroll(good()); err != nil {
		t.Fatalf("good request: %v", err)
	}
	// A tampered statement: flip one byte of the signed payload.
	r := good()
	var env map[string]any
	_ = json.Unmarshal(r.Statement, &env)
	p := env["payload"].(string)
	env["payload"] = p[:10] + string(rune(p[10]^1)) + p[11:]
	r.Statement, _ = json.Marshal(env)
	_, err := admission.Enroll(r)
	wantCode(t, "tampered statement", err, admission.CodeStatementInvalid)
}

func TestMemoryWritebackSkipIsVisible(t *testing.T) {
	c := admissiontest.Capability(admission.ProviderAttested, checkfu.AdvisoryFilter)
	if _, ok := admissiontest.Enroll(t, pairB, admission.PlacementRemote, c, c).MemoryWriteback(); !ok {
		t.Errorf("list_dir provider skips writeback")
	}
	noList := c
	noList.ListDir = false
	skip, ok := admissiontest.Enroll(t, pairB, admission.PlacementRemote, c, noList).MemoryWriteback()
	if ok || skip.Code != admission.CodeMemoryWritebackSkipped || skip.Event != "memory_writeback_skipped" || skip.Provider != pairB || !strings.Contains(skip.Reason, "list_dir") {
		t.Errorf("ceiling without list_dir: skip %+v ok %v", skip, ok)
	}
	noMemory := noList
	noMemory.MountKinds = slices.DeleteFunc(slices.Clone(noMemory.MountKinds), func(s string) bool { return s == "memory" })
	if _, ok := admissiontest.Enroll(t, pairB, admission.PlacementRemote, c, noMemory).MemoryWriteback(); !ok {
		t.Errorf("no memory mounts: a skip recorded for nothing")
	}
}
