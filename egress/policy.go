package egress

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/internal/strictjson"
)

// A PolicyType names a member of the network policy union.
type PolicyType string

// The three members of the network policy union.
const (
	// PolicyNone: the workload reaches nothing.
	PolicyNone PolicyType = "none"
	// PolicyUnrestricted: the workload reaches the public internet, and
	// never a non-public address.
	PolicyUnrestricted PolicyType = "unrestricted"
	// PolicyAllowlist: the workload reaches exactly the listed hosts and
	// ports, at public addresses only.
	PolicyAllowlist PolicyType = "allowlist"
)

// maxPolicyDoc and maxAllowedHosts bound what ParseNetworkPolicy reads.
const (
	maxPolicyDoc    = 64 << 10
	maxAllowedHosts = 512
)

// A HostPort is one exact allowlist destination: a canonical DNS name and
// a port.
type HostPort struct {
	Host string
	Port uint16
}

// String returns "host:port".
func (h HostPort) String() string { return h.Host + ":" + strconv.Itoa(int(h.Port)) }

// ParseHostPort parses an allowed_hosts entry: "host" (port 443) or
// "host:port". The host is canonicalised with [CanonicalHost]; IP
// literals, wildcards, brackets, userinfo, paths and ports that are not
// 1-65535 without leading zeros are refused with [CodePolicyInvalid].
func ParseHostPort(s string) (HostPort, error) {
	host, port := s, uint16(443)
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		p, ok := parsePort(s[i+1:])
		if !ok {
			return HostPort{}, checkfu.Refuse(CodePolicyInvalid, "egress: allowed host %s has an invalid port (want 1-65535, no leading zeros)", checkfu.Quote(s))
		}
		host, port = s[:i], p
	}
	if strings.ContainsAny(host, "*[]:/@") {
		return HostPort{}, checkfu.Refuse(CodePolicyInvalid, "egress: allowed host %s must be an exact DNS name, optionally with :port", checkfu.Quote(s))
	}
	h, err := CanonicalHost(host)
	if err != nil {
		return HostPort{}, checkfu.Refuse(CodePolicyInvalid, "egress: allowed host %s is not a DNS name (IP literals are never allowed)", checkfu.Quote(s))
	}
	return HostPort{Host: h, Port: port}, nil
}

// MarshalText implements encoding.TextMarshaler: "host:port".
func (h HostPort) MarshalText() ([]byte, error) { return []byte(h.String()), nil }

// An Allowlist is the allowlist member of the network policy union, as
// written. AllowPackageManagers and AllowMCPServers are abbreviations, not
// standing allowances: [NetworkPolicy.Compile] turns them into exact hosts.
type Allowlist struct {
	// AllowedHosts are exact destinations, canonical and without
	// duplicates.
	AllowedHosts []HostPort
	// AllowPackageManagers adds the preset catalog's hosts at compile
	// time.
	AllowPackageManagers bool
	// AllowMCPServers adds no host: MCP calls cross the capability
	// gateway, never the workload's own network. It is accepted so that
	// a migrating config is copy-paste.
	AllowMCPServers bool
	// RequiredEgressCertification is the grade a provider must advertise
	// to run the profile. The zero Requirement means omitted (which
	// still requires advisory_filter).
	RequiredEgressCertification checkfu.Requirement
}

// A NetworkPolicy is a SandboxProfile's network policy: exactly one of
// "none", "unrestricted" or "allowlist". The union is closed: there is no
// other member, and required_egress_certification exists only on the
// allowlist member, so "require a boundary while asking for unrestricted
// egress" cannot be written.
//
// The zero NetworkPolicy is no member at all: it compiles to nothing and
// marshals to an error. Build one with [ParseNetworkPolicy],
// [NoNetwork], [UnrestrictedNetwork] or [AllowlistNetwork].
type NetworkPolicy struct {
	typ   PolicyType
	allow Allowlist // only for PolicyAllowlist
}

// NoNetwork returns the "none" policy.
func NoNetwork() NetworkPolicy { return NetworkPolicy{typ: PolicyNone} }

// UnrestrictedNetwork returns the "unrestricted" policy: the public
// internet, never a private address.
func UnrestrictedNetwork() NetworkPolicy { return NetworkPolicy{typ: PolicyUnrestricted} }

