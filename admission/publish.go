package admission

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/egress"
)

// A Grant names what put a host into a published allowlist.
type Grant string

// The two grants. allow_mcp_servers grants no host, so it is not one.
const (
	// GrantAllowedHosts: the profile names the host by hand.
	GrantAllowedHosts Grant = "allowed_hosts"
	// GrantAllowPackageManagers: the preset catalog's entry for a declared
	// ecosystem.
	GrantAllowPackageManagers Grant = "allow_package_managers"
)

// A HostGrant is one exact host of a published allowlist with what
// granted it.
type HostGrant struct {
	// Host is a canonical DNS name; Port the exact port.
	Host string `json:"host"`
	Port uint16 `json:"port"`
	// GrantedBy lists the grants that put the host here, sorted.
	GrantedBy []Grant `json:"granted_by"`
	// Ecosystems lists the declared ecosystems whose preset entry holds
	// the host, when allow_package_managers granted it.
	Ecosystems []string `json:"ecosystems,omitempty"`
	// RelaysToAnyOrigin is the catalog's reason when the host can reach
	// any origin on the workload's behalf (a warning), or empty.
	RelaysToAnyOrigin string `json:"relays_to_any_origin,omitempty"`
}

// String returns "host:port".
func (h HostGrant) String() string { return egress.HostPort{Host: h.Host, Port: h.Port}.String() }

// ByHand reports whether the profile names the host in allowed_hosts.
func (h HostGrant) ByHand() bool { return slices.Contains(h.GrantedBy, GrantAllowedHosts) }

// publishedPolicy is the network policy as admitted: exact hosts only.
type publishedPolicy struct {
	Type                        egress.PolicyType   `json:"type"`
	AllowedHosts                []HostGrant         `json:"allowed_hosts,omitempty"`
	RequiredEgressCertification checkfu.Requirement `json:"required_egress_certification,omitzero"`
	PresetCatalogVersion        string              `json:"preset_catalog_version,omitempty"`
}

type publishedJSON struct {
	Name               string          `json:"name"`
	Version            int             `json:"version"`
	Profile            json.RawMessage `json:"profile"`
	ProfileDigest      string          `json:"profile_digest"`
	NetworkPolicy      publishedPolicy `json:"network_policy"`
	NetworkPolicyHash  string          `json:"network_policy_hash"`
	DerivedImageDigest string          `json:"derived_image_digest"`
}

// A Published is one immutable, readable version of a SandboxProfile:
// the profile as written, every exact host with the grant that put it
// there, the preset catalog version that produced them, the network
// policy hash and the derived image digest. Nothing edits a Published:
// every accessor returns a copy, and adopting a newer catalog or changing
// the profile is a new [Publish].
type Published struct {
	j       publishedJSON
	profile *SandboxProfile
}

// Publish compiles profile's conveniences away against catalog (nil for
// egress.DefaultPresetCatalog) and returns the next published version
// after prev (nil for the first, version 1).
//
// allow_package_managers becomes the catalog's exact hosts for the
// declared ecosystems only; allow_mcp_servers becomes no host. An
// allowlist left with no host is refused with
// [CodeAllowlistReachesNothing]. When prev is for another profile name it
// is refused with [CodeVersionConflict].
//
// Publication is idempotent: when the result would record exactly what
// prev records (same profile digest, hosts, catalog version, hashes),
// prev itself is returned and no version is made.
func Publish(prev *Published, profile *SandboxProfile, catalog *egress.PresetCatalog) (*Published, error) {
	if catalog == nil {
		catalog = egress.DefaultPresetCatalog()
	}
	if profile == nil {
		return nil, checkfu.Refuse(CodeProfileInvalid, "admission: no profile to publish")
	}
	if err := profile.check(); err != nil {
		return nil, err
	}
	if prev != nil && prev.j.Name != profile.Name {
		return nil, checkfu.Refuse(CodeVersionConflict, "admission: previous version is of profile %s, not %s", checkfu.Quote(prev.j.Name), checkfu.Quote(profile.Name))
	}
	doc, err := profile.MarshalJSON()
	if err != nil {
		return nil, err
	}
	np, err := expand(profile, catalog)
	if err != nil {
		return nil, err
	}
	j := publishedJSON{Name: profile.Name, Version: 1, Profile: doc, NetworkPolicy: np}
	if err := j.seal(profile); err != nil {
		return nil, err
	}
	if prev != nil {
		j.Version = prev.j.Version
		if same, _ := equalJSON(j, prev.j); same {
			return prev, nil
		}
		j.Version = prev.j.Version + 1
	}
	return &Published{j: j, profile: clone(profile)}, nil
}

