package matrix

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/checkfu/checkfu/adapters/docker"
	"github.com/checkfu/checkfu/egress"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/net/dns/dnsmessage"
)

// The matrix's only image content is the checkfu binary: it is the guard,
// and, through `checkfu matrix tool NAME`, the owned DNS server, the live
// listeners and the workload's probe. This file holds those helpers.

// RunTool runs one of the matrix's in-container helpers and returns its
// exit status: "dnsd" (the owned DNS server), "listen" (live HTTP
// listeners that record every request they receive), "probe" (the
// workload's probe: checks read as JSON on stdin, observations written as
// JSON on stdout), "ask" (the DNS control's probe: one DNS question,
// logged), "mcp SOCKET TOOL" (a capability-enabled workload: it
// lists the broker's tools and calls TOOL, writing a [BrokerSeen], then
// waits for stdin to end) or "dockerproc" (the provider side of a Docker
// process opened over acp/wire: it runs its argv in a fresh
// capability-enabled instance and passes stdio through). `checkfu matrix tool NAME ARGS` calls it; nothing else
// should.
func RunTool(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "matrix tool: want dnsd, listen, probe, ask, mcp or dockerproc")
		return 2
	}
	var err error
	switch args[0] {
	case "dnsd":
		err = dnsd(args[1:], stdout)
	case "listen":
		err = listen(args[1:], stdout)
	case "probe":
		err = probe(stdin, stdout)
	case "ask":
		err = ask(args[1:], stdout)
	case "mcp":
		err = mcpCall(args[1:], stdin, stdout)
	case "dockerproc":
		err = dockerProc(args[1:], stdin, stdout, stderr)
	case "jailproc":
		err = jailProc(args[1:], stdin, stdout, stderr)
	default:
		err = fmt.Errorf("unknown tool %q", args[0])
	}
	if err != nil {
		fmt.Fprintln(stderr, "matrix tool:", err)
		return 1
	}
	return 0
}

// answers maps a lower-case name without its final dot to its A records.
type answers map[string][]netip.Addr

func (a answers) String() string { return fmt.Sprint(map[string][]netip.Addr(a)) }

func (a answers) Set(v string) error {
	name, ips, ok := strings.Cut(v, "=")
	if !ok {
		return fmt.Errorf("%q is not NAME=IP[,IP]", v)
	}
	for _, s := range strings.Split(ips, ",") {
		ip, err := netip.ParseAddr(s)
		if err != nil || !ip.Is4() {
			return fmt.Errorf("%q is not NAME=IPv4[,IPv4]", v)
		}
		k := strings.ToLower(strings.TrimSuffix(name, "."))
		a[k] = append(a[k], ip)
	}
	return nil
}

// A zone is what the owned DNS answers.
type zone struct {
	all, flip answers
	// sentinel answers every A question for a name under one suffix
	// with one address: a name only this server can answer, so a
	// workload that gets the address back was answered by it.
	sentinel sentinel
}

// sentinel is -sentinel SUFFIX=IP.
type sentinel struct {
	suffix string // lower case, no final dot; empty: none
	addr   netip.Addr
}

func (s *sentinel) String() string {
	if s.suffix == "" {
		return ""
	}
	return s.suffix + "=" + s.addr.String()
}

func (s *sentinel) Set(v string) error {
	suffix, ip, ok := strings.Cut(v, "=")
	a, err := netip.ParseAddr(ip)
	if !ok || suffix == "" || err != nil || !a.Is4() {
		return fmt.Errorf("%q is not SUFFIX=IPv4", v)
	}
	s.suffix, s.addr = strings.ToLower(strings.Trim(suffix, ".")), a
	return nil
}

// under reports whether name (lower case, no final dot) is under the
// sentinel's suffix.
func (s sentinel) under(name string) bool {
	return s.suffix != "" && strings.HasSuffix(name, "."+s.suffix)
}

// dnsd is the owned DNS server. -a NAME=IP[,IP] answers every A question
// for NAME with all the addresses; -flip NAME=IP,IP answers the n-th A
// question for NAME with the (n mod 2)-th address, so an answer flips
// between two addresses from one question to the next; -sentinel
// SUFFIX=IP answers every A question for a name under SUFFIX with IP.
// Every answer has TTL 0; AAAA questions for a known name get an empty
// answer; other names NXDOMAIN. Every question is logged as "query NAME
// TYPE".
func dnsd(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("dnsd", flag.ContinueOnError)
	z := &zone{all: answers{}, flip: answers{}}
	listenAddr := fs.String("listen", ":53", "UDP address")
	fs.Var(z.all, "a", "NAME=IP[,IP]")
	fs.Var(z.flip, "flip", "NAME=IP,IP")
	fs.Var(&z.sentinel, "sentinel", "SUFFIX=IP")
	if err := fs.Parse(args); err != nil {
		return err
	}
	pc, err := net.ListenPacket("udp", *listenAddr)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, "listening on", pc.LocalAddr())
	return serveDNS(pc, z, stdout)
}

