// Package dnstest forwards to [github.com/checkfu/checkfu/egress/dnstest],
// the public home of the loopback DNS server that tests and examples use.
// It remains only for the tests that still import it; new code imports
// egress/dnstest.
package dnstest

import "github.com/checkfu/checkfu/egress/dnstest"

// Server is [dnstest.Server].
type Server = dnstest.Server

// Start is [dnstest.Start].
func Start() (*Server, error) { return dnstest.Start() }
