package egress

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/checkfu/checkfu"
)

// A PresetHost is one exact destination of the package-manager preset
// catalog.
type PresetHost struct {
	// Ecosystem is one of the six ecosystems a SandboxProfile can
	// declare: apt, cargo, gem, go, npm, pip.
	Ecosystem string
	// Host is a canonical DNS name (see [CanonicalHost]); never a
	// wildcard.
	Host string
	// Port is the exact port the ecosystem's client uses.
	Port uint16
	// Purpose says what the client fetches there.
	Purpose string
	// RedirectsTo lists the hosts this one is known to redirect to. Each
	// is itself in the catalog: a redirect is rechecked like any request,
	// so an expected target that is not in the catalog would be refused.
	RedirectsTo []string
	// RelaysToAnyOrigin, when not empty, says why this host can reach
	// any origin on the workload's behalf: a relay such as a module proxy
	// fetches whatever path the workload names from that path's own
	// origin, so a workload can make it contact a server of its choosing
	// and data can ride in the path. Empty means the host serves only its
	// own content.
	RelaysToAnyOrigin string
	// ThirdPartyWritable, when not empty, says why what this host serves
	// can be written by third parties: on a public registry any account
	// can publish world-readable bytes, so a workload granted the host
	// can fetch content an attacker wrote, and can publish what anyone
	// may then read. Empty means only the host's operators write what it
	// serves.
	ThirdPartyWritable string
}

// A PresetCatalog is a versioned, dated list of exact hosts and ports that
// allow_package_managers expands to. A compiled policy records the version
// of the catalog that produced its hosts, so a later catalog never widens a
// policy that already exists: adopting it is a new compile, a visible
// policy change.
//
// The catalog holds only hosts run by each ecosystem for itself: no
// shared-tenant storage or content hosts (cloud object stores, raw-content
// domains of code hosts), through which a workload could reach any bucket
// or repository. An ecosystem that redirects some downloads to such a host
// has those downloads refused, visibly, rather than the host admitted.
type PresetCatalog struct {
	version string
	hosts   []PresetHost
}

// presetCatalogV1 is the catalog as of its version date. Change it only by
// adding a new catalog with a new version.
var presetCatalogV1 = PresetCatalog{
	version: "2026-11-30.1",
	hosts: []PresetHost{
		{Ecosystem: "apt", Host: "archive.ubuntu.com", Port: 80, Purpose: "Ubuntu archive (apt fetches over http; packages are signed)"},
		{Ecosystem: "apt", Host: "deb.debian.org", Port: 80, Purpose: "Debian archive (apt fetches over http; packages are signed)"},
		{Ecosystem: "apt", Host: "deb.debian.org", Port: 443, Purpose: "Debian archive over https"},
		{Ecosystem: "apt", Host: "security.debian.org", Port: 80, Purpose: "Debian security updates"},
		{Ecosystem: "apt", Host: "security.ubuntu.com", Port: 80, Purpose: "Ubuntu security updates"},
		{Ecosystem: "cargo", Host: "crates.io", Port: 443, Purpose: "crate API; downloads redirect to static.crates.io", RedirectsTo: []string{"static.crates.io"},
			ThirdPartyWritable: "any account can publish a crate; its API serves every published crate to anyone"},
		{Ecosystem: "cargo", Host: "index.crates.io", Port: 443, Purpose: "sparse registry index",
			ThirdPartyWritable: "lists every crate any account publishes"},
		{Ecosystem: "cargo", Host: "static.crates.io", Port: 443, Purpose: "crate downloads",
			ThirdPartyWritable: "serves the bytes of every crate any account publishes"},
		{Ecosystem: "gem", Host: "index.rubygems.org", Port: 443, Purpose: "compact index",
			ThirdPartyWritable: "lists every gem any account publishes"},
		{Ecosystem: "gem", Host: "rubygems.org", Port: 443, Purpose: "gem API and downloads",
			ThirdPartyWritable: "any account can push a gem; it serves every pushed gem to anyone"},
		{Ecosystem: "go", Host: "proxy.golang.org", Port: 443, Purpose: "module proxy",
			RelaysToAnyOrigin:  "fetches any public module path from its origin on demand: the workload chooses the server the proxy contacts, and data can ride in the module path",
			ThirdPartyWritable: "serves any public module, which anyone publishes by tagging a repository"},
		{Ecosystem: "go", Host: "sum.golang.org", Port: 443, Purpose: "checksum database",
			RelaysToAnyOrigin:  "a lookup of a module the database has not seen makes it fetch that module path from its origin: the workload chooses the server, and data can ride in the path",
			ThirdPartyWritable: "records a checksum line, readable by anyone, for any module anyone publishes"},
		{Ecosystem: "npm", Host: "registry.npmjs.org", Port: 443, Purpose: "registry metadata and tarballs",
			ThirdPartyWritable: "any account can publish a package; the registry serves every published version to anyone"},
		{Ecosystem: "pip", Host: "files.pythonhosted.org", Port: 443, Purpose: "distribution downloads",
			ThirdPartyWritable: "serves the files of every project any account uploads"},
		{Ecosystem: "pip", Host: "pypi.org", Port: 443, Purpose: "simple index and JSON API",
			ThirdPartyWritable: "any account can upload a project; its index serves every upload to anyone"},
	},
}

