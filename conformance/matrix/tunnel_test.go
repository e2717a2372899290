package matrix

import (
	"bytes"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

// syncBuffer is a log written by a server goroutine and read by the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer // guarded by mu
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// serveUDP runs serve on a fresh loopback UDP socket until the test ends,
// and returns its address.
func serveUDP(t *testing.T, serve func(net.PacketConn)) string {
	t.Helper()
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); serve(pc) }()
	t.Cleanup(func() { pc.Close(); <-done })
	return pc.LocalAddr().String()
}

// startOwnedDNS starts the matrix's owned DNS (serveDNS) on loopback,
// answering every name under tunnelZone with sentinel, and returns its
// address and its log.
func startOwnedDNS(t *testing.T, sentinelAddr netip.Addr) (string, *syncBuffer) {
	t.Helper()
	log := &syncBuffer{}
	z := &zone{all: answers{}, flip: answers{}, sentinel: sentinel{suffix: tunnelZone, addr: sentinelAddr}}
	addr := serveUDP(t, func(pc net.PacketConn) { serveDNS(pc, z, log) })
	return addr, log
}

// startEmbeddedDNS starts a stand-in for a container engine's embedded
// DNS on loopback: it forwards every question to upstream and relays the
// reply when upstream is set, and answers REFUSED otherwise.
func startEmbeddedDNS(t *testing.T, upstream string) string {
	t.Helper()
	return serveUDP(t, func(pc net.PacketConn) {
		buf := make([]byte, maxDatagram)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			q := append([]byte(nil), buf[:n]...)
			if upstream != "" {
				if reply, _ := exchangeUDP(upstream, q); reply != nil {
					pc.WriteTo(reply, from)
				}
				continue
			}
			var p dnsmessage.Parser
			h, err := p.Start(q)
			if err != nil {
				continue
			}
			qs, err := p.AllQuestions()
			if err != nil {
				continue
			}
			m := dnsmessage.Message{Header: dnsmessage.Header{ID: h.ID, Response: true, RCode: dnsmessage.RCodeRefused}, Questions: qs}
			if out, err := m.Pack(); err == nil {
				pc.WriteTo(out, from)
			}
		}
	})
}

// TestHostDNSTunnelLoopback runs the host_dns_tunnel case end to end on a
// loopback topology: the matrix's owned DNS, the workload's probe and the
// case's judge, with stand-ins for the embedded DNS of the workload and
// of the DNS control. The control's embedded DNS forwards to the owned
// DNS. The case passes when the workload's does not forward, goes red
// when the owned DNS is its upstream (the control topology), and is
// unestablished when the control saw no forward.
func TestHostDNSTunnelLoopback(t *testing.T) {
	tests := []struct {
		name                       string
		workloadFwd, controlFwd    bool
		want                       Verdict
		wantAsked, wantControlSeen bool
	}{
		{"the embedded DNS forwards nothing", false, true, Pass, false, true},
		{"the owned DNS is the workload's upstream", true, true, Fail, true, true},
		{"the control forwards nothing", false, false, Unestablished, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := fakeRun()
			r.nonce = NewCanary()[len("cfcanary-"):]
			owned, log := startOwnedDNS(t, r.at(r.outer, hostSentinel))
			upstream := func(fwd bool) string {
				if fwd {
					return owned
				}
				return ""
			}
			workload, control := startEmbeddedDNS(t, upstream(tt.workloadFwd)), startEmbeddedDNS(t, upstream(tt.controlFwd))
			s := specNamed(t, r, "host_dns_tunnel")
			c := s.checks[0]
			c.Addr = workload
			r.seen[c.ID] = runCheck(c)
			r.dnsControl = runCheck(Check{ID: "dd-dns-control", Kind: "dns", Addr: control, Name: r.controlName()})
			for _, line := range strings.Split(log.String(), "\n") {
				if q, ok := strings.CutPrefix(line, "query "); ok {
					r.queries = append(r.queries, q)
				}
			}
			got, why, _ := s.judge(r, s)
			t.Logf("%s: %s; owned DNS log %q; workload %+v; control %+v", got, why, r.queries, r.seen[c.ID].DNS, r.dnsControl.DNS)
			if got != tt.want {
				t.Errorf("verdict %s (%s), want %s", got, why, tt.want)
			}
			if r.asked(c.Name) != tt.wantAsked || r.asked(r.controlName()) != tt.wantControlSeen {
				t.Errorf("the owned DNS saw the workload's name %v and the control's %v, want %v and %v", r.asked(c.Name), r.asked(r.controlName()), tt.wantAsked, tt.wantControlSeen)
			}
			// The workload's reply is decoded either way: REFUSED from
			// its own resolver, or the sentinel through the forward.
			a := r.seen[c.ID].DNS
			switch {
			case a == nil:
				t.Errorf("the workload's reply was not recorded: %+v", r.seen[c.ID])
			case tt.workloadFwd && (len(a.A) != 1 || a.A[0] != r.at(r.outer, hostSentinel).String()):
				t.Errorf("forwarded: the workload got %+v, want the sentinel", a)
			case !tt.workloadFwd && a.RCode != dnsmessage.RCodeRefused.String():
				t.Errorf("not forwarded: the workload got %+v, want REFUSED", a)
			}
		})
	}
}

