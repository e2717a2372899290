package admission

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/egress"
)

// Ecosystems returns, sorted, the six package ecosystems a SandboxProfile
// can declare: egress's [egress.PresetEcosystems]. Each call returns a
// new slice.
func Ecosystems() []string { return egress.PresetEcosystems() }

// An Image is the base image a profile runs, pinned by digest.
type Image struct {
	// Ref is the image reference, for people ("docker.io/library/python:3.12").
	Ref string `json:"ref"`
	// Digest is "sha256:" and 64 lowercase hex digits; it is what runs.
	Digest string `json:"digest"`
}

// Resources are a profile's limits. DiskMiB and TimeoutSeconds are
// optional: zero means omitted, and an omitted field is absent from the
// canonical encoding.
type Resources struct {
	// CPUMillis is the CPU limit in thousandths of a core.
	CPUMillis int `json:"cpu_millis"`
	// MemoryMiB is the memory limit.
	MemoryMiB int `json:"memory_mib"`
	// DiskMiB is the optional disk limit.
	DiskMiB int `json:"disk_mib,omitzero"`
	// TimeoutSeconds is the optional session timeout.
	TimeoutSeconds int `json:"timeout_seconds,omitzero"`
}

// A SandboxProfile is a profile as written: the network policy union,
// the image, resources and the package ecosystems it declares. Only
// [ParseProfile] makes one from untrusted bytes.
type SandboxProfile struct {
	// Name identifies the profile across its published versions.
	Name string
	// Description is optional text for people.
	Description string
	// Image is the pinned base image.
	Image Image
	// Resources are the limits.
	Resources Resources
	// Ecosystems are the declared package ecosystems, sorted and
	// distinct, each one of [Ecosystems].
	Ecosystems []string
	// NetworkPolicy is the network policy union as written, with its
	// conveniences still in it; [Publish] compiles them away.
	NetworkPolicy egress.NetworkPolicy
}

// profileJSON is the document form. Optional members are omitempty or
// omitzero, so an omitted one is absent from the canonical encoding.
type profileJSON struct {
	Name          string               `json:"name"`
	Description   string               `json:"description,omitempty"`
	Image         Image                `json:"image"`
	Resources     Resources            `json:"resources"`
	Ecosystems    []string             `json:"ecosystems,omitempty"`
	NetworkPolicy egress.NetworkPolicy `json:"network_policy"`
}

// profileDocJSON is what ParseProfile decodes: the network policy is
// parsed by egress afterwards, so that its refusal keeps its code.
type profileDocJSON struct {
	Name          string          `json:"name"`
	Description   string          `json:"description,omitempty"`
	Image         Image           `json:"image"`
	Resources     Resources       `json:"resources"`
	Ecosystems    []string        `json:"ecosystems,omitempty"`
	NetworkPolicy json.RawMessage `json:"network_policy"`
}

// ParseProfile decodes a SandboxProfile document. Decoding is strict
// (valid UTF-8, at most 256 KiB, one value and nothing after it, no
// repeated member at any depth, exact member names, no unknown member),
// the document must validate against [ProfileSchema], and the network
// policy is parsed by egress.ParseNetworkPolicy. Ecosystems and allowed
// hosts are sorted: they are sets, and the order they were written in is
// no part of the profile's identity.
//
// Refusals: [CodeProfileInvalid]; an allowlist that would reach nothing
// (allow_mcp_servers alone) is [CodeAllowlistReachesNothing], wrapping
// egress's own refusal.
func ParseProfile(doc []byte) (*SandboxProfile, error) {
	tree, err := strictTree(doc)
	if err != nil {
		return nil, &checkfu.Refusal{Code: CodeProfileInvalid, Message: "admission: profile", Err: err}
	}
	if err := profileSchema.Validate(tree); err != nil {
		return nil, checkfu.Refuse(CodeProfileInvalid, "admission: profile %s", schemaError(err))
	}
	var pj profileDocJSON
	if err := strictUnmarshal(doc, &pj, CodeProfileInvalid, "profile"); err != nil {
		return nil, err
	}
	np, err := egress.ParseNetworkPolicy(pj.NetworkPolicy)
	if err != nil {
		var r *checkfu.Refusal
		errors.As(err, &r)
		if errors.Is(err, egress.CodeAllowlistEmpty) {
			return nil, reachesNothing(r)
		}
		return nil, &checkfu.Refusal{Code: CodeProfileInvalid, Message: "admission: profile network_policy", Err: r}
	}
	if np, err = canonicalPolicy(np); err != nil {
		return nil, err
	}
	p := &SandboxProfile{
		Name: pj.Name, Description: pj.Description, Image: pj.Image, Resources: pj.Resources,
		Ecosystems: slices.Sorted(slices.Values(pj.Ecosystems)), NetworkPolicy: np,
	}
	if err := p.check(); err != nil {
		return nil, err
	}
	return p, nil
}

