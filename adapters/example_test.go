package adapters_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/admission"
	"github.com/checkfu/checkfu/egress"
)

// The Runner builds its state from the provider's Description and the
// spec it asked for, and matches each process's evidence against it.
func ExampleMatchEvidence() {
	d := adapters.Description{
		Identity:                checkfu.ProviderRevision{Provider: "partner:vm", Revision: "7"},
		MaterializationRevision: "vm-7",
		Placement:               admission.PlacementRemote,
	}
	spec := adapters.InstanceSpec{ID: "i-1", Platform: "linux/amd64", NetworkMode: "none"}
	held := adapters.HeldFor(d, spec)

	ev := adapters.Evidence{Label: checkfu.LabelIsolated, Instance: "i-1", Provider: "partner:vm", ProviderRevision: "7",
		MaterializationRevision: "vm-7", Platform: "linux/amd64", NetworkMode: "none"}
	m := adapters.MatchEvidence(held, ev)
	fmt.Println(m.OK(), m.Assurance)

	ev.NetworkMode, ev.RootImage = "unrestricted", "busybox:latest"
	fmt.Println(adapters.MatchEvidence(held, ev).Err())
	// Output:
	// true identity_only
	// refused: evidence_mismatch: adapters: evidence fails root_image, network_mode (assurance identity_only)
}

// Check refuses a description a Runner cannot admit; Grade caps the
// advertised grade.
func ExampleCheck() {
	d := adapters.Description{
		Identity:                checkfu.ProviderRevision{Provider: "partner:vm", Revision: "7"},
		MaterializationRevision: "vm-7",
		Placement:               admission.PlacementRemote,
	}
	d.Capability.EgressCertification = checkfu.SecurityBoundary
	fmt.Println(adapters.Check(d), adapters.Grade(d, nil))

	d.Capability.Enforcement[admission.AxisImage] = admission.RunnerEnforced
	fmt.Println(errors.Is(adapters.Check(d), adapters.CodeProviderInvalid))
	// Output:
	// <nil> advisory_filter
	// true
}

// A provider declares what its vendor's API lacks; CheckACP refuses
// one that cannot carry an ACP agent, while Check still admits it.
func ExampleCheckACP() {
	d := adapters.Description{
		Identity:                checkfu.ProviderRevision{Provider: "partner:cmd", Revision: "1"},
		MaterializationRevision: "cmd-1",
		Placement:               admission.PlacementRemote,
		Gaps:                    adapters.Gaps{NoStdin: true, KillLeaderOnly: true},
	}
	fmt.Println(adapters.Check(d))
	fmt.Println(adapters.CheckACP(d))
	// Output:
	// <nil>
	// refused: stdio_insufficient: adapters: partner:cmd@1 cannot carry an ACP agent: its processes take no stdin
}

// An optional member is called through the package, which consults the
// declaration first.
func ExampleListDir() {
	p := memberProvider{} // declares no optional member
	_, err := adapters.ListDir(context.Background(), p, fullInstance{}, "/")
	fmt.Println(errors.Is(err, adapters.CodeMemberUndeclared))
	// Output: true
}

// A Slot is an instance's one-process reservation.
func ExampleSlot() {
	var s adapters.Slot
	fmt.Println(s.Acquire())
	fmt.Println(s.Acquire())
	s.Release()
	fmt.Println(s.Acquire())
	// Output:
	// <nil>
	// refused: process_already_open: adapters: the instance's process has not been reaped
	// <nil>
}

// A remote provider's evidence arrives as JSON; it is parsed strictly,
// then matched.
func ExampleParseEvidence() {
	_, err := adapters.ParseEvidence([]byte(`{"instance": "i-1", "Instance": "i-2"}`))
	fmt.Println(errors.Is(err, adapters.CodeEvidenceInvalid))
	ev, err := adapters.ParseEvidence([]byte(`{"instance": "i-1", "label": "isolated", "enforcement": {"image": "provider_attested"}}`))
	fmt.Println(ev.Instance, ev.Label, ev.Enforcement[admission.AxisImage], err)
	// Output:
	// true
	// i-1 isolated provider_attested <nil>
}

// An allowlist instance spec carries the exact hosts the Runner
// admitted; without them it is refused before it reaches a provider.
func ExampleCheckSpec() {
	spec := adapters.InstanceSpec{ID: "s1", NetworkMode: "allowlist"}
	fmt.Println(errors.Is(adapters.CheckSpec(spec), checkfu.CodeConfigInvalid))
	spec.AllowedHosts = []egress.HostPort{{Host: "proxy.golang.org", Port: 443}}
	fmt.Println(adapters.CheckSpec(spec))
	// Output:
	// true
	// <nil>
}