// reply builds a response to q with rcode and n A records for the name.
func reply(t *testing.T, q []byte, rcode dnsmessage.RCode, n int) []byte {
	t.Helper()
	var p dnsmessage.Parser
	h, err := p.Start(q)
	if err != nil {
		t.Fatal(err)
	}
	qs, err := p.AllQuestions()
	if err != nil {
		t.Fatal(err)
	}
	m := dnsmessage.Message{Header: dnsmessage.Header{ID: h.ID, Response: true, RCode: rcode}, Questions: qs}
	for i := 0; i < n; i++ {
		m.Answers = append(m.Answers, dnsmessage.Resource{
			Header: dnsmessage.ResourceHeader{Name: qs[0].Name, Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET},
			Body:   &dnsmessage.AResource{A: [4]byte{198, 18, 21, byte(i)}},
		})
	}
	b, err := m.Pack()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDecodeAnswer pins what the probe reads from a reply, and the
// maxDNSAnswers bound at its edge.
func TestDecodeAnswer(t *testing.T) {
	q, err := dnsQuestion("n0nce.tunnel.test")
	if err != nil {
		t.Fatal(err)
	}
	other, _ := dnsQuestion("other.tunnel.test")
	notResponse := append([]byte(nil), reply(t, q, dnsmessage.RCodeSuccess, 0)...)
	notResponse[2] &^= 0x80
	otherID := append([]byte(nil), reply(t, q, dnsmessage.RCodeSuccess, 1)...)
	otherID[0] ^= 0xff
	tests := []struct {
		name    string
		reply   []byte
		rcode   string
		a       int
		records int
		err     bool
	}{
		{"refused", reply(t, q, dnsmessage.RCodeRefused, 0), "RCodeRefused", 0, 0, false},
		{"nxdomain", reply(t, q, dnsmessage.RCodeNameError, 0), "RCodeNameError", 0, 0, false},
		{"one answer", reply(t, q, dnsmessage.RCodeSuccess, 1), "RCodeSuccess", 1, 1, false},
		{"at the bound", reply(t, q, dnsmessage.RCodeSuccess, maxDNSAnswers), "RCodeSuccess", maxDNSAnswers, maxDNSAnswers, false},
		{"past the bound", reply(t, q, dnsmessage.RCodeSuccess, maxDNSAnswers+1), "RCodeSuccess", maxDNSAnswers, maxDNSAnswers, true},
		{"another question", reply(t, other, dnsmessage.RCodeSuccess, 1), "", 0, 0, true},
		{"not a response", notResponse, "", 0, 0, true},
		{"another ID", otherID, "", 0, 0, true},
		{"garbage", []byte("ping"), "", 0, 0, true},
		{"empty", nil, "", 0, 0, true},
	}
	for _, tt := range tests {
		got := decodeAnswer(q, tt.reply)
		if got.RCode != tt.rcode || len(got.A) != tt.a || got.Records != tt.records || (got.Err != "") != tt.err {
			t.Errorf("%s: decodeAnswer = %+v, want rcode %q, %d A, %d records, error %v", tt.name, got, tt.rcode, tt.a, tt.records, tt.err)
		}
	}
	// The name is matched without regard to case, as resolvers may
	// randomise it.
	upper, _ := dnsQuestion("N0NCE.Tunnel.TEST")
	if got := decodeAnswer(q, reply(t, upper, dnsmessage.RCodeSuccess, 1)); got.Err != "" || len(got.A) != 1 {
		t.Errorf("case-varied reply: %+v", got)
	}
}

// FuzzDecodeAnswer holds decodeAnswer's invariants on any reply: it
// returns, an error-free reading has a response code, and no reading
// holds more than maxDNSAnswers records.
func FuzzDecodeAnswer(f *testing.F) {
	q, err := dnsQuestion("n0nce.tunnel.test")
	if err != nil {
		f.Fatal(err)
	}
	for _, rc := range []dnsmessage.RCode{dnsmessage.RCodeSuccess, dnsmessage.RCodeNameError, dnsmessage.RCodeRefused} {
		m := dnsmessage.Message{Header: dnsmessage.Header{ID: 0x4346, Response: true, RCode: rc}}
		var p dnsmessage.Parser
		p.Start(q)
		m.Questions, _ = p.AllQuestions()
		if rc == dnsmessage.RCodeSuccess {
			m.Answers = []dnsmessage.Resource{{Header: dnsmessage.ResourceHeader{Name: m.Questions[0].Name, Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET}, Body: &dnsmessage.AResource{A: [4]byte{198, 18, 21, 99}}}}
		}
		b, err := m.Pack()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("ping"))
	f.Fuzz(func(t *testing.T, b []byte) {
		a := decodeAnswer(q, b)
		if a.Err == "" && a.RCode == "" {
			t.Errorf("an error-free reading with no response code: %+v", a)
		}
		if a.Records > maxDNSAnswers || len(a.A) > a.Records {
			t.Errorf("%d records, %d A: past the bound %d", a.Records, len(a.A), maxDNSAnswers)
		}
	})
}
