package matrix

import (
	"encoding/json"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/checkfu/checkfu/adapters/docker"
	"github.com/checkfu/checkfu/conformance"
)

// fakeRun is a run with a fixed layout and no topology: the judges are
// pure functions of what was observed.
func fakeRun() *run {
	r := &run{
		cfg:      Config{PlaneCredential: "cfcanary-0123456789abcdef"},
		inner:    netip.MustParsePrefix("198.18.20.0/24"),
		outer:    netip.MustParsePrefix("198.18.21.0/24"),
		guard:    netip.MustParseAddrPort("198.18.20.2:3128"),
		workload: netip.MustParseAddr("198.18.20.3"),
		host:     &hostListener{port: 4000},
		topo:     map[string]any{},
		nonce:    "n0nce",
		seen:     map[string]Seen{},
	}
	return r
}

func specNamed(t *testing.T, r *run, name string) *spec {
	t.Helper()
	for _, s := range r.specs() {
		if s.name == name {
			return s
		}
	}
	t.Fatalf("no case %q", name)
	return nil
}

func seenStep(id string, st Step) Seen {
	return Seen{ID: id, Reached: st.Status != 0, Steps: []Step{st}}
}

// refusedTunnel is a workload whose embedded DNS refused the name.
func refusedTunnel(id string) Seen {
	return Seen{ID: id, Reached: true, DNS: &DNSAnswer{RCode: "RCodeRefused"}}
}

// controlForwarded records a DNS control whose forward reached the owned
// DNS and came back with the sentinel.
func controlForwarded(r *run) {
	r.dnsControl = Seen{ID: "dd-dns-control", Reached: true, DNS: &DNSAnswer{RCode: "RCodeSuccess", A: []string{"198.18.21.99"}, Records: 1}}
	r.queries = append(r.queries, r.controlName()+" TypeA")
}

