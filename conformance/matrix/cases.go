package matrix

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"strings"

	"github.com/checkfu/checkfu/adapters/docker"
	"github.com/checkfu/checkfu/conformance"
	"golang.org/x/net/dns/dnsmessage"
)

// A spec is one case: the checks the workload runs for it, and how its
// observations are judged.
type spec struct {
	fact   conformance.Fact
	name   string
	checks []Check
	// judge returns the verdict, one line of why, and the extra evidence
	// (besides what was sent and seen) the verdict rests on.
	judge func(r *run, s *spec) (Verdict, string, map[string]any)
}

// redirectCodes are the 3xx answers redirect_recheck tries, each of them.
var redirectCodes = []int{301, 302, 303, 307, 308}

// specs returns every case, in the order they are reported. It is built
// once per run, after the topology is up.
func (r *run) specs() []*spec {
	if r.cached != nil {
		return r.cached
	}
	via := func(id, target string) Check {
		return Check{ID: id, Kind: "http", Proxy: r.guard.String(), URL: target}
	}
	mark := func(hostport, id string) string { return "http://" + hostport + "/c/" + id }
	var out []*spec
	add := func(f conformance.Fact, name string, judge func(*run, *spec) (Verdict, string, map[string]any), checks ...Check) {
		out = append(out, &spec{fact: f, name: name, checks: checks, judge: judge})
	}

	// exact_destination_match: every refused name resolves to the live
	// public listener, so a guard that let it through would be seen.
	edm := conformance.ExactDestinationMatch
	add(edm, "admitted_host_port", judgeAdmitted, via("edm-admitted", mark(admitted+":8080", "edm-admitted")))
	for _, c := range []struct{ name, host string }{
		{"another_host", denied + ":8080"},
		{"sibling", "web.target.test:8080"},
		{"subdomain", "x." + admitted + ":8080"},
		{"suffix_not_subdomain", "xapi.target.test:8080"},
		{"apex", "target.test:8080"},
		{"wildcard_label", "*.target.test:8080"},
		{"another_port", admitted + ":8081"},
		{"ip_literal", r.outerAt(hostPublic, 8080)},
		{"case_variant", "OTHER.TEST:8080"},
		{"trailing_dot_variant", denied + ".:8080"},
		{"idna_unicode_variant", "öther.test:8080"},
		{"idna_ascii_variant", denyIDNA + ":8080"},
	} {
		id := "edm-" + strings.ReplaceAll(c.name, "_", "-")
		add(edm, c.name, judgeRefused, via(id, mark(c.host, id)))
	}
	tunnel := func(id, authority string) Check {
		return Check{ID: id, Kind: "connect", Proxy: r.guard.String(), URL: authority}
	}
	add(edm, "connect_admitted_host_port", judgeAdmitted, tunnel("edm-connect-admitted", admitted+":8080"))
	add(edm, "connect_another_host", judgeRefused, tunnel("edm-connect-another-host", denied+":8080"))
	add(edm, "connect_subdomain", judgeRefused, tunnel("edm-connect-subdomain", "x."+admitted+":8080"))
	add(edm, "connect_another_port", judgeRefused, tunnel("edm-connect-another-port", admitted+":8081"))
	hh := via("edm-host-header", mark(admitted+":8080", "edm-host-header"))
	hh.Host = denied + ":8080"
	add(edm, "host_header_names_another_host", judgeHostHeader, hh)
	rh := via("edm-routing-headers", mark(admitted+":8080", "edm-routing-headers"))
	rh.Header = map[string]string{
		"X-Forwarded-Host": denied, "X-Forwarded-For": "198.18.0.9", "Forwarded": "for=198.18.0.9;host=" + denied,
		"X-Real-Ip": "198.18.0.9", "Via": "1.1 " + denied, "X-Client-Ip": "198.18.0.9",
	}
	add(edm, "routing_headers_stripped", judgeRoutingHeaders, rh)

	// redirect_recheck: the admitted host redirects; the target must
	// never be reached, whoever follows.
	rr := conformance.RedirectRecheck
	for _, code := range redirectCodes {
		for _, t := range []struct{ name, hostport string }{
			{"not_admitted_host", denied + ":8080"},
			{"private_address", r.outerAt(hostPrivate, 8080)},
		} {
			id := fmt.Sprintf("rr-%d-%s", code, strings.ReplaceAll(t.name, "_", "-"))
			c := via(id, fmt.Sprintf("http://%s:8080/r/%d?to=%s", admitted, code, url.QueryEscape(mark(t.hostport, id))))
			c.Follow = true
			add(rr, fmt.Sprintf("%d_to_%s", code, t.name), judgeRedirect, c)
		}
	}
	pn := via("rr-302-private-name", fmt.Sprintf("http://%s:8080/r/302?to=%s", admitted, url.QueryEscape(mark(privName+":8080", "rr-302-private-name"))))
	pn.Follow = true
	add(rr, "302_to_admitted_name_with_private_address", judgeRedirect, pn)

	// connect_time_public_address: admitted names the owned DNS answers
	// with private addresses where live listeners accept.
	ct := conformance.ConnectTimePublicAddress
	add(ct, "private_answer_live_listener", judgeRefused, via("ct-private", mark(privName+":8080", "ct-private")))
	add(ct, "connect_private_answer_live_listener", judgeRefused, tunnel("ct-connect-private", privName+":8080"))
	loopHP, selfHP := loopName+":8080", selfName+":3128"
	if r.j != nil {
		loopHP, selfHP = fmt.Sprintf("%s:%d", loopName, r.j.loopPort), fmt.Sprintf("%s:%d", selfName, r.j.guardPort)
	}
	add(ct, "loopback_answer_guard_listener", judgeRefused, via("ct-loopback", mark(loopHP, "ct-loopback")))
	// A guard that dialled itself would answer its own refusal as a
	// destination's 403, which carries no Checkfu-Refusal through.
	add(ct, "guard_own_listener_answer", judgeRefused, via("ct-self", mark(selfHP, "ct-self")))
	add(ct, "mixed_public_private_answer", judgeNoPrivateHit, via("ct-mixed", mark(multiName+":8080", "ct-mixed")))
	flip := via("ct-flip", mark(flipName+":8080", "ct-flip"))
	flip.Repeat = 6
	add(ct, "ttl0_flip_public_private", judgeFlip, flip)
	add(ct, "upstream_failure_not_a_denial", judgeDeadPort, via("ct-dead-port", mark(deadName+":8082", "ct-dead-port")))

	// default_deny: the workload ignores the proxy and connects directly.
	dd := conformance.DefaultDeny
	add(dd, "control_guard_reachable", judgeControl, Check{ID: "dd-control", Kind: "tcp", Addr: r.guard.String()})
	add(dd, "tcp_public_target", judgeBlocked, Check{ID: "dd-tcp-public", Kind: "tcp", Addr: r.outerAt(hostPublic, 8080)})
	add(dd, "tcp_private_target", judgeBlocked, Check{ID: "dd-tcp-private", Kind: "tcp", Addr: r.outerAt(hostPrivate, 8080)})
	add(dd, "udp_owned_dns", judgeBlocked, Check{ID: "dd-udp-dns", Kind: "dns", Addr: r.outerAt(hostDNS, 53), Name: r.nonce + ".direct.test"})
	var tcps, udps []Check
	hostAddrs := r.hostAddrs
	if r.j != nil {
		hostAddrs = r.jailHostAddrs
	}
	for _, a := range hostAddrs() {
		ap := netip.AddrPortFrom(a, uint16(r.host.port)).String()
		tcps = append(tcps, Check{ID: "dd-host-tcp-" + ap, Kind: "tcp", Addr: ap})
		udps = append(udps, Check{ID: "dd-host-udp-" + ap, Kind: "udp", Addr: ap})
	}
	add(dd, "tcp_host_addresses", judgeBlocked, tcps...)
	add(dd, "udp_host_addresses", judgeBlocked, udps...)
	as := conformance.AuthoritySeparation
	if r.j != nil {
		// The jail's equivalent of the embedded-DNS tunnel: every
		// resolver address a jail's loopback could hold.
		var asks []Check
		for _, a := range []string{"127.0.0.53:53", "127.0.0.1:53", netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(r.guard.Port())).String()} {
			asks = append(asks, Check{ID: "dd-loopback-dns-" + a, Kind: "dns", Addr: a, Name: r.nonce + "." + tunnelZone})
		}
		add(dd, "loopback_dns_tunnel", judgeTunnelJail, asks...)
		add(as, "guard_compiled_options", judgeGuardCompiled)
		add(as, "workload_compiled_environment", judgeProcView(func(r *run) (procView, error) { return r.j.wl, r.j.wlErr }))
		add(as, "workload_files", judgeFiles(func(r *run) scan { return r.j.wlFiles }))
		add(as, "broker_workload_compiled_environment", judgeProcView(func(r *run) (procView, error) { return r.j.brokerPV, r.planeErr }))
		add(as, "credentialed_call_through_broker", judgeBrokerCall)
		add(as, "separate_routes", judgeRoutesJail)
		add(as, "process_opened_over_acp_wire", judgeOverWire)
		r.cached = out
		return out
	}
	add(dd, "host_dns_tunnel", judgeTunnel, Check{ID: "dd-host-dns", Kind: "dns", Addr: "127.0.0.11:53", Name: r.nonce + "." + tunnelZone})

	// authority_separation: what the Runner compiled, inspected.
	add(as, "guard_compiled_environment", judgeView(func(r *run) (docker.ContainerView, error) { return r.guardView, nil }))
	add(as, "guard_files", judgeFiles(func(r *run) scan { return r.guardFiles }))
	add(as, "workload_compiled_environment", judgeView(func(r *run) (docker.ContainerView, error) { return r.wlView, r.wlViewErr }))
	add(as, "workload_files", judgeFiles(func(r *run) scan { return r.wlFiles }))
	add(as, "broker_workload_compiled_environment", judgeView(func(r *run) (docker.ContainerView, error) { return r.brokerView, r.planeErr }))
	add(as, "credentialed_call_through_broker", judgeBrokerCall)
	add(as, "separate_routes", judgeRoutes)
	add(as, "process_opened_over_acp_wire", judgeOverWire)
	r.cached = out
	return out
}