// AllowlistNetwork returns the allowlist policy a, checked as
// ParseNetworkPolicy checks a document: hosts canonical and distinct, and
// something to reach ([CodeAllowlistEmpty] otherwise).
func AllowlistNetwork(a Allowlist) (NetworkPolicy, error) {
	if len(a.AllowedHosts) > maxAllowedHosts {
		return NetworkPolicy{}, checkfu.Refuse(CodePolicyInvalid, "egress: allowed_hosts has %d entries (at most %d)", len(a.AllowedHosts), maxAllowedHosts)
	}
	hosts := make([]HostPort, 0, len(a.AllowedHosts))
	for _, h := range a.AllowedHosts {
		c, err := ParseHostPort(h.String())
		if err != nil {
			return NetworkPolicy{}, err
		}
		if c != h {
			return NetworkPolicy{}, checkfu.Refuse(CodePolicyInvalid, "egress: allowed host %s is not canonical (want %q)", checkfu.Quote(h.String()), c.String())
		}
		if slices.Contains(hosts, c) {
			return NetworkPolicy{}, checkfu.Refuse(CodePolicyInvalid, "egress: allowed_hosts lists %q twice", c.String())
		}
		hosts = append(hosts, c)
	}
	if len(hosts) == 0 && !a.AllowPackageManagers {
		return NetworkPolicy{}, checkfu.Refuse(CodeAllowlistEmpty,
			"egress: allowlist reaches nothing: allow_mcp_servers grants no workload host; list allowed_hosts or set allow_package_managers, or use {\"type\":\"none\"}")
	}
	a.AllowedHosts = hosts
	return NetworkPolicy{typ: PolicyAllowlist, allow: a}, nil
}

// Type returns the member of the union, or "" for the zero policy.
func (p NetworkPolicy) Type() PolicyType { return p.typ }

// Allowlist returns the allowlist member (with a fresh AllowedHosts
// slice), and false when p is not an allowlist.
func (p NetworkPolicy) Allowlist() (Allowlist, bool) {
	if p.typ != PolicyAllowlist {
		return Allowlist{}, false
	}
	a := p.allow
	a.AllowedHosts = slices.Clone(a.AllowedHosts)
	return a, true
}

// memberFields lists the exact JSON keys each member may carry.
var memberFields = map[PolicyType][]string{
	PolicyNone:         {"type"},
	PolicyUnrestricted: {"type"},
	PolicyAllowlist:    {"type", "allowed_hosts", "allow_package_managers", "allow_mcp_servers", "required_egress_certification"},
}

// ParseNetworkPolicy parses a network policy document. Decoding is strict:
// valid UTF-8 of at most 64 KiB, exactly one JSON object, no repeated key,
// no trailing data, no null, keys spelt exactly, and only the keys of the
// member named by "type" (so required_egress_certification on "none" or
// "unrestricted" is refused). allowed_hosts entries are "host" (port 443)
// or "host:port" (see [ParseHostPort]); required_egress_certification is
// "advisory_filter" or "security_boundary" (see
// [checkfu.ParseRequirement]). Every refusal has code [CodePolicyInvalid],
// except an allowlist that reaches nothing, [CodeAllowlistEmpty].
func ParseNetworkPolicy(doc []byte) (NetworkPolicy, error) {
	var fields map[string]json.RawMessage
	if err := strictjson.Unmarshal(doc, &fields, policyJSONOpts); err != nil {
		var se *strictjson.Error
		if errors.As(err, &se) && se.Kind == strictjson.KindType {
			return NetworkPolicy{}, checkfu.Refuse(CodePolicyInvalid, "egress: policy document is not a JSON object")
		}
		return NetworkPolicy{}, checkfu.Refuse(CodePolicyInvalid, "egress: policy document: %v", err)
	}
	if fields == nil {
		return NetworkPolicy{}, checkfu.Refuse(CodePolicyInvalid, "egress: policy document is not a JSON object")
	}
	var typ string
	if err := strictField(fields, "type", &typ); err != nil {
		return NetworkPolicy{}, err
	}
	allowed, ok := memberFields[PolicyType(typ)]
	if !ok {
		return NetworkPolicy{}, checkfu.Refuse(CodePolicyInvalid, "egress: policy type %s is not none, unrestricted or allowlist", checkfu.Quote(typ))
	}
	for k, v := range fields {
		if !slices.Contains(allowed, k) {
			return NetworkPolicy{}, checkfu.Refuse(CodePolicyInvalid, "egress: field %s is not part of a %q policy", checkfu.Quote(k), typ)
		}
		if bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
			return NetworkPolicy{}, checkfu.Refuse(CodePolicyInvalid, "egress: field %q is null (omit it instead)", k)
		}
	}
	switch PolicyType(typ) {
	case PolicyNone:
		return NoNetwork(), nil
	case PolicyUnrestricted:
		return UnrestrictedNetwork(), nil
	}
	var (
		a     Allowlist
		hosts []string
		req   string
	)
	if err := optionalField(fields, "allowed_hosts", &hosts); err != nil {
		return NetworkPolicy{}, err
	}
	if err := optionalField(fields, "allow_package_managers", &a.AllowPackageManagers); err != nil {
		return NetworkPolicy{}, err
	}
	if err := optionalField(fields, "allow_mcp_servers", &a.AllowMCPServers); err != nil {
		return NetworkPolicy{}, err
	}
	if _, ok := fields["required_egress_certification"]; ok {
		if err := strictField(fields, "required_egress_certification", &req); err != nil {
			return NetworkPolicy{}, err
		}
		r, err := checkfu.ParseRequirement(req)
		if err != nil {
			return NetworkPolicy{}, checkfu.Refuse(CodePolicyInvalid, "egress: required_egress_certification: %v", err)
		}
		a.RequiredEgressCertification = r
	}
	if len(hosts) > maxAllowedHosts {
		return NetworkPolicy{}, checkfu.Refuse(CodePolicyInvalid, "egress: allowed_hosts has %d entries (at most %d)", len(hosts), maxAllowedHosts)
	}
	for _, s := range hosts {
		h, err := ParseHostPort(s)
		if err != nil {
			return NetworkPolicy{}, err
		}
		a.AllowedHosts = append(a.AllowedHosts, h)
	}
	return AllowlistNetwork(a) // refuses duplicates
}

