package matrix_test

import (
	"context"
	"fmt"
	"os"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters/docker"
	"github.com/checkfu/checkfu/conformance/matrix"
)

func ExampleLookupProvider() {
	p, err := matrix.LookupProvider("checkfu:e2b-provider")
	if err != nil {
		fmt.Println(err)
		return
	}
	for f := range p.Cannot {
		fmt.Println("cannot hold:", f)
	}
	fmt.Println("runnable:", p.Runnable, "ceiling:", p.Ceiling())
	// Output:
	// cannot hold: authority_separation
	// runnable: false ceiling: advisory_filter
}

func ExampleMutants() {
	for _, m := range matrix.Mutants() {
		fmt.Printf("%s -> %s\n", m.Name, m.Fact)
	}
	// Output:
	// connect-time classification deleted -> connect_time_public_address
	// classification at resolve time only -> connect_time_public_address
	// redirects followed -> redirect_recheck
	// exact match loosened to suffix -> exact_destination_match
	// default route on the workload network -> default_deny
	// embedded DNS forwards for the workload -> default_deny
	// plane credential in the guard's environment -> authority_separation
	// header denylist emptied -> exact_destination_match
	// upstream failure answered as a denial -> connect_time_public_address
	// jail keeps the host's network namespace -> default_deny
	// relay dials the destination itself -> exact_destination_match
	// jail guard enforces no allowlist -> exact_destination_match
	// jail inherits the Runner's environment -> authority_separation
	// jail binds a host path writable -> authority_separation
}

// ExampleMutantsFor lists the mutants the jail's matrix must kill: the
// guard's and the jail provider's own.
func ExampleMutantsFor() {
	for _, m := range matrix.MutantsFor(matrix.JailProvider) {
		fmt.Printf("%s (%s)\n", m.Name, m.File)
	}
	// Output:
	// connect-time classification deleted (egress/dial.go)
	// classification at resolve time only (egress/dial.go)
	// redirects followed (egress/forward.go)
	// exact match loosened to suffix (egress/policy.go)
	// header denylist emptied (egress/forward.go)
	// upstream failure answered as a denial (egress/guard.go)
	// jail keeps the host's network namespace (adapters/jail/instance_linux.go)
	// relay dials the destination itself (adapters/jail/relay.go)
	// jail guard enforces no allowlist (adapters/jail/guard.go)
	// jail inherits the Runner's environment (adapters/jail/instance_linux.go)
	// jail binds a host path writable (adapters/jail/instance_linux.go)
}

// ExampleRun runs the matrix against the reference Docker topology. It
// needs a Docker engine and a static checkfu binary, so it prints nothing
// checked.
func ExampleRun() {
	ctx := context.Background()
	eng, err := docker.Connect(ctx, docker.Options{})
	if err != nil {
		return
	}
	defer eng.Close()
	canary := matrix.NewCanary()
	os.Setenv(matrix.PlaneCredentialEnv, canary) // where a Runner holds plane credentials
	rep, err := matrix.Run(ctx, matrix.Config{
		Engine: eng, Binary: "/usr/local/bin/checkfu", PlaneCredential: canary,
		Target: checkfu.ProviderRevision{Provider: matrix.DockerProvider, Revision: "1"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("held:", rep.Held())
}
