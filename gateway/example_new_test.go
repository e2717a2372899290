package gateway_test

import (
	"fmt"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/gateway"
)

// New refuses a configuration with a part missing, saying what it needs:
// a gateway never runs with a check left out. The Gateway example shows
// a configured one at work.
func ExampleNew() {
	_, err := gateway.New(gateway.Config{})
	code, _ := checkfu.CodeOf(err)
	fmt.Println(code)
	fmt.Println(err)
	// Output:
	// config_invalid
	// refused: config_invalid: gateway: New needs an Authenticator, Assignments, a Registry, Leases, an Edge and an EvidenceSink
}

// NewPlane refuses a configuration with a part missing, saying what it
// needs, before it builds anything.
func ExampleNewPlane() {
	_, err := gateway.NewPlane(gateway.PlaneConfig{})
	code, _ := checkfu.CodeOf(err)
	fmt.Println(code)
	fmt.Println(err)
	// Output:
	// config_invalid
	// refused: config_invalid: gateway: NewPlane needs an Edge builder and an EvidenceSink
}