// presetEcosystems is the table [PresetEcosystems] returns a copy of.
var presetEcosystems = [...]string{"apt", "cargo", "gem", "go", "npm", "pip"}

// PresetEcosystems returns the six ecosystems a SandboxProfile can
// declare, sorted. Each call returns a new slice: changing it changes
// nothing a catalog or a profile accepts.
func PresetEcosystems() []string { return slices.Clone(presetEcosystems[:]) }

// DefaultPresetCatalog returns the current catalog.
func DefaultPresetCatalog() *PresetCatalog { return &presetCatalogV1 }

// Version returns the catalog version, "YYYY-MM-DD.N": the date it was
// reviewed and a serial for that day.
func (c *PresetCatalog) Version() string { return c.version }

// Hosts returns a copy of the catalog's entries, sorted by ecosystem,
// host and port.
func (c *PresetCatalog) Hosts() []PresetHost {
	out := make([]PresetHost, len(c.hosts))
	for i, h := range c.hosts {
		h.RedirectsTo = slices.Clone(h.RedirectsTo)
		out[i] = h
	}
	return out
}

// hostPorts returns the distinct destinations of the catalog.
func (c *PresetCatalog) hostPorts() []HostPort {
	out := make([]HostPort, 0, len(c.hosts))
	for _, h := range c.hosts {
		out = append(out, HostPort{Host: h.Host, Port: h.Port})
	}
	return out
}

// String returns "host:port".
func (h PresetHost) String() string { return h.Host + ":" + strconv.Itoa(int(h.Port)) }

// catalogVersion is the form of a catalog version: "YYYY-MM-DD.N".
var catalogVersion = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}\.[1-9][0-9]{0,5}$`)

// maxPresetHosts bounds a catalog built with NewPresetCatalog.
const maxPresetHosts = 256

// NewPresetCatalog returns a catalog of the given version holding hosts
// (copied), for an operator who reviews and ships a catalog of their own.
// It refuses, with [CodePolicyInvalid]: a version not "YYYY-MM-DD.N"; an
// ecosystem not one of [PresetEcosystems]; a host that is not canonical;
// port 0; an entry without a purpose; the same (host, port) twice; a
// redirect target that is not itself in the catalog; more than 256
// entries. The entries are sorted by ecosystem, host and port.
func NewPresetCatalog(version string, hosts []PresetHost) (*PresetCatalog, error) {
	if !catalogVersion.MatchString(version) {
		return nil, checkfu.Refuse(CodePolicyInvalid, "egress: preset catalog version %s is not YYYY-MM-DD.N", checkfu.Quote(version))
	}
	if len(hosts) > maxPresetHosts {
		return nil, checkfu.Refuse(CodePolicyInvalid, "egress: preset catalog has %d entries (at most %d)", len(hosts), maxPresetHosts)
	}
	c := &PresetCatalog{version: version}
	names := map[string]bool{}
	for _, h := range hosts {
		names[h.Host] = true
	}
	seen := map[HostPort]bool{}
	for _, h := range hosts {
		if !slices.Contains(presetEcosystems[:], h.Ecosystem) {
			return nil, checkfu.Refuse(CodePolicyInvalid, "egress: preset %s: ecosystem %s is not one of %s", checkfu.Quote(h.String()), checkfu.Quote(h.Ecosystem), strings.Join(presetEcosystems[:], ", "))
		}
		if canon, err := CanonicalHost(h.Host); err != nil || canon != h.Host {
			return nil, checkfu.Refuse(CodePolicyInvalid, "egress: preset host %s is not a canonical DNS name", checkfu.Quote(h.Host))
		}
		if h.Port == 0 {
			return nil, checkfu.Refuse(CodePolicyInvalid, "egress: preset %s has no port", checkfu.Quote(h.String()))
		}
		if h.Purpose == "" {
			return nil, checkfu.Refuse(CodePolicyInvalid, "egress: preset %s has no purpose", checkfu.Quote(h.String()))
		}
		hp := HostPort{Host: h.Host, Port: h.Port}
		if seen[hp] {
			return nil, checkfu.Refuse(CodePolicyInvalid, "egress: preset catalog lists %s twice", checkfu.Quote(h.String()))
		}
		seen[hp] = true
		for _, r := range h.RedirectsTo {
			if !names[r] {
				return nil, checkfu.Refuse(CodePolicyInvalid, "egress: preset %s redirects to %s, which is not in the catalog", checkfu.Quote(h.String()), checkfu.Quote(r))
			}
		}
		h.RedirectsTo = slices.Clone(h.RedirectsTo)
		c.hosts = append(c.hosts, h)
	}
	slices.SortFunc(c.hosts, func(a, b PresetHost) int {
		if n := strings.Compare(a.Ecosystem, b.Ecosystem); n != 0 {
			return n
		}
		if n := strings.Compare(a.Host, b.Host); n != 0 {
			return n
		}
		return int(a.Port) - int(b.Port)
	})
	return c, nil
}