// checks returns every check of every case.
func (r *run) checks() []Check {
	var out []Check
	for _, s := range r.specs() {
		out = append(out, s.checks...)
	}
	return out
}

// cases judges every case.
func (r *run) cases() []Case {
	var out []Case
	for _, s := range r.specs() {
		v, why, extra := s.judge(r, s)
		ev := map[string]any{"fact": s.fact, "case": s.name, "verdict": v, "why": why}
		if len(s.checks) > 0 {
			var seen []Seen
			for _, c := range s.checks {
				seen = append(seen, r.seen[c.ID])
			}
			ev["sent"], ev["seen"] = s.checks, seen
		}
		for k, x := range extra {
			ev[k] = x
		}
		js, _ := json.Marshal(ev)
		out = append(out, Case{Fact: s.fact, Name: s.name, Verdict: v, Why: why, Evidence: js})
	}
	return out
}

func first(r *run, s *spec) (Seen, Step) {
	seen := r.seen[s.checks[0].ID]
	if len(seen.Steps) == 0 {
		return seen, Step{}
	}
	return seen, seen.Steps[0]
}

func judgeAdmitted(r *run, s *spec) (Verdict, string, map[string]any) {
	_, st := first(r, s)
	hits := r.hitsFor(s.checks[0].ID)
	ev := map[string]any{"hits": hits}
	if st.Status != 200 || len(hits) != 1 || hits[0].Host != admitted+":8080" {
		return Fail, fmt.Sprintf("the admitted host:port did not pass (status %d, %d hits): no refusal of this fact can be told from a broken path", st.Status, len(hits)), ev
	}
	return Pass, "passed: 200, and the live listener recorded it with Host " + hits[0].Host, ev
}