func reachesNothing(r *checkfu.Refusal) error {
	return &checkfu.Refusal{Code: CodeAllowlistReachesNothing,
		Message: "admission: the allowlist reaches nothing: allow_mcp_servers grants no workload host (MCP calls cross the capability gateway); list allowed_hosts, or set allow_package_managers with declared ecosystems, or use {\"type\":\"none\"}",
		Err:     r}
}

// check applies the rules of the schema to a profile built in Go, so that
// a profile never reaches publication without them.
func (p *SandboxProfile) check() error {
	doc, err := p.MarshalJSON()
	if err != nil {
		return err
	}
	var tree any
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	if err := dec.Decode(&tree); err != nil {
		return checkfu.Refuse(CodeProfileInvalid, "admission: profile does not encode")
	}
	if err := profileSchema.Validate(tree); err != nil {
		return checkfu.Refuse(CodeProfileInvalid, "admission: profile %s", schemaError(err))
	}
	if !slices.IsSorted(p.Ecosystems) {
		return checkfu.Refuse(CodeProfileInvalid, "admission: profile ecosystems are not sorted")
	}
	// The canonical policy (hosts as host:port) is what a published
	// version embeds and ParsePublished re-parses; it must be within
	// egress's bounds too, or the version could never be read back.
	np, err := canonicalJSON(p.NetworkPolicy)
	if err != nil {
		return checkfu.Refuse(CodeProfileInvalid, "admission: profile network policy does not encode")
	}
	if _, err := egress.ParseNetworkPolicy(np); err != nil {
		var r *checkfu.Refusal
		errors.As(err, &r)
		return &checkfu.Refusal{Code: CodeProfileInvalid, Message: "admission: profile network_policy in canonical form", Err: r}
	}
	return nil
}

// MarshalJSON returns the canonical document of p (see [SandboxProfile.Digest]).
func (p *SandboxProfile) MarshalJSON() ([]byte, error) {
	if p.NetworkPolicy.Type() == "" {
		return nil, checkfu.Refuse(CodeProfileInvalid, "admission: profile has no network policy")
	}
	np, err := canonicalPolicy(p.NetworkPolicy)
	if err != nil {
		return nil, err
	}
	b, err := canonicalJSON(profileJSON{
		Name: p.Name, Description: p.Description, Image: p.Image, Resources: p.Resources,
		Ecosystems: p.Ecosystems, NetworkPolicy: np,
	})
	if err != nil {
		var r *checkfu.Refusal
		if errors.As(err, &r) {
			return nil, r
		}
		return nil, checkfu.Refuse(CodeProfileInvalid, "admission: profile does not encode")
	}
	return b, nil
}

// canonicalPolicy returns np with an allowlist's hosts sorted by name,
// then port: the same set of hosts in any order is one policy, one
// document and one digest.
func canonicalPolicy(np egress.NetworkPolicy) (egress.NetworkPolicy, error) {
	a, ok := np.Allowlist()
	if !ok || slices.IsSortedFunc(a.AllowedHosts, compareHostPort) {
		return np, nil
	}
	a.AllowedHosts = slices.SortedFunc(slices.Values(a.AllowedHosts), compareHostPort)
	out, err := egress.AllowlistNetwork(a)
	if err != nil {
		var r *checkfu.Refusal
		errors.As(err, &r)
		return np, &checkfu.Refusal{Code: CodeProfileInvalid, Message: "admission: profile network_policy", Err: r}
	}
	return out, nil
}

func compareHostPort(a, b egress.HostPort) int {
	if n := strings.Compare(a.Host, b.Host); n != 0 {
		return n
	}
	return int(a.Port) - int(b.Port)
}

// Domain separators of the digests this package computes.
const (
	profileDigestDomain = "checkfu.sandbox-profile.v1\n"
	policyHashDomain    = "checkfu.network-policy.v1\n"
	imageDigestDomain   = "checkfu.derived-image.v1\n"
)

// Digest returns "sha256:" and the hex SHA-256 of the domain separator
// "checkfu.sandbox-profile.v1\n" followed by p's canonical encoding:
// members sorted by name, no white space, hosts as "host:port" in order
// of name then port, and an
// omitted optional member absent (never null, never a zero). So adding an
// optional member to the schema changes no retained profile's digest.
func (p *SandboxProfile) Digest() (string, error) {
	b, err := p.MarshalJSON()
	if err != nil {
		return "", err
	}
	return digestOf(profileDigestDomain, b), nil
}

func digestOf(domain string, body []byte) string {
	h := sha256.New()
	h.Write([]byte(domain))
	h.Write(body)
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}
