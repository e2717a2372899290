// Package dnsserver runs a tiny authoritative DNS server on loopback, so that
// tests and examples own name resolution: they decide what a name resolves
// to, change the answer between queries (DNS rebinding), and count the
// queries a name received (to prove a denied name was never looked up).
//
// The server answers A and AAAA questions over UDP from a table the caller
// sets; every other name is NXDOMAIN, every other type has no answer.
// Answers carry TTL 0. It is a test double: it implements no recursion,
// no TCP, no DNSSEC and no compression of anything but what dnsmessage
// does by itself.
//
// egress/dnstest re-exports it for integrators' tests; it lives here, in a
// non-test package, so that non-test code (the conformance matrix) uses it
// without importing a *test package.
package dnsserver

import (
	"errors"
	"net"
	"net/netip"
	"strings"
	"sync"

	"golang.org/x/net/dns/dnsmessage"
)

// A Server is a running loopback DNS server. Its methods are safe for
// concurrent use.
type Server struct {
	conn net.PacketConn
	done chan struct{}

	mu      sync.Mutex
	answers map[string]func(n int) []netip.Addr // guarded by mu; key: lower-case name, no trailing dot
	queries map[string]int                      // guarded by mu; questions asked per name, every type
	log     []string                            // guarded by mu; every name asked, in order
}

// Start starts a server on a free UDP port of 127.0.0.1. Close stops it.
func Start() (*Server, error) {
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{
		conn:    conn,
		done:    make(chan struct{}),
		answers: map[string]func(int) []netip.Addr{},
		queries: map[string]int{},
	}
	go s.serve()
	return s, nil
}

// Addr returns the server's "host:port".
func (s *Server) Addr() string { return s.conn.LocalAddr().String() }

// Set makes name resolve to addrs (IPv4 addresses answer A questions, IPv6
// addresses AAAA questions). With no addrs the name exists but has no
// address.
func (s *Server) Set(name string, addrs ...netip.Addr) {
	s.SetFunc(name, func(int) []netip.Addr { return addrs })
}

// SetFunc makes name resolve to f(n), where n counts the A questions for
// name already answered (0 for the first). Use it to change the answer
// between queries, as a rebinding attacker does.
func (s *Server) SetFunc(name string, f func(n int) []netip.Addr) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answers[key(name)] = f
}

// Queries returns how many questions (of any type) name has received.
func (s *Server) Queries(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.queries[key(name)]
}

// Log returns every name asked about, in order, one entry per question.
func (s *Server) Log() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.log...)
}

// Close stops the server and waits for it to finish.
func (s *Server) Close() error {
	err := s.conn.Close()
	<-s.done
	return err
}

func key(name string) string { return strings.ToLower(strings.TrimSuffix(name, ".")) }

func (s *Server) serve() {
	defer close(s.done)
	buf := make([]byte, 1500)
	for {
		n, from, err := s.conn.ReadFrom(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		if resp, ok := s.answer(buf[:n]); ok {
			s.conn.WriteTo(resp, from) //nolint:errcheck // a lost answer is a timeout for the client
		}
	}
}

// answer builds the response to one query message.
func (s *Server) answer(req []byte) ([]byte, bool) {
	var p dnsmessage.Parser
	h, err := p.Start(req)
	if err != nil || h.Response {
		return nil, false
	}
	q, err := p.Question()
	if err != nil {
		return nil, false
	}
	name := key(q.Name.String())

	s.mu.Lock()
	f, known := s.answers[name]
	count := 0
	if q.Type == dnsmessage.TypeA {
		count = s.queries[name+"\x00A"]
		s.queries[name+"\x00A"]++
	}
	s.queries[name]++
	s.log = append(s.log, name)
	s.mu.Unlock()

	rh := dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionDesired: h.RecursionDesired, RecursionAvailable: true}
	if !known {
		rh.RCode = dnsmessage.RCodeNameError
	}
	b := dnsmessage.NewBuilder(nil, rh)
	b.EnableCompression()
	if b.StartQuestions() != nil || b.Question(q) != nil || b.StartAnswers() != nil {
		return nil, false
	}
	if known {
		for _, a := range f(count) {
			rr := dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 0}
			switch {
			case a.Is4() && q.Type == dnsmessage.TypeA:
				if b.AResource(rr, dnsmessage.AResource{A: a.As4()}) != nil {
					return nil, false
				}
			case a.Is6() && !a.Is4In6() && q.Type == dnsmessage.TypeAAAA:
				if b.AAAAResource(rr, dnsmessage.AAAAResource{AAAA: a.As16()}) != nil {
					return nil, false
				}
			}
		}
	}
	resp, err := b.Finish()
	return resp, err == nil
}
