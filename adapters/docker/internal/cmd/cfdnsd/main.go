// Command cfdnsd is the Docker adapter tests' owned DNS server: it answers
// A questions over UDP from -a NAME=IP flags, NXDOMAIN for every other
// name, with TTL 0, and logs every question it receives to stdout as
// "query NAME TYPE" (one line each, the name without its final dot and
// TYPE as dnsmessage spells it, such as TypeA), so
// a test can prove a name never reached it.
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/netip"
	"os"
	"strings"

	"golang.org/x/net/dns/dnsmessage"
)

type records map[string]netip.Addr

func (r records) String() string { return fmt.Sprint(map[string]netip.Addr(r)) }

func (r records) Set(v string) error {
	name, ip, ok := strings.Cut(v, "=")
	a, err := netip.ParseAddr(ip)
	if !ok || err != nil || !a.Is4() {
		return fmt.Errorf("%q is not NAME=IPv4", v)
	}
	r[strings.ToLower(strings.TrimSuffix(name, "."))] = a
	return nil
}

func main() {
	recs := records{}
	listen := flag.String("listen", ":53", "UDP `address` to serve on")
	flag.Var(recs, "a", "answer `NAME=IP` (repeatable)")
	flag.Parse()
	pc, err := net.ListenPacket("udp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("listening on", pc.LocalAddr())
	buf := make([]byte, 1500)
	for {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			log.Fatal(err)
		}
		if out, ok := answer(buf[:n], recs); ok {
			pc.WriteTo(out, from)
		}
	}
}

func answer(q []byte, recs records) ([]byte, bool) {
	var p dnsmessage.Parser
	h, err := p.Start(q)
	if err != nil || h.Response {
		return nil, false
	}
	qs, err := p.AllQuestions()
	if err != nil || len(qs) != 1 {
		return nil, false
	}
	qq := qs[0]
	name := strings.ToLower(strings.TrimSuffix(qq.Name.String(), "."))
	fmt.Fprintf(os.Stdout, "query %s %s\n", name, qq.Type)
	rh := dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionDesired: h.RecursionDesired}
	addr, known := recs[name]
	if !known {
		rh.RCode = dnsmessage.RCodeNameError
	}
	b := dnsmessage.NewBuilder(nil, rh)
	b.StartQuestions()
	b.Question(qq)
	b.StartAnswers()
	if known && qq.Type == dnsmessage.TypeA {
		b.AResource(dnsmessage.ResourceHeader{Name: qq.Name, Class: dnsmessage.ClassINET, TTL: 0}, dnsmessage.AResource{A: addr.As4()})
	}
	out, err := b.Finish()
	return out, err == nil
}