// TestJudges pins each judge's verdict on observations that hold and
// that violate its fact.
func TestJudges(t *testing.T) {
	pub, priv := "198.18.21.3:8080", "198.18.21.5:8080"
	tests := []struct {
		name  string
		cas   string
		seen  func(id string) Seen
		hits  func(id string) []Hit
		want  Verdict
		extra func(r *run)
	}{
		{"admitted passes", "admitted_host_port", func(id string) Seen { return seenStep(id, Step{Status: 200}) },
			func(id string) []Hit { return []Hit{{Listener: pub, Host: admitted + ":8080", Path: "/c/" + id}} }, Pass, nil},
		{"admitted refused", "admitted_host_port", func(id string) Seen { return seenStep(id, Step{Status: 403, Refusal: "host_not_allowed"}) },
			nil, Fail, nil},
		{"refused, nothing reached", "subdomain", func(id string) Seen { return seenStep(id, Step{Status: 403, Refusal: "host_not_allowed"}) },
			nil, Pass, nil},
		{"refused, yet the listener saw it", "subdomain", func(id string) Seen { return seenStep(id, Step{Status: 403, Refusal: "host_not_allowed"}) },
			func(id string) []Hit { return []Hit{{Listener: pub, Path: "/c/" + id}} }, Fail, nil},
		{"upstream failure is not a refusal", "sibling", func(id string) Seen { return seenStep(id, Step{Status: 502, Upstream: "upstream_connect_failed"}) },
			nil, Fail, nil},
		{"403 without a code is not a refusal", "sibling", func(id string) Seen { return seenStep(id, Step{Status: 403}) },
			nil, Fail, nil},
		{"routing headers arrive", "routing_headers_stripped", func(id string) Seen { return seenStep(id, Step{Status: 200}) },
			func(id string) []Hit {
				return []Hit{{Listener: pub, Path: "/c/" + id, Header: map[string][]string{"X-Forwarded-Host": {denied}}}}
			}, Fail, nil},
		{"routing headers stripped", "routing_headers_stripped", func(id string) Seen { return seenStep(id, Step{Status: 200}) },
			func(id string) []Hit {
				return []Hit{{Listener: pub, Path: "/c/" + id, Header: map[string][]string{"Accept": {"*/*"}}}}
			}, Pass, nil},
		{"host header honoured", "host_header_names_another_host", func(id string) Seen { return seenStep(id, Step{Status: 200}) },
			func(id string) []Hit { return []Hit{{Listener: pub, Host: denied + ":8080", Path: "/c/" + id}} }, Fail, nil},
		{"redirect target reached", "302_to_not_admitted_host", func(id string) Seen { return seenStep(id, Step{Status: 200}) },
			func(id string) []Hit {
				return []Hit{{Listener: pub, Path: "/r/302?to=http%3A%2F%2Fother.test%3A8080%2Fc%2F" + id}, {Listener: pub, Path: "/c/" + id}}
			}, Fail, nil},
		{"redirector never reached", "302_to_not_admitted_host", func(id string) Seen { return seenStep(id, Step{Status: 403, Refusal: "x"}) },
			nil, Fail, nil},
		{"redirect rechecked", "302_to_not_admitted_host", func(id string) Seen {
			return Seen{ID: id, Reached: true, Steps: []Step{{Status: 302}, {Status: 403, Refusal: "host_not_allowed"}}}
		}, func(id string) []Hit {
			return []Hit{{Listener: pub, Path: "/r/302?to=http%3A%2F%2Fother.test%3A8080%2Fc%2F" + id}}
		}, Pass, nil},
		{"private listener reached on a mixed answer", "mixed_public_private_answer", func(id string) Seen { return seenStep(id, Step{Status: 200}) },
			func(id string) []Hit { return []Hit{{Listener: priv, Path: "/c/" + id}} }, Fail, nil},
		{"public listener only on a mixed answer", "mixed_public_private_answer", func(id string) Seen { return seenStep(id, Step{Status: 200}) },
			func(id string) []Hit { return []Hit{{Listener: pub, Path: "/c/" + id}} }, Pass, nil},
		{"flip reaches the private listener", "ttl0_flip_public_private", func(id string) Seen {
			return Seen{ID: id, Steps: []Step{{Status: 200}, {Status: 403}}}
		}, func(id string) []Hit { return []Hit{{Listener: priv, Path: "/c/" + id}} }, Fail,
			func(r *run) { r.queries = []string{flipName + " TypeA", flipName + " TypeA"} }},
		{"flip never exercised", "ttl0_flip_public_private", func(id string) Seen {
			return Seen{ID: id, Steps: []Step{{Status: 200}, {Status: 200}}}
		}, nil, Unestablished, func(r *run) { r.queries = []string{flipName + " TypeA", flipName + " TypeA"} }},
		{"flip refused half the time", "ttl0_flip_public_private", func(id string) Seen {
			return Seen{ID: id, Steps: []Step{{Status: 200}, {Status: 403}}}
		}, nil, Pass, func(r *run) { r.queries = []string{flipName + " TypeA", flipName + " TypeA"} }},
		{"dead port answered as a denial", "upstream_failure_not_a_denial", func(id string) Seen {
			return seenStep(id, Step{Status: 403, Refusal: "destination_not_public"})
		}, nil, Fail, nil},
		{"dead port answered 502", "upstream_failure_not_a_denial", func(id string) Seen {
			return seenStep(id, Step{Status: 502, Upstream: "upstream_connect_failed"})
		}, nil, Pass, nil},
		{"direct route", "tcp_public_target", func(id string) Seen { return Seen{ID: id, Reached: true} }, nil, Fail, nil},
		{"no direct route", "tcp_public_target", func(id string) Seen { return Seen{ID: id} }, nil, Pass, nil},
		{"control blind", "control_guard_reachable", func(id string) Seen { return Seen{ID: id} }, nil, Fail, nil},
		{"owned DNS asked directly", "udp_owned_dns", func(id string) Seen { return Seen{ID: id} }, nil, Fail,
			func(r *run) { r.queries = []string{"n0nce.direct.test TypeA"} }},
		{"tunnel through the embedded DNS", "host_dns_tunnel", refusedTunnel, nil, Fail,
			func(r *run) { controlForwarded(r); r.queries = append(r.queries, "n0nce.tunnel.test TypeA") }},
		{"tunnel answered with the sentinel", "host_dns_tunnel", func(id string) Seen {
			return Seen{ID: id, Reached: true, DNS: &DNSAnswer{RCode: "RCodeSuccess", A: []string{"198.18.21.99"}, Records: 1}}
		}, nil, Fail, controlForwarded},
		{"tunnel answered with another record", "host_dns_tunnel", func(id string) Seen {
			return Seen{ID: id, Reached: true, DNS: &DNSAnswer{RCode: "RCodeSuccess", Records: 1}}
		}, nil, Fail, controlForwarded},
		{"tunnel refused, the control forwarded", "host_dns_tunnel", refusedTunnel, nil, Pass, controlForwarded},
		{"tunnel NXDOMAIN, the control forwarded", "host_dns_tunnel", func(id string) Seen {
			return Seen{ID: id, Reached: true, DNS: &DNSAnswer{RCode: "RCodeNameError"}}
		}, nil, Pass, controlForwarded},
		{"tunnel timed out, the control forwarded", "host_dns_tunnel", func(id string) Seen { return Seen{ID: id, Detail: "timeout"} }, nil, Pass, controlForwarded},
		{"tunnel silent, no control", "host_dns_tunnel", refusedTunnel, nil, Unestablished, nil},
		{"tunnel silent, the control did not run", "host_dns_tunnel", refusedTunnel, nil, Unestablished, func(r *run) {
			controlForwarded(r)
			r.dnsControlErr = errors.New("no engine")
		}},
		{"tunnel silent, the control's forward unseen", "host_dns_tunnel", refusedTunnel, nil, Unestablished, func(r *run) {
			controlForwarded(r)
			r.queries = nil
		}},
		{"tunnel silent, the control got no sentinel", "host_dns_tunnel", refusedTunnel, nil, Unestablished, func(r *run) {
			controlForwarded(r)
			r.dnsControl.DNS = &DNSAnswer{RCode: "RCodeServerFailure"}
		}},
		{"tunnel answered NOERROR with nothing", "host_dns_tunnel", func(id string) Seen {
			return Seen{ID: id, Reached: true, DNS: &DNSAnswer{RCode: "RCodeSuccess"}}
		}, nil, Unestablished, controlForwarded},
		{"tunnel reply not an answer", "host_dns_tunnel", func(id string) Seen {
			return Seen{ID: id, Reached: true, DNS: &DNSAnswer{Err: "not a response to the question"}}
		}, nil, Unestablished, controlForwarded},
		{"tunnel probe recorded nothing", "host_dns_tunnel", func(id string) Seen { return Seen{ID: id} }, nil, Unestablished, controlForwarded},
		{"host listener reached", "udp_host_addresses", func(id string) Seen { return Seen{ID: id} }, nil, Fail,
			func(r *run) { r.host.seen = []string{"udp 198.18.20.3:5555"} }},
		{"canary in the guard's environment", "guard_compiled_environment", nil, nil, Fail,
			func(r *run) {
				r.guardView = docker.ContainerView{ID: "g", Env: []string{PlaneCredentialEnv + "=" + r.cfg.PlaneCredential}}
			}},
		{"guard mount writable", "guard_compiled_environment", nil, nil, Fail,
			func(r *run) {
				r.guardView = docker.ContainerView{ID: "g", Mounts: []docker.Mount{{Type: "bind", Destination: "/etc/checkfu/policy.json", RW: true}}}
			}},
		{"guard clean", "guard_compiled_environment", nil, nil, Pass,
			func(r *run) { r.guardView = docker.ContainerView{ID: "g", Cmd: []string{"-listen", "0.0.0.0:3128"}} }},
		{"canary in the workload's files", "workload_files", nil, nil, Fail,
			func(r *run) { r.wlFiles = scan{Files: 3, Found: []string{"etc/profile"}} }},
		{"no files read", "workload_files", nil, nil, Unestablished, func(r *run) { r.wlFiles = scan{} }},
		{"no plane", "credentialed_call_through_broker", nil, nil, Unestablished, func(r *run) { r.planeErr = errors.New("no engine") }},
		{"credentialed call", "credentialed_call_through_broker", nil, nil, Pass, func(r *run) {
			r.brokerSeen = BrokerSeen{Tools: []string{planeTool}, Text: `{"issues":[{"n":1}]}`}
			r.planeHits = []planeHit{{From: "127.0.0.1:5000", CredentialAttached: true}}
		}},
		{"credential reached the workload", "credentialed_call_through_broker", nil, nil, Fail, func(r *run) {
			r.brokerSeen = BrokerSeen{Tools: []string{planeTool}, Text: `{"issues":[{"n":1}]}`}
			r.brokerOut = []byte(`{"text":"` + r.cfg.PlaneCredential + `"}`)
			r.planeHits = []planeHit{{From: "127.0.0.1:5000", CredentialAttached: true}}
		}},
		{"call without the credential", "credentialed_call_through_broker", nil, nil, Fail, func(r *run) {
			r.brokerSeen = BrokerSeen{Tools: []string{planeTool}, Text: `{"issues":[{"n":1}]}`}
			r.planeHits = []planeHit{{From: "127.0.0.1:5000"}}
		}},
		{"plane traffic through the guard", "separate_routes", nil, nil, Fail, func(r *run) {
			r.planeHits = []planeHit{{From: "198.18.21.2:5000", CredentialAttached: true}}
			r.guardLogs = "listening"
			r.brokerView = docker.ContainerView{NetworkMode: "none", Networks: map[string]string{"none": ""}}
		}},
		{"guard names the plane", "separate_routes", nil, nil, Fail, func(r *run) {
			r.planeHits = []planeHit{{From: "127.0.0.1:5000", CredentialAttached: true}}
			r.guardLogs = "refused target=" + planeHost
			r.brokerView = docker.ContainerView{NetworkMode: "none", Networks: map[string]string{"none": ""}}
		}},
		{"broker workload on a network", "separate_routes", nil, nil, Fail, func(r *run) {
			r.planeHits = []planeHit{{From: "127.0.0.1:5000", CredentialAttached: true}}
			r.guardLogs = "listening"
			r.brokerView = docker.ContainerView{NetworkMode: "bridge", Networks: map[string]string{"bridge": "198.19.0.9"}}
		}},
		{"no transport hop", "process_opened_over_acp_wire", nil, nil, Unestablished, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := fakeRun()
			s := specNamed(t, r, tt.cas)
			for _, c := range s.checks {
				if tt.seen != nil {
					r.seen[c.ID] = tt.seen(c.ID)
				}
				if tt.hits != nil {
					r.hits = append(r.hits, tt.hits(c.ID)...)
				}
			}
			if tt.extra != nil {
				tt.extra(r)
			}
			got, why, ev := s.judge(r, s)
			if got != tt.want {
				t.Errorf("%s: verdict %s (%s), want %s", tt.cas, got, why, tt.want)
			}
			js, _ := json.Marshal(ev)
			if strings.Contains(string(js), r.cfg.PlaneCredential) {
				t.Errorf("%s: the evidence carries the canary: %s", tt.cas, js)
			}
		})
	}
}

