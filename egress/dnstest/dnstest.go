package dnstest

import "github.com/checkfu/checkfu/internal/dnsserver"

// A Server is a running loopback DNS server. Its methods are safe for
// concurrent use.
type Server = dnsserver.Server

// Start starts a server on a free UDP port of 127.0.0.1. Close stops it.
func Start() (*Server, error) { return dnsserver.Start() }