func judgeRefused(r *run, s *spec) (Verdict, string, map[string]any) {
	_, st := first(r, s)
	hits := r.hitsFor(s.checks[0].ID)
	ev := map[string]any{"hits": hits}
	switch {
	case len(hits) > 0:
		return Fail, fmt.Sprintf("reached the live listener %s (status %d)", hits[0].Listener, st.Status), ev
	case st.Status == 400 && st.Refusal == "" && st.Upstream == "":
		// The guard's HTTP server refused the request line itself
		// (net/http: a malformed Host), before any policy or dial.
		return Pass, "refused 400 by the guard's request parser; the live listener recorded nothing", ev
	case st.Status != 403 || st.Refusal == "":
		return Fail, fmt.Sprintf("answered %d %s%s, not a refusal", st.Status, st.Refusal, st.Err), ev
	}
	return Pass, "refused 403 " + st.Refusal + "; the live listener recorded nothing", ev
}

func judgeHostHeader(r *run, s *spec) (Verdict, string, map[string]any) {
	_, st := first(r, s)
	hits := r.hitsFor(s.checks[0].ID)
	ev := map[string]any{"hits": hits}
	for _, h := range hits {
		if h.Host != admitted+":8080" {
			return Fail, "the listener received Host " + h.Host + ", not the admitted name", ev
		}
	}
	if len(hits) == 0 && st.Status != 403 {
		return Fail, fmt.Sprintf("answered %d without reaching the listener or refusing", st.Status), ev
	}
	return Pass, fmt.Sprintf("status %d; the listener saw only the admitted Host", st.Status), ev
}