// serveDNS answers questions on pc from z, logging each to log, until pc
// is closed.
func serveDNS(pc net.PacketConn, z *zone, log io.Writer) error {
	counts := map[string]int{}
	buf := make([]byte, 1500)
	for {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			return err
		}
		var p dnsmessage.Parser
		h, err := p.Start(buf[:n])
		if err != nil || h.Response {
			continue
		}
		q, err := p.Question()
		if err != nil {
			continue
		}
		name := strings.ToLower(strings.TrimSuffix(q.Name.String(), "."))
		fmt.Fprintf(log, "query %s %s\n", name, q.Type)
		var addrs []netip.Addr
		known := false
		if f, ok := z.flip[name]; ok {
			known = true
			if q.Type == dnsmessage.TypeA {
				addrs = []netip.Addr{f[counts[name]%len(f)]}
				counts[name]++
			}
		} else if a, ok := z.all[name]; ok {
			known = true
			if q.Type == dnsmessage.TypeA {
				addrs = a
			}
		} else if z.sentinel.under(name) {
			known = true
			if q.Type == dnsmessage.TypeA {
				addrs = []netip.Addr{z.sentinel.addr}
			}
		}
		rh := dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionDesired: h.RecursionDesired}
		if !known {
			rh.RCode = dnsmessage.RCodeNameError
		}
		b := dnsmessage.NewBuilder(nil, rh)
		b.EnableCompression()
		b.StartQuestions()
		b.Question(q)
		b.StartAnswers()
		for _, a := range addrs {
			b.AResource(dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 0}, dnsmessage.AResource{A: a.As4()})
		}
		if out, err := b.Finish(); err == nil {
			pc.WriteTo(out, from)
		}
	}
}

// A Hit is one request a live listener received.
type Hit struct {
	Listener string              `json:"listener"`
	From     string              `json:"from"`
	Method   string              `json:"method"`
	Host     string              `json:"host"`
	Path     string              `json:"path"`
	Header   map[string][]string `json:"header,omitempty"`
}

// hitPrefix starts every line a listener logs for a request.
const hitPrefix = "hit "

// listen serves HTTP on every -http address and logs each request as
// "hit JSON". GET /r/CODE?to=URL answers CODE with Location URL; every
// other request answers 200 "ok".
func listen(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("listen", flag.ContinueOnError)
	var addrs multi
	fs.Var(&addrs, "http", "address (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var mu sync.Mutex
	errs := make(chan error, len(addrs))
	for _, a := range addrs {
		ln, err := net.Listen("tcp", a)
		if err != nil {
			return err
		}
		srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: hitHandler(a, func(h Hit) {
			line, _ := json.Marshal(h)
			mu.Lock()
			fmt.Fprintf(stdout, "%s%s\n", hitPrefix, line)
			mu.Unlock()
		})}
		go func() { errs <- srv.Serve(ln) }()
	}
	fmt.Fprintln(stdout, "listening on", strings.Join(addrs, " "))
	return <-errs
}

// hitHandler records every request it receives as a Hit of the
// listener name. GET /r/CODE?to=URL answers CODE with Location URL; every
// other request answers 200 "ok".
func hitHandler(name string, record func(Hit)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		record(Hit{Listener: name, From: r.RemoteAddr, Method: r.Method, Host: r.Host, Path: r.URL.RequestURI(), Header: r.Header})
		if code, ok := strings.CutPrefix(r.URL.Path, "/r/"); ok {
			var c int
			fmt.Sscan(code, &c)
			if c >= 300 && c < 400 {
				w.Header().Set("Location", r.URL.Query().Get("to"))
				w.WriteHeader(c)
				return
			}
		}
		io.WriteString(w, "ok\n")
	})
}

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