// TestHeld pins that a fact holds only when every one of its cases
// passed: one unestablished case, or none at all, leaves it unheld.
func TestHeld(t *testing.T) {
	rep := &Report{Cases: []Case{
		{Fact: conformance.ExactDestinationMatch, Verdict: Pass},
		{Fact: conformance.ExactDestinationMatch, Verdict: Pass},
		{Fact: conformance.RedirectRecheck, Verdict: Pass},
		{Fact: conformance.RedirectRecheck, Verdict: Unestablished},
		{Fact: conformance.DefaultDeny, Verdict: Fail},
	}}
	if got := rep.Held().String(); got != "exact_destination_match" {
		t.Errorf("Held = %s, want exact_destination_match", got)
	}
}

// TestCasesCoverTheFloor pins the floor of adversarial cases.
func TestCasesCoverTheFloor(t *testing.T) {
	r := fakeRun()
	names := map[string]conformance.Fact{}
	for _, s := range r.specs() {
		if _, dup := names[s.name]; dup {
			t.Errorf("two cases are named %q", s.name)
		}
		names[s.name] = s.fact
	}
	floor := map[conformance.Fact][]string{
		conformance.ExactDestinationMatch:    {"admitted_host_port", "another_host", "sibling", "subdomain", "apex", "wildcard_label", "another_port", "case_variant", "trailing_dot_variant", "idna_unicode_variant", "idna_ascii_variant"},
		conformance.RedirectRecheck:          {"301_to_not_admitted_host", "302_to_private_address", "303_to_not_admitted_host", "307_to_private_address", "308_to_not_admitted_host"},
		conformance.ConnectTimePublicAddress: {"private_answer_live_listener", "ttl0_flip_public_private", "upstream_failure_not_a_denial"},
		conformance.DefaultDeny:              {"tcp_public_target", "udp_owned_dns", "tcp_host_addresses", "udp_host_addresses", "host_dns_tunnel"},
		conformance.AuthoritySeparation:      {"guard_compiled_environment", "guard_files", "workload_compiled_environment", "workload_files", "broker_workload_compiled_environment", "separate_routes", "credentialed_call_through_broker", "process_opened_over_acp_wire"},
	}
	for f, want := range floor {
		for _, n := range want {
			if names[n] != f {
				t.Errorf("case %s of %s is missing", n, f)
			}
		}
	}
}