func judgeRoutingHeaders(r *run, s *spec) (Verdict, string, map[string]any) {
	_, st := first(r, s)
	hits := r.hitsFor(s.checks[0].ID)
	ev := map[string]any{"hits": hits}
	if len(hits) == 0 {
		if st.Status == 403 {
			return Pass, "refused 403 " + st.Refusal, ev
		}
		return Fail, fmt.Sprintf("answered %d without reaching the listener or refusing", st.Status), ev
	}
	for _, h := range hits {
		for k := range s.checks[0].Header {
			if _, ok := h.Header[k]; ok {
				return Fail, "the listener received " + k + ", a claim about another host or client", ev
			}
		}
	}
	return Pass, "passed with every routing header removed", ev
}

func judgeRedirect(r *run, s *spec) (Verdict, string, map[string]any) {
	seen, st := first(r, s)
	c := s.checks[0]
	u, _ := url.Parse(c.URL)
	var redirector []Hit
	for _, h := range r.hits {
		if strings.HasPrefix(h.Path, u.Path+"?") && strings.Contains(h.Path, url.QueryEscape("/c/"+c.ID)) {
			redirector = append(redirector, h)
		}
	}
	hits := r.hitsFor(c.ID)
	ev := map[string]any{"redirector_hits": redirector, "target_hits": hits}
	switch {
	case len(hits) > 0:
		return Fail, fmt.Sprintf("the redirect target was reached (%s); the workload saw %d", hits[0].Listener, st.Status), ev
	case len(redirector) == 0:
		return Fail, fmt.Sprintf("the redirecting host was never reached (status %d): the case proves nothing", st.Status), ev
	}
	return Pass, fmt.Sprintf("the redirector answered %d to the workload; %d step(s), the target recorded nothing", st.Status, len(seen.Steps)), ev
}

func (r *run) privateHits(id string) []Hit {
	var out []Hit
	for _, h := range r.hitsFor(id) {
		if !strings.HasPrefix(h.Listener, r.at(r.outer, hostPublic).String()+":") {
			out = append(out, h)
		}
	}
	return out
}

func judgeNoPrivateHit(r *run, s *spec) (Verdict, string, map[string]any) {
	_, st := first(r, s)
	priv := r.privateHits(s.checks[0].ID)
	ev := map[string]any{"hits": r.hitsFor(s.checks[0].ID)}
	if len(priv) > 0 {
		return Fail, "reached the private listener " + priv[0].Listener, ev
	}
	return Pass, fmt.Sprintf("status %d %s; the private listener recorded nothing", st.Status, st.Refusal), ev
}

func judgeFlip(r *run, s *spec) (Verdict, string, map[string]any) {
	seen := r.seen[s.checks[0].ID]
	priv := r.privateHits(s.checks[0].ID)
	var queries []string
	for _, q := range r.queries {
		if strings.HasPrefix(q, flipName+" TypeA") {
			queries = append(queries, q)
		}
	}
	refused, passed := 0, 0
	for _, st := range seen.Steps {
		switch st.Status {
		case 403:
			refused++
		case 200:
			passed++
		}
	}
	ev := map[string]any{"hits": r.hitsFor(s.checks[0].ID), "dns_queries": queries}
	switch {
	case len(priv) > 0:
		return Fail, fmt.Sprintf("reached the private listener %s after a public answer", priv[0].Listener), ev
	case refused+passed != len(seen.Steps):
		return Fail, "a request was neither refused nor passed to the public listener", ev
	case refused == 0 || len(queries) < 2:
		return Unestablished, fmt.Sprintf("the flip was not exercised (%d refusals, %d A questions)", refused, len(queries)), ev
	}
	return Pass, fmt.Sprintf("%d requests, %d A questions: %d refused, %d reached only the public address", len(seen.Steps), len(queries), refused, passed), ev
}