// A Check is one thing the workload's probe tries.
type Check struct {
	// ID names the check in the observations.
	ID string `json:"id"`
	// Kind is "http" (a request through Proxy), "connect" (a CONNECT
	// tunnel through Proxy to the authority URL, then GET /c/ID through
	// it), "tcp" (connect to Addr),
	// "udp" (send to Addr, wait for an answer) or "dns" (ask Addr for
	// Name's A record).
	Kind string `json:"kind"`
	// Proxy is the guard's ip:port, for http.
	Proxy string `json:"proxy,omitempty"`
	// URL is the absolute-form request target, written as given.
	URL string `json:"url,omitempty"`
	// Host is the Host header; empty means URL's authority.
	Host string `json:"host,omitempty"`
	// Header holds extra request headers, written as given.
	Header map[string]string `json:"header,omitempty"`
	// Follow makes the probe follow up to three redirects through the
	// proxy, as a workload's HTTP client would.
	Follow bool `json:"follow,omitempty"`
	// Repeat sends the request this many times, one after another (0 is 1).
	Repeat int `json:"repeat,omitempty"`
	// Addr is the ip:port of tcp, udp and dns checks.
	Addr string `json:"addr,omitempty"`
	// Name is the name a dns check asks for.
	Name string `json:"name,omitempty"`
}

// A Step is one request the probe sent and what came back.
type Step struct {
	Target   string `json:"target"`
	Status   int    `json:"status,omitempty"`
	Refusal  string `json:"refusal,omitempty"`  // the Checkfu-Refusal header
	Upstream string `json:"upstream,omitempty"` // the upstream failure header
	Location string `json:"location,omitempty"`
	Err      string `json:"err,omitempty"`
}

// A Seen is what the workload saw for one check.
type Seen struct {
	ID string `json:"id"`
	// Reached reports whether anything answered: an HTTP response, an
	// open connection, a UDP or DNS answer.
	Reached bool   `json:"reached"`
	Detail  string `json:"detail,omitempty"`
	Steps   []Step `json:"steps,omitempty"`
	// DNS is the decoded reply of a dns check; nil when none came.
	DNS *DNSAnswer `json:"dns,omitempty"`
}

// probeDeadline bounds each direct network operation of the probe: what
// a blocked check costs.
const probeDeadline = 2 * time.Second

// httpDeadline bounds one exchange through the guard, which always
// answers (a refusal, an upstream failure or the destination's answer);
// it is generous so that a loaded machine does not turn an answer into a
// timeout.
const httpDeadline = 15 * time.Second

// askedLine ends what ask logs: the observation is written.
const askedLine = "asked"

// seenPrefix starts the line on which ask logs its observation.
const seenPrefix = "seen "

// askLinger is how long ask lives after it has logged its observation:
// the container stays running until it is removed, so the wait for
// askedLine never meets an exited container.
const askLinger = 10 * time.Minute

// ask is the DNS control's probe: it asks -server for -name's A record
// once, as a dns check, logs "seen JSON" and askedLine, then lingers.
func ask(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("ask", flag.ContinueOnError)
	server := fs.String("server", "127.0.0.11:53", "DNS server ip:port")
	name := fs.String("name", "", "the name to ask")
	id := fs.String("id", "", "the check's ID")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *name == "" || *id == "" {
		return fmt.Errorf("ask: want -id and -name")
	}
	line, err := json.Marshal(runCheck(Check{ID: *id, Kind: "dns", Addr: *server, Name: *name}))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s%s\n%s\n", seenPrefix, line, askedLine)
	time.Sleep(askLinger)
	return nil
}

// probe runs the checks read from stdin, all at once, and writes the
// observations in the same order.
func probe(stdin io.Reader, stdout io.Writer) error {
	var checks []Check
	if err := json.NewDecoder(stdin).Decode(&checks); err != nil {
		return fmt.Errorf("probe: reading checks: %w", err)
	}
	out := make([]Seen, len(checks))
	var wg sync.WaitGroup
	for i, c := range checks {
		wg.Add(1)
		go func() { defer wg.Done(); out[i] = runCheck(c) }()
	}
	wg.Wait()
	return json.NewEncoder(stdout).Encode(out)
}