// expand is the whole of the compile: exact hosts, each with its grants.
func expand(p *SandboxProfile, catalog *egress.PresetCatalog) (publishedPolicy, error) {
	np := publishedPolicy{Type: p.NetworkPolicy.Type()}
	a, ok := p.NetworkPolicy.Allowlist()
	if !ok {
		return np, nil
	}
	np.RequiredEgressCertification = a.RequiredEgressCertification
	byHost := map[egress.HostPort]*HostGrant{}
	get := func(hp egress.HostPort) *HostGrant {
		g := byHost[hp]
		if g == nil {
			g = &HostGrant{Host: hp.Host, Port: hp.Port}
			byHost[hp] = g
		}
		return g
	}
	for _, hp := range a.AllowedHosts {
		get(hp).GrantedBy = append(get(hp).GrantedBy, GrantAllowedHosts)
	}
	if a.AllowPackageManagers {
		used := false
		for _, ph := range catalog.Hosts() {
			if !slices.Contains(p.Ecosystems, ph.Ecosystem) {
				continue
			}
			used = true
			g := get(egress.HostPort{Host: ph.Host, Port: ph.Port})
			if !slices.Contains(g.GrantedBy, GrantAllowPackageManagers) {
				g.GrantedBy = append(g.GrantedBy, GrantAllowPackageManagers)
			}
			if !slices.Contains(g.Ecosystems, ph.Ecosystem) {
				g.Ecosystems = append(g.Ecosystems, ph.Ecosystem)
			}
			if g.RelaysToAnyOrigin == "" {
				g.RelaysToAnyOrigin = ph.RelaysToAnyOrigin
			}
		}
		if used {
			np.PresetCatalogVersion = catalog.Version()
		}
	}
	if len(byHost) == 0 {
		return np, &checkfu.Refusal{Code: CodeAllowlistReachesNothing,
			Message: "admission: the allowlist reaches nothing: no hand-written host, and allow_package_managers expands to no host for the declared ecosystems " + checkfu.Quote(strings.Join(p.Ecosystems, ","))}
	}
	for _, g := range byHost {
		slices.Sort(g.GrantedBy)
		slices.Sort(g.Ecosystems)
		np.AllowedHosts = append(np.AllowedHosts, *g)
	}
	slices.SortFunc(np.AllowedHosts, compareGrant)
	return np, nil
}

func compareGrant(a, b HostGrant) int {
	if n := strings.Compare(a.Host, b.Host); n != 0 {
		return n
	}
	return int(a.Port) - int(b.Port)
}

// enforcedPolicy is what the network-policy hash covers: the member, the
// exact hosts, the requirement and the catalog version. No flag.
type enforcedPolicy struct {
	Type                        egress.PolicyType   `json:"type"`
	AllowedHosts                []string            `json:"allowed_hosts,omitempty"`
	RequiredEgressCertification checkfu.Requirement `json:"required_egress_certification,omitzero"`
	PresetCatalogVersion        string              `json:"preset_catalog_version,omitempty"`
}

type derivedImage struct {
	BaseDigest           string   `json:"base_digest"`
	Ecosystems           []string `json:"ecosystems,omitempty"`
	NetworkPolicyHash    string   `json:"network_policy_hash"`
	PresetCatalogVersion string   `json:"preset_catalog_version,omitempty"`
}

// seal computes the profile digest and the two hashes of j.
func (j *publishedJSON) seal(p *SandboxProfile) error {
	var err error
	if j.ProfileDigest, err = p.Digest(); err != nil {
		return err
	}
	ep := enforcedPolicy{Type: j.NetworkPolicy.Type, RequiredEgressCertification: j.NetworkPolicy.RequiredEgressCertification, PresetCatalogVersion: j.NetworkPolicy.PresetCatalogVersion}
	for _, h := range j.NetworkPolicy.AllowedHosts {
		ep.AllowedHosts = append(ep.AllowedHosts, h.String())
	}
	b, err := canonicalJSON(ep)
	if err != nil {
		return checkfu.Refuse(CodePublishedInvalid, "admission: network policy does not encode")
	}
	j.NetworkPolicyHash = digestOf(policyHashDomain, b)
	b, err = canonicalJSON(derivedImage{BaseDigest: p.Image.Digest, Ecosystems: p.Ecosystems, NetworkPolicyHash: j.NetworkPolicyHash, PresetCatalogVersion: j.NetworkPolicy.PresetCatalogVersion})
	if err != nil {
		return checkfu.Refuse(CodePublishedInvalid, "admission: derived image does not encode")
	}
	j.DerivedImageDigest = digestOf(imageDigestDomain, b)
	return nil
}