// policyJSONOpts bounds a policy document: 64 KiB, nested at most 16 deep.
var policyJSONOpts = strictjson.Options{MaxDepth: maxJSONDepth, MaxBytes: maxPolicyDoc}

func strictField(fields map[string]json.RawMessage, key string, v any) error {
	raw, ok := fields[key]
	if !ok {
		return checkfu.Refuse(CodePolicyInvalid, "egress: policy has no %q field", key)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return checkfu.Refuse(CodePolicyInvalid, "egress: field %q has the wrong type", key)
	}
	return nil
}

func optionalField(fields map[string]json.RawMessage, key string, v any) error {
	if _, ok := fields[key]; !ok {
		return nil
	}
	return strictField(fields, key, v)
}

// policyJSON is the wire form of every member; empty fields are omitted.
type policyJSON struct {
	Type                        PolicyType          `json:"type"`
	AllowedHosts                []HostPort          `json:"allowed_hosts,omitempty"`
	AllowPackageManagers        bool                `json:"allow_package_managers,omitempty"`
	AllowMCPServers             bool                `json:"allow_mcp_servers,omitempty"`
	RequiredEgressCertification checkfu.Requirement `json:"required_egress_certification,omitzero"`
	PresetCatalogVersion        string              `json:"preset_catalog_version,omitempty"`
}

// MarshalJSON returns the canonical document of p, which
// ParseNetworkPolicy reads back to an equal policy. Hosts are written as
// "host:port". The zero policy is refused.
func (p NetworkPolicy) MarshalJSON() ([]byte, error) {
	if p.typ == "" {
		return nil, checkfu.Refuse(CodePolicyInvalid, "egress: the zero network policy has no document")
	}
	return json.Marshal(policyJSON{
		Type:                        p.typ,
		AllowedHosts:                p.allow.AllowedHosts,
		AllowPackageManagers:        p.allow.AllowPackageManagers,
		AllowMCPServers:             p.allow.AllowMCPServers,
		RequiredEgressCertification: p.allow.RequiredEgressCertification,
	})
}

// UnmarshalJSON implements json.Unmarshaler with [ParseNetworkPolicy].
func (p *NetworkPolicy) UnmarshalJSON(doc []byte) error {
	v, err := ParseNetworkPolicy(doc)
	if err != nil {
		return err
	}
	*p = v
	return nil
}

// A CompiledPolicy is a network policy as admitted and enforced: its
// abbreviations expanded into exact hosts, pinned to the preset catalog
// version that produced them. Enforcement sees exact hosts only.
//
// The zero CompiledPolicy permits nothing.
type CompiledPolicy struct {
	typ         PolicyType
	hosts       []HostPort // sorted, distinct
	catalog     string     // preset catalog version, when package managers were expanded
	requirement checkfu.Requirement
}