func judgeDeadPort(r *run, s *spec) (Verdict, string, map[string]any) {
	_, st := first(r, s)
	if st.Status == 502 && st.Upstream != "" && st.Refusal == "" {
		return Pass, "a closed admitted port answers 502 " + st.Upstream + ", unlike a denial", nil
	}
	return Fail, fmt.Sprintf("a closed admitted port answers %d %s%s: an upstream failure looks like a denial, so a refusal could be a dead port", st.Status, st.Refusal, st.Upstream), nil
}

func judgeControl(r *run, s *spec) (Verdict, string, map[string]any) {
	if r.seen[s.checks[0].ID].Reached {
		return Pass, "the workload reaches the guard: the probe can see a route", nil
	}
	return Fail, "the workload cannot reach even the guard: a blocked probe proves nothing", nil
}

func judgeBlocked(r *run, s *spec) (Verdict, string, map[string]any) {
	ev := map[string]any{}
	for _, c := range s.checks {
		if r.seen[c.ID].Reached {
			return Fail, "reached " + c.Addr + " directly, without the guard", ev
		}
		if c.Kind == "dns" && r.asked(c.Name) {
			return Fail, "the owned DNS received " + c.Name + " from the workload", ev
		}
	}
	if s.name == "tcp_host_addresses" || s.name == "udp_host_addresses" {
		from := r.host.from(r.workloadPrefix())
		ev["host_listener_from_workload"] = from
		if len(from) > 0 {
			return Fail, "the host listener recorded " + from[0], ev
		}
	}
	return Pass, fmt.Sprintf("%d direct attempt(s), every one blocked", len(s.checks)), ev
}

// workloadPrefix starts the address a workload's contact comes from: on
// Docker its address; a jail has none of its own (any contact the host
// listener records during the probe is the jail's), so every contact.
func (r *run) workloadPrefix() string {
	if r.j != nil {
		return ""
	}
	return r.workload.String() + ":"
}

func (r *run) asked(name string) bool {
	for _, q := range r.queries {
		if strings.HasPrefix(q, strings.ToLower(name)+" ") {
			return true
		}
	}
	return false
}

func judgeTunnel(r *run, s *spec) (Verdict, string, map[string]any) {
	c := s.checks[0]
	obs := tunnelObs{
		Name: c.Name, Seen: r.seen[c.ID], Asked: r.asked(c.Name),
		ControlName: r.controlName(), Control: r.dnsControl, ControlAsked: r.asked(r.controlName()),
		ControlRan: r.dnsControlErr == nil && r.dnsControl.ID != "", Sentinel: r.at(r.outer, hostSentinel).String(),
	}
	ev := map[string]any{"control": map[string]any{
		"name": obs.ControlName, "seen": obs.Control, "owned_dns_saw_it": obs.ControlAsked, "error": fmt.Sprint(r.dnsControlErr),
	}, "owned_dns_saw_workload_name": obs.Asked, "sentinel": obs.Sentinel}
	v, why := tunnelVerdict(obs)
	return v, why, ev
}

// A tunnelObs is what the host_dns_tunnel case observed: the workload
// asked its embedded DNS for Name; the DNS control, whose embedded DNS's
// upstream is the owned DNS, asked for ControlName.
type tunnelObs struct {
	Name  string
	Seen  Seen // the workload's observation, with its decoded reply
	Asked bool // the owned DNS logged Name
	// ControlRan reports whether the control's probe ran and reported.
	ControlRan   bool
	ControlName  string
	Control      Seen
	ControlAsked bool   // the owned DNS logged ControlName
	Sentinel     string // what the owned DNS answers for every name of tunnelZone
}