func equalJSON(a, b any) (bool, error) {
	x, err := canonicalJSON(a)
	if err != nil {
		return false, err
	}
	y, err := canonicalJSON(b)
	if err != nil {
		return false, err
	}
	return string(x) == string(y), nil
}

func clone(p *SandboxProfile) *SandboxProfile {
	q := *p
	q.Ecosystems = slices.Clone(p.Ecosystems)
	return &q
}

// Name returns the profile name.
func (v *Published) Name() string { return v.j.Name }

// Version returns the version number, from 1.
func (v *Published) Version() int { return v.j.Version }

// Profile returns the profile as written (a copy).
func (v *Published) Profile() *SandboxProfile { return clone(v.profile) }

// ProfileDigest returns the digest of the profile (see [SandboxProfile.Digest]).
func (v *Published) ProfileDigest() string { return v.j.ProfileDigest }

// PolicyType returns the member of the network policy union.
func (v *Published) PolicyType() egress.PolicyType { return v.j.NetworkPolicy.Type }

// Hosts returns every exact host of the allowlist with its grants, sorted
// (copies); none for the other members.
func (v *Published) Hosts() []HostGrant {
	out := make([]HostGrant, len(v.j.NetworkPolicy.AllowedHosts))
	for i, h := range v.j.NetworkPolicy.AllowedHosts {
		h.GrantedBy = slices.Clone(h.GrantedBy)
		h.Ecosystems = slices.Clone(h.Ecosystems)
		out[i] = h
	}
	return out
}

// Relays returns the hosts that relay to any origin (the published
// expansion's warnings).
func (v *Published) Relays() []HostGrant {
	var out []HostGrant
	for _, h := range v.Hosts() {
		if h.RelaysToAnyOrigin != "" {
			out = append(out, h)
		}
	}
	return out
}

// Requirement returns the allowlist's required_egress_certification (the
// zero Requirement when omitted or for the other members).
func (v *Published) Requirement() checkfu.Requirement {
	return v.j.NetworkPolicy.RequiredEgressCertification
}

// CatalogVersion returns the preset catalog version that produced the
// preset hosts, or "" when no preset host was granted.
func (v *Published) CatalogVersion() string { return v.j.NetworkPolicy.PresetCatalogVersion }

// NetworkPolicyHash returns the hash of the policy as enforced: member,
// exact hosts, requirement and catalog version, no flag.
func (v *Published) NetworkPolicyHash() string { return v.j.NetworkPolicyHash }

// DerivedImageDigest returns the digest of the image the Runner derives:
// base image digest, ecosystems, network policy hash, catalog version.
func (v *Published) DerivedImageDigest() string { return v.j.DerivedImageDigest }

// CompiledPolicy returns the policy enforcement sees: exact hosts only,
// no flag. It is built by egress from the published hosts.
func (v *Published) CompiledPolicy() (*egress.CompiledPolicy, error) {
	var np egress.NetworkPolicy
	switch v.j.NetworkPolicy.Type {
	case egress.PolicyNone:
		np = egress.NoNetwork()
	case egress.PolicyUnrestricted:
		np = egress.UnrestrictedNetwork()
	default:
		a := egress.Allowlist{RequiredEgressCertification: v.j.NetworkPolicy.RequiredEgressCertification}
		for _, h := range v.j.NetworkPolicy.AllowedHosts {
			a.AllowedHosts = append(a.AllowedHosts, egress.HostPort{Host: h.Host, Port: h.Port})
		}
		var err error
		if np, err = egress.AllowlistNetwork(a); err != nil {
			return nil, err
		}
	}
	return np.Compile(nil)
}

// MarshalJSON returns the published document, which [ParsePublished]
// reads back to an equal version.
func (v *Published) MarshalJSON() ([]byte, error) { return marshalNoEscape(v.j) }