func runCheck(c Check) Seen {
	s := Seen{ID: c.ID}
	switch c.Kind {
	case "http":
		n := max(c.Repeat, 1)
		for i := 0; i < n; i++ {
			target, host := c.URL, c.Host
			for hop := 0; hop < 4; hop++ {
				st := httpVia(c.Proxy, target, host, c.Header)
				s.Steps = append(s.Steps, st)
				s.Reached = s.Reached || st.Status != 0
				if !c.Follow || st.Status < 300 || st.Status > 399 || st.Location == "" || hop == 3 {
					break
				}
				target, host = st.Location, ""
			}
		}
	case "connect":
		s.Steps = connectVia(c.Proxy, c.URL, "/c/"+c.ID)
		s.Reached = len(s.Steps) > 0 && s.Steps[0].Status != 0
	case "tcp":
		c, err := net.DialTimeout("tcp", c.Addr, probeDeadline)
		if err == nil {
			c.Close()
			s.Reached = true
		} else {
			s.Detail = errWord(err)
		}
	case "udp":
		reply, detail := exchangeUDP(c.Addr, []byte("ping"))
		s.Reached, s.Detail = reply != nil, detail
	case "dns":
		q, err := dnsQuestion(c.Name)
		if err != nil {
			s.Detail = err.Error()
			break
		}
		reply, detail := exchangeUDP(c.Addr, q)
		s.Reached, s.Detail = reply != nil, detail
		if reply != nil {
			a := decodeAnswer(q, reply)
			s.DNS = &a
		}
	default:
		s.Detail = "unknown kind " + c.Kind
	}
	return s
}

// httpVia writes one absolute-form GET for target to the proxy, byte for
// byte as given, and reads the answer's head.
func httpVia(proxy, target, host string, header map[string]string) Step {
	st := Step{Target: target}
	if host == "" {
		if u, err := url.Parse(target); err == nil {
			host = u.Host
		} else if i := strings.Index(target, "://"); i >= 0 {
			host, _, _ = strings.Cut(target[i+3:], "/")
		}
	}
	conn, err := net.DialTimeout("tcp", proxy, probeDeadline)
	if err != nil {
		st.Err = errWord(err)
		return st
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(httpDeadline))
	var b strings.Builder
	fmt.Fprintf(&b, "GET %s HTTP/1.1\r\nHost: %s\r\n", target, host)
	keys := make([]string, 0, len(header))
	for k := range header {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s: %s\r\n", k, header[k])
	}
	b.WriteString("Connection: close\r\n\r\n")
	if _, err := io.WriteString(conn, b.String()); err != nil {
		st.Err = errWord(err)
		return st
	}
	// The write side stays open until the answer arrives: a half-close
	// cancels the guard's request context.
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		st.Err = errWord(err)
		return st
	}
	resp.Body.Close()
	st.Status = resp.StatusCode
	st.Refusal = resp.Header.Get(egress.RefusalHeader)
	st.Upstream = resp.Header.Get(egress.UpstreamFailureHeader)
	st.Location = resp.Header.Get("Location")
	return st
}

// connectVia opens a CONNECT tunnel to authority through the proxy and,
// when it opens, sends GET path through it: one step for the CONNECT and
// one for the tunnelled request.
func connectVia(proxy, authority, path string) []Step {
	st := Step{Target: "CONNECT " + authority}
	conn, err := net.DialTimeout("tcp", proxy, probeDeadline)
	if err != nil {
		st.Err = errWord(err)
		return []Step{st}
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(httpDeadline))
	if _, err := fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", authority, authority); err != nil {
		st.Err = errWord(err)
		return []Step{st}
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		st.Err = errWord(err)
		return []Step{st}
	}
	st.Status = resp.StatusCode
	st.Refusal = resp.Header.Get(egress.RefusalHeader)
	st.Upstream = resp.Header.Get(egress.UpstreamFailureHeader)
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return []Step{st}
	}
	in := Step{Target: "GET " + path}
	if _, err := fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", path, authority); err != nil {
		in.Err = errWord(err)
		return []Step{st, in}
	}
	if r2, err := http.ReadResponse(br, nil); err != nil {
		in.Err = errWord(err)
	} else {
		r2.Body.Close()
		in.Status = r2.StatusCode
	}
	return []Step{st, in}
}