// tunnelVerdict judges the host_dns_tunnel case. It fails when the name
// reached the owned DNS or the workload's resolver answered it with any
// record; it passes only when, besides, the control saw a forward (the
// owned DNS logged the control's name and the control got the sentinel
// back, so the observation is not blind) and the workload's resolver
// gave no answer or a decoded NXDOMAIN, REFUSED or SERVFAIL. Anything
// else is unestablished. It does no I/O.
func tunnelVerdict(o tunnelObs) (Verdict, string) {
	a := o.Seen.DNS
	switch {
	case o.Asked:
		return Fail, "the name the workload asked its embedded DNS reached the owned DNS"
	case a != nil && (len(a.A) > 0 || a.Records > 0):
		return Fail, fmt.Sprintf("the workload's embedded DNS answered %s with %d record(s) %v: a resolver beyond the sandbox answered it", o.Name, a.Records, a.A)
	case !o.ControlRan:
		return Unestablished, "the DNS control did not run: no proof the owned DNS can see a forward"
	case !o.ControlAsked || o.Control.DNS == nil || !slices.Contains(o.Control.DNS.A, o.Sentinel):
		return Unestablished, fmt.Sprintf("the DNS control, whose embedded DNS's upstream is the owned DNS, saw no forward (owned DNS logged it: %v; its answer: %s): the observation is blind", o.ControlAsked, describeAnswer(o.Control))
	case a == nil && o.Seen.Detail == "":
		return Unestablished, "the workload's probe recorded neither a reply nor why none came"
	case a == nil:
		return Pass, "the embedded DNS gave no answer (" + o.Seen.Detail + ") and the owned DNS never saw the name; the control's forward reached it"
	case a.Err != "":
		return Unestablished, "the workload's reply is not an answer to its question: " + a.Err
	case a.RCode != dnsmessage.RCodeNameError.String() && a.RCode != dnsmessage.RCodeRefused.String() && a.RCode != dnsmessage.RCodeServerFailure.String():
		return Unestablished, "the workload's embedded DNS answered " + a.RCode + " with no record: neither a refusal nor a forward"
	}
	return Pass, "the embedded DNS answered " + a.RCode + " with no record and the owned DNS never saw the name; the control's forward reached it"
}

func describeAnswer(s Seen) string {
	if s.DNS == nil {
		return "none (" + s.Detail + ")"
	}
	return fmt.Sprintf("%s %v %s", s.DNS.RCode, s.DNS.A, s.DNS.Err)
}

// judgeView judges a container as the engine reports it: the canary is
// absent from its environment, command line and mounts, and no mount is
// writable.
func judgeView(get func(*run) (docker.ContainerView, error)) func(*run, *spec) (Verdict, string, map[string]any) {
	return func(r *run, s *spec) (Verdict, string, map[string]any) {
		v, err := get(r)
		if err != nil || v.ID == "" {
			return Unestablished, fmt.Sprintf("the container could not be inspected: %v", err), nil
		}
		canary := r.cfg.PlaneCredential
		ev := map[string]any{"container": redact(v, canary)}
		where := ""
		for _, e := range v.Env {
			if strings.Contains(e, canary) {
				where = "environment"
			}
		}
		for _, a := range append(append([]string{}, v.Entrypoint...), v.Cmd...) {
			if strings.Contains(a, canary) {
				where = "command line"
			}
		}
		for _, m := range v.Mounts {
			if strings.Contains(m.Source+m.Destination, canary) {
				where = "mounts"
			}
			if m.RW {
				return Fail, "mount " + m.Destination + " is writable", ev
			}
		}
		if where != "" {
			return Fail, "the canary plane credential is in the " + where, ev
		}
		return Pass, fmt.Sprintf("the canary is absent from %d environment entries, %d arguments and %d mounts", len(v.Env), len(v.Entrypoint)+len(v.Cmd), len(v.Mounts)), ev
	}
}

// redact returns v as evidence: every environment value replaced by its
// digest (a value the Runner compiled may be a secret; its name and digest
// are what the evidence needs), and the canary replaced everywhere else.
func redact(v docker.ContainerView, canary string) docker.ContainerView {
	rep := strings.NewReplacer(canary, "<canary>")
	env := make([]string, len(v.Env))
	for i, e := range v.Env {
		name, val, _ := strings.Cut(e, "=")
		env[i] = name + "=" + conformance.DigestOf([]byte(val)).String()
	}
	v.Env = env
	v.Cmd = append([]string(nil), v.Cmd...)
	v.Entrypoint = append([]string(nil), v.Entrypoint...)
	for i, a := range v.Cmd {
		v.Cmd[i] = rep.Replace(a)
	}
	for i, a := range v.Entrypoint {
		v.Entrypoint[i] = rep.Replace(a)
	}
	return v
}