// Compile expands p against catalog: allow_package_managers becomes the
// catalog's hosts (and records catalog's version), allow_mcp_servers
// becomes nothing. A nil catalog means [DefaultPresetCatalog]. The zero
// policy is refused with [CodePolicyInvalid].
func (p NetworkPolicy) Compile(catalog *PresetCatalog) (*CompiledPolicy, error) {
	if catalog == nil {
		catalog = DefaultPresetCatalog()
	}
	switch p.typ {
	case PolicyNone, PolicyUnrestricted:
		return &CompiledPolicy{typ: p.typ}, nil
	case PolicyAllowlist:
	default:
		return nil, checkfu.Refuse(CodePolicyInvalid, "egress: cannot compile the zero network policy")
	}
	c := &CompiledPolicy{typ: PolicyAllowlist, requirement: p.allow.RequiredEgressCertification}
	c.hosts = slices.Clone(p.allow.AllowedHosts)
	if p.allow.AllowPackageManagers {
		c.hosts = append(c.hosts, catalog.hostPorts()...)
		c.catalog = catalog.Version()
	}
	slices.SortFunc(c.hosts, func(a, b HostPort) int {
		if n := strings.Compare(a.Host, b.Host); n != 0 {
			return n
		}
		return int(a.Port) - int(b.Port)
	})
	c.hosts = slices.Compact(c.hosts)
	if len(c.hosts) == 0 {
		return nil, checkfu.Refuse(CodeAllowlistEmpty, "egress: allowlist compiles to no host")
	}
	return c, nil
}

// Type returns the member the policy was compiled from, or "" for the zero
// CompiledPolicy.
func (c *CompiledPolicy) Type() PolicyType { return c.typ }

// AllowedHosts returns the exact destinations an allowlist permits, sorted
// (a copy). It is empty for the other members.
func (c *CompiledPolicy) AllowedHosts() []HostPort { return slices.Clone(c.hosts) }

// PresetCatalogVersion returns the version of the preset catalog whose
// hosts the policy holds, or "" when allow_package_managers was not set.
func (c *CompiledPolicy) PresetCatalogVersion() string { return c.catalog }

// RequiredEgressCertification returns the allowlist's requirement (the
// zero Requirement when omitted or for the other members).
func (c *CompiledPolicy) RequiredEgressCertification() checkfu.Requirement { return c.requirement }

// MarshalJSON returns the compiled document: the member, every exact host
// and, when a preset was expanded, the preset catalog version that
// produced its hosts (a policy that used no preset has none to record),
// so that nothing the policy grants is invisible.
func (c *CompiledPolicy) MarshalJSON() ([]byte, error) {
	if c.typ == "" {
		return nil, checkfu.Refuse(CodePolicyInvalid, "egress: the zero compiled policy has no document")
	}
	return json.Marshal(policyJSON{Type: c.typ, AllowedHosts: c.hosts, RequiredEgressCertification: c.requirement, PresetCatalogVersion: c.catalog})
}

// Permits returns nil when the policy lets the workload reach host:port,
// before any address is considered: host is a canonical DNS name or the
// text of an IP address. The address check ([IsPublic], at connect time)
// still applies afterwards for every member: "unrestricted" means the
// public internet, never the private network.
//
// It refuses with [CodeEgressDisabled] under "none" and the zero policy,
// and with [CodeHostNotAllowed] for a destination an allowlist does not
// list (an IP literal is never listed). It does no I/O.
func (c *CompiledPolicy) Permits(host string, port uint16) error {
	if c == nil {
		c = &CompiledPolicy{} // a nil policy is the zero policy: it permits nothing
	}
	switch c.typ {
	case PolicyUnrestricted:
		return nil
	case PolicyAllowlist:
		if _, err := netip.ParseAddr(host); err == nil {
			return checkfu.Refuse(CodeHostNotAllowed, "egress: %s is an IP literal; an allowlist names hosts only", net2(host, port))
		}
		if _, ok := slices.BinarySearchFunc(c.hosts, HostPort{host, port}, func(a, b HostPort) int {
			if n := strings.Compare(a.Host, b.Host); n != 0 {
				return n
			}
			return int(a.Port) - int(b.Port)
		}); ok {
			return nil
		}
		return checkfu.Refuse(CodeHostNotAllowed, "egress: %s is not in the allowlist", net2(host, port))
	}
	return checkfu.Refuse(CodeEgressDisabled, "egress: the network policy is none; %s is not reachable", net2(host, port))
}

func net2(host string, port uint16) string {
	if strings.Contains(host, ":") {
		return "[" + host + "]:" + strconv.Itoa(int(port))
	}
	return host + ":" + strconv.Itoa(int(port))
}
