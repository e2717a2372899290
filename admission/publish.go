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
	// any origin on the workload's behalf (a warning), or empty. It is
	// set however the host was granted, by hand too.
	RelaysToAnyOrigin string `json:"relays_to_any_origin,omitempty"`
	// ThirdPartyWritable is the catalog's reason when third parties can
	// write what the host serves (a public registry, where any account
	// publishes world-readable bytes), or empty. It is set however the
	// host was granted, by hand too.
	ThirdPartyWritable string `json:"third_party_writable,omitempty"`
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
		}
		if used {
			np.PresetCatalogVersion = catalog.Version()
		}
	}
	// A host the catalog marks as a relay is warned of however it was
	// granted: naming it by hand accepts it, knowingly, and still shows it.
	for _, ph := range catalog.Hosts() {
		g := byHost[egress.HostPort{Host: ph.Host, Port: ph.Port}]
		if g == nil || ph.RelaysToAnyOrigin == "" || g.RelaysToAnyOrigin != "" {
			continue
		}
		g.RelaysToAnyOrigin = ph.RelaysToAnyOrigin
		np.PresetCatalogVersion = catalog.Version()
	}
	// So is a host whose content third parties write: what the grant
	// means is shown wherever the host came from.
	for _, ph := range catalog.Hosts() {
		g := byHost[egress.HostPort{Host: ph.Host, Port: ph.Port}]
		if g == nil || ph.ThirdPartyWritable == "" || g.ThirdPartyWritable != "" {
			continue
		}
		g.ThirdPartyWritable = ph.ThirdPartyWritable
		np.PresetCatalogVersion = catalog.Version()
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

// published reports whether v was made by Publish or ParsePublished:
// the zero Published is no version at all, and has no network policy.
func (v *Published) published() bool {
	return v != nil && v.profile != nil && v.j.Version >= 1
}

// notPublished is the refusal of a Published that no publication made.
func notPublished() error {
	return checkfu.Refuse(CodeProfileInvalid, "admission: not a published version (make one with Publish or ParsePublished)")
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
// preset hosts or marked a host as a relay, or "" when it did neither.
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
// re-derives all of it: the embedded profile must parse and be
// canonical, its digest and both hashes must recompute, and the recorded
// network policy (every host, port, grant, ecosystem and relay warning,
// the requirement and the catalog version) must be exactly what
// [Publish] makes of the embedded profile and the preset catalog the
// version names. That catalog must be one of catalogs (when none is
// given, egress.DefaultPresetCatalog); a version with no preset host
// needs no catalog. The digests are not a signature, so this is what
// stops a stored version from being edited to add a host "granted" by
// the catalog, or to drop a relay warning. Any mismatch is
// [CodePublishedInvalid].
func ParsePublished(doc []byte, catalogs ...*egress.PresetCatalog) (*Published, error) {
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
	want := j
	if err := want.seal(p); err != nil {
		return nil, err
	}
	if want.ProfileDigest != j.ProfileDigest || want.NetworkPolicyHash != j.NetworkPolicyHash || want.DerivedImageDigest != j.DerivedImageDigest {
		return nil, bad("a digest does not recompute from what the version records")
	}
	if err := checkExpansion(p, j.NetworkPolicy, catalogs); err != nil {
		return nil, err
	}
	return &Published{j: j, profile: p}, nil
}

// noPresets is the catalog a version without preset hosts is re-expanded
// against: it grants nothing, so only hand-written hosts remain.
var noPresets = func() *egress.PresetCatalog {
	c, err := egress.NewPresetCatalog("0001-01-01.1", nil)
	if err != nil {
		panic("admission: empty preset catalog: " + err.Error())
	}
	return c
}()

// checkExpansion refuses a recorded policy that is not what expand makes
// of p and the catalog the policy names (one of catalogs, or the default
// catalog when catalogs is empty).
func checkExpansion(p *SandboxProfile, np publishedPolicy, catalogs []*egress.PresetCatalog) error {
	if len(catalogs) == 0 {
		catalogs = []*egress.PresetCatalog{egress.DefaultPresetCatalog()}
	}
	if np.PresetCatalogVersion == "" {
		catalogs = []*egress.PresetCatalog{noPresets}
	}
	named := false
	for _, c := range catalogs {
		if c == nil || (c != noPresets && c.Version() != np.PresetCatalogVersion) {
			continue
		}
		named = true
		got, err := expand(p, c)
		if err != nil {
			continue
		}
		if same, _ := equalJSON(got, np); same {
			return nil
		}
	}
	if !named {
		return checkfu.Refuse(CodePublishedInvalid, "admission: published version: it was published with preset catalog %s, which was not supplied", checkfu.Quote(np.PresetCatalogVersion))
	}
	return checkfu.Refuse(CodePublishedInvalid, "admission: published version: the recorded hosts are not what the profile and preset catalog %s expand to", checkfu.Quote(np.PresetCatalogVersion))
}
