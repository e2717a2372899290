package admission_test

import (
	"fmt"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/admission"
)

// exampleVersion publishes a profile with the given network policy, for
// the examples below.
func exampleVersion(policy string) *admission.Published {
	p, err := admission.ParseProfile([]byte(`{"name": "p",
		"image": {"ref": "docker.io/library/debian:12", "digest": "sha256:1111111111111111111111111111111111111111111111111111111111111111"},
		"resources": {"cpu_millis": 1000, "memory_mib": 512}, "network_policy": ` + policy + `}`))
	if err != nil {
		panic(err)
	}
	v, err := admission.Publish(nil, p, nil)
	if err != nil {
		panic(err)
	}
	return v
}

// An allowlist with no stated requirement still needs advisory_filter,
// so a provider graded unsupported never runs one; a profile with no
// network ignores the grade.
func ExampleCheckEgress() {
	unsupported := admission.Candidate{Target: checkfu.ProviderRevision{Provider: "partner:vm", Revision: "7"}}
	for _, policy := range []string{
		`{"type": "allowlist", "allowed_hosts": ["api.example.com"]}`,
		`{"type": "none"}`,
	} {
		code, _ := checkfu.CodeOf(admission.CheckEgress(exampleVersion(policy), unsupported))
		fmt.Printf("%q\n", code)
	}
	// Output:
	// "egress_certification_unsatisfied"
	// ""
}

// Only the in-process Runner may claim runner_enforced; a remote
// provider can attest, never enforce on the Runner's behalf.
func ExampleCheckPlacement() {
	var c admission.RunnerProviderCapability
	c.Enforcement[admission.AxisImage] = admission.RunnerEnforced
	fmt.Println(admission.CheckPlacement(admission.PlacementInProcess, c))
	code, _ := checkfu.CodeOf(admission.CheckPlacement(admission.PlacementRemote, c))
	fmt.Println(code)
	// Output:
	// <nil>
	// authority_exceeds_placement
}

// The adversarial lane needs every enforcement axis realized; with one
// left unenforced the session is refused before it runs.
func ExampleCheckLane() {
	v := exampleVersion(`{"type": "none"}`)
	c := admission.Candidate{Target: checkfu.ProviderRevision{Provider: "partner:vm", Revision: "7"}}
	var eff admission.RunnerProviderCapability
	for i := range eff.Enforcement {
		eff.Enforcement[i] = admission.ProviderAttested
	}
	fmt.Println(admission.CheckLane(admission.LaneAdversarial, v, c, eff))

	eff.Enforcement[admission.AxisNetworkPolicy] = admission.Unenforced
	code, _ := checkfu.CodeOf(admission.CheckLane(admission.LaneAdversarial, v, c, eff))
	fmt.Println(code)
	// Output:
	// <nil>
	// lane_requirement_unmet
}