func judgeFiles(get func(*run) scan) func(*run, *spec) (Verdict, string, map[string]any) {
	return func(r *run, s *spec) (Verdict, string, map[string]any) {
		sc := get(r)
		ev := map[string]any{"scan": sc}
		switch {
		case len(sc.Found) > 0:
			return Fail, "the canary plane credential is in " + sc.Found[0], ev
		case sc.Err != "" || sc.Files == 0:
			return Unestablished, "the files could not be read: " + sc.Err, ev
		}
		return Pass, fmt.Sprintf("the canary is absent from %d files (%d bytes) under %s", sc.Files, sc.Bytes, strings.Join(sc.Paths, ", ")), ev
	}
}

func judgeBrokerCall(r *run, s *spec) (Verdict, string, map[string]any) {
	ev := map[string]any{"workload_saw": r.brokerSeen, "provider_received": r.planeHits}
	if r.planeErr != nil {
		return Unestablished, "the plane or its workload could not be observed: " + r.planeErr.Error(), ev
	}
	attached := 0
	for _, h := range r.planeHits {
		if h.CredentialAttached {
			attached++
		}
	}
	switch {
	case strings.Contains(string(r.brokerOut), r.cfg.PlaneCredential):
		return Fail, "the capability-enabled workload saw the plane credential", ev
	case r.brokerSeen.Error != "" || r.brokerSeen.IsError || r.brokerSeen.Text != `{"issues":[{"n":1}]}`:
		return Fail, "the credentialed call through the broker did not return the provider's answer: " + r.brokerSeen.Error + r.brokerSeen.Text, ev
	case len(r.planeHits) != 1 || attached != 1:
		return Fail, fmt.Sprintf("the provider received %d request(s), %d with the credential attached; want exactly one, attached at plane authority", len(r.planeHits), attached), ev
	}
	return Pass, "a tool call crossed the broker; the provider received it once with the credential attached, the workload only the answer", ev
}

func judgeRoutes(r *run, s *spec) (Verdict, string, map[string]any) {
	ev := map[string]any{
		"workload_networks": r.wlView.Networks, "guard_networks": r.guardView.Networks, "broker_workload_networks": r.brokerView.Networks,
		"host_listener_from_workload": r.host.from(r.workload.String() + ":"),
		"provider_received":           r.planeHits,
		"guard_log_names_plane":       strings.Contains(r.guardLogs, planeHost),
	}
	if r.planeErr != nil || len(r.planeHits) == 0 || r.guardLogs == "" {
		return Unestablished, "no plane traffic to observe", ev
	}
	for _, h := range r.planeHits {
		ap, err := netip.ParseAddrPort(h.From)
		if err != nil || !ap.Addr().IsLoopback() {
			return Fail, "plane traffic reached the provider from " + h.From + ", not the plane's own route", ev
		}
	}
	switch {
	case strings.Contains(r.guardLogs, planeHost):
		return Fail, "the guard's log names the plane's provider: plane traffic rode the guard", ev
	case len(r.host.from(r.workload.String()+":")) > 0:
		return Fail, "the guarded workload reached the host, where the plane's edge runs", ev
	case len(r.brokerView.Networks) != 1 || r.brokerView.NetworkMode != "none":
		return Fail, fmt.Sprintf("the capability-enabled workload has network %s %v, not none", r.brokerView.NetworkMode, r.brokerView.Networks), ev
	}
	for n := range r.wlView.Networks {
		if n != r.top.InnerNetwork() {
			return Fail, "the guarded workload is also on " + n, ev
		}
	}
	return Pass, "plane traffic left from the host's loopback and never crossed the guard; the guarded workload sits only on the internal network and reaches no host address; the capability-enabled workload has no network, only the broker's socket", ev
}

func judgeOverWire(r *run, s *spec) (Verdict, string, map[string]any) {
	if r.planeErr != nil || !r.overWire {
		return Unestablished, "the capability-enabled workload's process was not opened over acp/wire", map[string]any{"plane_error": fmt.Sprint(r.planeErr)}
	}
	if r.j != nil {
		return Pass, "the capability-enabled workload's process was opened over acp/wire (a Unix socket, peer-authenticated) by a wire server whose command ran it in a jail with the broker's socket; the provider side's environment held no plane credential", map[string]any{"pid": r.j.brokerPV.PID}
	}
	return Pass, "the capability-enabled workload's process was opened over acp/wire (a Unix socket, peer-authenticated) by a wire server whose command ran it in a Docker instance with the broker's socket; the provider side's environment held no plane credential", map[string]any{"container": r.brokerView.ID}
}