// ParsePublished reads a published version document strictly and
// re-derives what it can: the embedded profile must parse and be
// canonical, its digest and both hashes must recompute, every
// hand-written host must be listed with grant allowed_hosts and no other
// host may claim it, and preset grants need allow_package_managers and a
// declared ecosystem. Any mismatch is [CodePublishedInvalid].
func ParsePublished(doc []byte) (*Published, error) {
	var j publishedJSON
	if err := strictUnmarshal(doc, &j, CodePublishedInvalid, "published version"); err != nil {
		return nil, err
	}
	bad := func(format string, args ...any) error {
		return checkfu.Refuse(CodePublishedInvalid, "admission: published version: "+format, args...)
	}
	p, err := ParseProfile(j.Profile)
	if err != nil {
		var r *checkfu.Refusal
		errors.As(err, &r)
		return nil, &checkfu.Refusal{Code: CodePublishedInvalid, Message: "admission: published version: embedded profile", Err: r}
	}
	if canon, _ := p.MarshalJSON(); string(canon) != string(j.Profile) {
		return nil, bad("embedded profile is not canonical")
	}
	if j.Version < 1 || j.Name != p.Name {
		return nil, bad("version %d of %s does not match its profile", j.Version, checkfu.Quote(j.Name))
	}
	if err := checkGrants(p, j.NetworkPolicy); err != nil {
		return nil, err
	}
	want := j
	if err := want.seal(p); err != nil {
		return nil, err
	}
	if want.ProfileDigest != j.ProfileDigest || want.NetworkPolicyHash != j.NetworkPolicyHash || want.DerivedImageDigest != j.DerivedImageDigest {
		return nil, bad("a digest does not recompute from what the version records")
	}
	return &Published{j: j, profile: p}, nil
}

func checkGrants(p *SandboxProfile, np publishedPolicy) error {
	bad := func(format string, args ...any) error {
		return checkfu.Refuse(CodePublishedInvalid, "admission: published version: "+format, args...)
	}
	if np.Type != p.NetworkPolicy.Type() {
		return bad("policy type %s is not the profile's", checkfu.Quote(string(np.Type)))
	}
	a, _ := p.NetworkPolicy.Allowlist()
	if np.RequiredEgressCertification != a.RequiredEgressCertification {
		return bad("requirement is not the profile's")
	}
	if np.Type != egress.PolicyAllowlist {
		if len(np.AllowedHosts) != 0 || np.PresetCatalogVersion != "" {
			return bad("a %s policy lists hosts", np.Type)
		}
		return nil
	}
	if len(np.AllowedHosts) == 0 {
		return bad("an allowlist with no host")
	}
	preset := false
	for i, h := range np.AllowedHosts {
		if i > 0 && compareGrant(np.AllowedHosts[i-1], h) >= 0 {
			return bad("hosts are not sorted and distinct")
		}
		hp := egress.HostPort{Host: h.Host, Port: h.Port}
		if c, err := egress.ParseHostPort(hp.String()); err != nil || c != hp {
			return bad("host %s is not an exact canonical host", checkfu.Quote(h.String()))
		}
		if !slices.IsSorted(h.GrantedBy) || !slices.IsSorted(h.Ecosystems) || len(h.GrantedBy) == 0 || len(slices.Compact(slices.Clone(h.GrantedBy))) != len(h.GrantedBy) {
			return bad("host %s has malformed grants", checkfu.Quote(h.String()))
		}
		if slices.Contains(h.GrantedBy, GrantAllowedHosts) != slices.Contains(a.AllowedHosts, hp) {
			return bad("host %s: allowed_hosts grant disagrees with the profile", checkfu.Quote(h.String()))
		}
		byPreset := slices.Contains(h.GrantedBy, GrantAllowPackageManagers)
		for _, g := range h.GrantedBy {
			if g != GrantAllowedHosts && g != GrantAllowPackageManagers {
				return bad("host %s has grant %s", checkfu.Quote(h.String()), checkfu.Quote(string(g)))
			}
		}
		if byPreset != (len(h.Ecosystems) > 0) || (!byPreset && h.RelaysToAnyOrigin != "") {
			return bad("host %s: preset fields without the preset grant", checkfu.Quote(h.String()))
		}
		for _, e := range h.Ecosystems {
			if !slices.Contains(p.Ecosystems, e) {
				return bad("host %s is granted for undeclared ecosystem %s", checkfu.Quote(h.String()), checkfu.Quote(e))
			}
		}
		preset = preset || byPreset
	}
	if preset && !a.AllowPackageManagers {
		return bad("preset hosts without allow_package_managers")
	}
	if preset != (np.PresetCatalogVersion != "") {
		return bad("catalog version recorded without preset hosts, or preset hosts without it")
	}
	for _, hp := range a.AllowedHosts {
		if _, ok := slices.BinarySearchFunc(np.AllowedHosts, HostGrant{Host: hp.Host, Port: hp.Port}, compareGrant); !ok {
			return bad("hand-written host %s is missing", checkfu.Quote(hp.String()))
		}
	}
	return nil
}