// exchangeUDP sends msg to addr and returns the first datagram that
// comes back (at most maxDatagram bytes), or nil and why none came.
func exchangeUDP(addr string, msg []byte) ([]byte, string) {
	c, err := net.Dial("udp", addr)
	if err != nil {
		return nil, errWord(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(probeDeadline))
	if _, err := c.Write(msg); err != nil {
		return nil, errWord(err)
	}
	buf := make([]byte, maxDatagram)
	n, err := c.Read(buf)
	if err != nil {
		return nil, errWord(err)
	}
	return buf[:n], ""
}

// maxDatagram bounds the bytes of one reply the probe reads: a DNS
// answer over UDP without EDNS is at most 512 bytes, and this is the
// Ethernet MTU.
const maxDatagram = 1500

func dnsQuestion(name string) ([]byte, error) {
	n, err := dnsmessage.NewName(strings.TrimSuffix(name, ".") + ".")
	if err != nil {
		return nil, err
	}
	m := dnsmessage.Message{Header: dnsmessage.Header{ID: 0x4346, RecursionDesired: true},
		Questions: []dnsmessage.Question{{Name: n, Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET}}}
	return m.Pack()
}

// errWord names a network error by its kind, in one word.
func errWord(err error) string {
	s := err.Error()
	for _, w := range []string{"timeout", "refused", "no route", "unreachable", "reset", "EOF"} {
		if strings.Contains(s, w) {
			return strings.ReplaceAll(w, " ", "_")
		}
	}
	return "error"
}

// A BrokerSeen is what a capability-enabled workload saw of the broker.
type BrokerSeen struct {
	Tools   []string `json:"tools"`
	IsError bool     `json:"is_error"`
	Text    string   `json:"text"`
	Error   string   `json:"error,omitempty"`
}

// mcpCall speaks MCP to the broker's socket, lists its tools and calls
// one, with no arguments.
func mcpCall(args []string, stdin io.Reader, stdout io.Writer) error {
	if len(args) != 2 {
		return fmt.Errorf("mcp: want SOCKET TOOL")
	}
	var seen BrokerSeen
	err := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := net.Dial("unix", args[0])
		if err != nil {
			return err
		}
		client := mcp.NewClient(&mcp.Implementation{Name: "checkfu-matrix", Version: "v0"}, nil)
		cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: conn, Writer: conn}, nil)
		if err != nil {
			return err
		}
		defer cs.Close()
		tools, err := cs.ListTools(ctx, nil)
		if err != nil {
			return err
		}
		for _, t := range tools.Tools {
			seen.Tools = append(seen.Tools, t.Name)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: args[1], Arguments: map[string]any{}})
		if err != nil {
			return err
		}
		seen.IsError = res.IsError
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				seen.Text += tc.Text
			}
		}
		return nil
	}()
	if err != nil {
		seen.Error = err.Error()
	}
	if err := json.NewEncoder(stdout).Encode(seen); err != nil {
		return err
	}
	// The Runner inspects the container while it lives, then ends stdin.
	io.Copy(io.Discard, stdin)
	return nil
}

// containerLine starts the first stderr line of dockerproc: the
// container's ID, for the Runner's inspection.
const containerLine = "container "

// dockerProc runs argv (after the flags) in a fresh instance of -image
// with the broker directory -broker mounted, and passes stdin, stdout and
// stderr through; it fails when the process exits non-zero.
func dockerProc(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("dockerproc", flag.ContinueOnError)
	image := fs.String("image", "", "image")
	brokerDir := fs.String("broker", "", "broker directory")
	label := fs.String("label", "", "KEY=VALUE")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx := context.Background()
	eng, err := docker.Connect(ctx, docker.Options{Label: *label})
	if err != nil {
		return err
	}
	defer eng.Close()
	inst, err := eng.CreateInstance(ctx, docker.InstanceConfig{Image: *image, BrokerDir: *brokerDir})
	if err != nil {
		return err
	}
	defer inst.Destroy(context.Background())
	p, err := inst.Open(ctx, docker.ProcessSpec{Argv: fs.Args()})
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "%s%s\n", containerLine, p.Evidence().Container)
	return pipeProcess(p.Stdin(), p.Stdout(), p.Stderr(), p.Wait, stdin, stdout, stderr)
}

// pipeProcess passes stdio through to a process and waits for it.
func pipeProcess(pin io.WriteCloser, pout, perr io.Reader, wait func() (int, error), stdin io.Reader, stdout, stderr io.Writer) error {
	go func() {
		io.Copy(pin, stdin)
		pin.Close()
	}()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); io.Copy(stdout, pout) }()
	go func() { defer wg.Done(); io.Copy(stderr, perr) }()
	code, err := wait()
	wg.Wait()
	if err != nil {
		return err
	}
	if code != 0 {
		return fmt.Errorf("the process exited %d", code)
	}
	return nil
}

func flagSet(name string) *flag.FlagSet { return flag.NewFlagSet(name, flag.ContinueOnError) }
