// Package dnstest runs a tiny authoritative DNS server on loopback, so that
// tests and examples own name resolution: they decide what a name resolves
// to, change the answer between queries (DNS rebinding), and count the
// queries a name received (to prove a denied name was never looked up).
//
// The server answers A and AAAA questions over UDP from a table the caller
// sets; every other name is NXDOMAIN, every other type has no answer.
// Answers carry TTL 0. It is a test double: it implements no recursion,
// no TCP, no DNSSEC and no compression of anything but what dnsmessage
// does by itself. The implementation is internal/dnsserver, which the
// conformance matrix also uses.
package dnstest
