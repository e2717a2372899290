package main

import (
	"flag"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/admission"
	"github.com/checkfu/checkfu/conformance"
	"github.com/checkfu/checkfu/egress"
	"github.com/checkfu/checkfu/signing"
)

func init() {
	register(&command{
		name:    "profile",
		summary: "publish, diff and select SandboxProfile versions",
		run: func(e *env, args []string) error {
			return subcommands(e, "profile", args, map[string]func(*env, []string) error{
				"publish": profilePublish,
				"diff":    profileDiff,
				"select":  profileSelect,
			})
		},
	})
}

const profileMaxFile = 1 << 20

// profilePublish compiles a profile into a published version and prints
// its expansion.
func profilePublish(e *env, args []string) error {
	fs := newFlagSet(e, "profile publish", "-in PROFILE.json [-catalog CATALOG.json] [-prev PUBLISHED.json] -out PUBLISHED.json")
	in := fs.String("in", "", "`path` of the SandboxProfile document")
	catPath := fs.String("catalog", "", "`path` of a reviewed preset catalog (default: the built-in catalog)")
	prevPath := fs.String("prev", "", "`path` of the previous published version, if any")
	out := fs.String("out", "", "`path` of the published version to write (must not exist)")
	asJSON := fs.Bool("json", false, "print the expansion as one JSON object")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 || *in == "" || *out == "" {
		return usagef("checkfu profile publish needs -in and -out and takes no arguments")
	}
	doc, err := receiptReadLimited(*in, profileMaxFile)
	if err != nil {
		return err
	}
	p, err := admission.ParseProfile(doc)
	if err != nil {
		return withHint(err, "fix the profile; docs/admission.md and admission/schema/sandbox_profile.v1.json describe it")
	}
	var catalog *egress.PresetCatalog
	if *catPath != "" {
		if catalog, err = readCatalog(*catPath); err != nil {
			return err
		}
	}
	var prev *admission.Published
	if *prevPath != "" {
		// prev may have been published with the built-in catalog or
		// with this one (adopting it is a new version).
		known := []*egress.PresetCatalog{egress.DefaultPresetCatalog()}
		if catalog != nil {
			known = append(known, catalog)
		}
		if prev, err = readPublished(*prevPath, known); err != nil {
			return err
		}
	}
	v, err := admission.Publish(prev, p, catalog)
	if err != nil {
		return err
	}
	body, err := v.MarshalJSON()
	if err != nil {
		return err
	}
	if err := attesterWriteNew(*out, append(body, '\n'), 0o644); err != nil {
		return err
	}
	unchanged := prev != nil && v == prev
	if *asJSON {
		if err := writeJSONLine(e.stdout, publishedSummary(v, unchanged)); err != nil {
			return err
		}
	} else {
		printPublished(e, v)
		if unchanged {
			fmt.Fprintf(e.stdout, "unchanged: identical to version %d\n", prev.Version())
		}
	}
	for _, h := range v.Relays() {
		fmt.Fprintf(e.stderr, "warning: %s relays to any origin: %s\n", h, checkfu.Quote(h.RelaysToAnyOrigin))
	}
	return nil
}

// A publishedJSON is what "profile publish -json" prints: the fields the
// text form prints, under stable names.
type publishedJSON struct {
	Profile                     string                `json:"profile"`
	Version                     int                   `json:"version"`
	Unchanged                   bool                  `json:"unchanged"`
	NetworkPolicy               string                `json:"network_policy"`
	RequiredEgressCertification string                `json:"required_egress_certification,omitempty"`
	Hosts                       []admission.HostGrant `json:"hosts"`
	CatalogVersion              string                `json:"catalog_version"`
	ProfileDigest               string                `json:"profile_digest"`
	NetworkPolicyHash           string                `json:"network_policy_hash"`
	DerivedImageDigest          string                `json:"derived_image_digest"`
}

func publishedSummary(v *admission.Published, unchanged bool) publishedJSON {
	out := publishedJSON{
		Profile: v.Name(), Version: int(v.Version()), Unchanged: unchanged, NetworkPolicy: fmt.Sprint(v.PolicyType()),
		Hosts: v.Hosts(), CatalogVersion: v.CatalogVersion(), ProfileDigest: fmt.Sprint(v.ProfileDigest()),
		NetworkPolicyHash: fmt.Sprint(v.NetworkPolicyHash()), DerivedImageDigest: fmt.Sprint(v.DerivedImageDigest()),
	}
	if r := v.Requirement(); !r.IsZero() {
		out.RequiredEgressCertification = r.String()
	}
	if out.Hosts == nil {
		out.Hosts = []admission.HostGrant{}
	}
	return out
}

func printPublished(e *env, v *admission.Published) {
	fmt.Fprintf(e.stdout, "profile %s version %d\n", v.Name(), v.Version())
	fmt.Fprintf(e.stdout, "network policy: %s\n", v.PolicyType())
	if r := v.Requirement(); !r.IsZero() {
		fmt.Fprintf(e.stdout, "required egress certification: %s\n", r)
	}
	for _, h := range v.Hosts() {
		grants := make([]string, len(h.GrantedBy))
		for i, g := range h.GrantedBy {
			grants[i] = string(g)
		}
		line := fmt.Sprintf("host %s granted by %s", h, strings.Join(grants, "+"))
		if len(h.Ecosystems) > 0 {
			line += " (" + strings.Join(h.Ecosystems, ",") + ")"
		}
		if h.RelaysToAnyOrigin != "" {
			line += " [relays to any origin]"
		}
		if h.ThirdPartyWritable != "" {
			line += " [third-party writable]"
		}
		fmt.Fprintln(e.stdout, line)
	}
	cat := v.CatalogVersion()
	if cat == "" {
		cat = "none (no preset host)"
	}
	fmt.Fprintf(e.stdout, "catalog version: %s\n", cat)
	fmt.Fprintf(e.stdout, "profile digest: %s\n", v.ProfileDigest())
	fmt.Fprintf(e.stdout, "network policy hash: %s\n", v.NetworkPolicyHash())
	fmt.Fprintf(e.stdout, "derived image digest: %s\n", v.DerivedImageDigest())
}

func readCatalog(path string) (*egress.PresetCatalog, error) {
	b, err := receiptReadLimited(path, profileMaxFile)
	if err != nil {
		return nil, err
	}
	return admission.ParseCatalog(b)
}

// catalogFlag collects repeated -catalog paths: the preset catalogs a
// published version may name, besides the built-in one.
func catalogFlag(fs *flag.FlagSet) *[]string {
	var paths []string
	fs.Func("catalog", "`path` of a reviewed preset catalog a published version may name (repeatable; the built-in catalog is always known)", func(p string) error {
		paths = append(paths, p)
		return nil
	})
	return &paths
}

// knownCatalogs returns the built-in catalog and those at paths.
func knownCatalogs(paths []string) ([]*egress.PresetCatalog, error) {
	out := []*egress.PresetCatalog{egress.DefaultPresetCatalog()}
	for _, p := range paths {
		c, err := readCatalog(p)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// readPublished reads a published version, re-deriving its expansion
// against the catalog it names, which must be one of catalogs.
func readPublished(path string, catalogs []*egress.PresetCatalog) (*admission.Published, error) {
	b, err := receiptReadLimited(path, profileMaxFile)
	if err != nil {
		return nil, err
	}
	v, err := admission.ParsePublished(b, catalogs...)
	if err != nil {
		return nil, withHint(err, "a published version is written by \"checkfu profile publish\" and never edited")
	}
	return v, nil
}

// profileDiff prints what changed between two published versions.
func profileDiff(e *env, args []string) error {
	fs := newFlagSet(e, "profile diff", "[-catalog CATALOG.json]... OLD.json NEW.json")
	catPaths := catalogFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return usagef("checkfu profile diff needs two published versions, OLD and NEW")
	}
	catalogs, err := knownCatalogs(*catPaths)
	if err != nil {
		return err
	}
	old, err := readPublished(fs.Arg(0), catalogs)
	if err != nil {
		return err
	}
	new, err := readPublished(fs.Arg(1), catalogs)
	if err != nil {
		return err
	}
	d := admission.DiffVersions(old, new)
	fmt.Fprintf(e.stdout, "version %d -> %d\n", d.OldVersion, d.NewVersion)
	if d.OldType != d.NewType {
		fmt.Fprintf(e.stdout, "network policy: %s -> %s\n", d.OldType, d.NewType)
	}
	if d.OldRequirement != d.NewRequirement {
		fmt.Fprintf(e.stdout, "required egress certification: %s -> %s\n", d.OldRequirement.Min(), d.NewRequirement.Min())
	}
	if d.OldCatalog != d.NewCatalog {
		fmt.Fprintf(e.stdout, "catalog version: %q -> %q\n", d.OldCatalog, d.NewCatalog)
	}
	for _, h := range d.Widened {
		fmt.Fprintf(e.stdout, "+ %s (widened)\n", h)
	}
	for _, h := range d.Narrowed {
		fmt.Fprintf(e.stdout, "- %s (narrowed)\n", h)
	}
	if d.Widens() {
		fmt.Fprintln(e.stdout, "widens: yes")
	} else {
		fmt.Fprintln(e.stdout, "widens: no")
	}
	return nil
}

// profileSelect prints the exact provider revision a published version
// selects, or the typed refusal with each candidate's reason. The
// providers document names the candidates: each pair is printed as a
// cell (quoted unless it is printable and holds no space).
func profileSelect(e *env, args []string) error {
	fs := newFlagSet(e, "profile select", "-profile PUBLISHED.json -providers PROVIDERS.json [-catalog CATALOG.json]... [-attesters SET.json -receipts DIR]")
	catPaths := catalogFlag(fs)
	profPath := fs.String("profile", "", "`path` of the published version")
	provPath := fs.String("providers", "", "`path` of the providers document")
	setPath := fs.String("attesters", "", "`path` of the reviewed attester set (default: the built-in set, which is empty)")
	dir := fs.String("receipts", "", "`directory` of receipt envelopes (*.json)")
	asJSON := fs.Bool("json", false, "print each candidate and the selection as one JSON object")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 || *profPath == "" || *provPath == "" {
		return usagef("checkfu profile select needs -profile and -providers and takes no arguments")
	}
	catalogs, err := knownCatalogs(*catPaths)
	if err != nil {
		return err
	}
	v, err := readPublished(*profPath, catalogs)
	if err != nil {
		return err
	}
	b, err := receiptReadLimited(*provPath, profileMaxFile)
	if err != nil {
		return err
	}
	cands, err := admission.ParseCandidates(b)
	if err != nil {
		return err
	}
	set := conformance.BuiltinAttesters()
	if *setPath != "" {
		if set, err = loadAttesterSet(*setPath); err != nil {
			return err
		}
	}
	if *dir != "" {
		receipts, err := loadReceipts(e, set, *dir)
		if err != nil {
			return err
		}
		for i := range cands {
			cands[i].Receipt = receipts[cands[i].Target]
		}
	}
	s, err := admission.Select(v, cands)
	if *asJSON {
		if werr := writeJSONLine(e.stdout, selectionSummary(s, err)); werr != nil {
			return werr
		}
		return err
	}
	for _, c := range s.Candidates {
		status := "ok"
		if c.Err != nil {
			status = c.Err.Error() // "refused: CODE: why", naming required and actual
		}
		fmt.Fprintf(e.stdout, "candidate %s: grade %s: %s\n", cell(c.Target.String()), c.Grade, status)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "selected %s\n", cell(s.Chosen.Target.String()))
	return nil
}

// A selectionJSON is what "profile select -json" prints: each candidate
// with its grade and, when refused, its code and reason; the selected
// pair, or the refusal's code when none qualified.
type selectionJSON struct {
	Candidates []candidateJSON `json:"candidates"`
	Selected   *pairJSON       `json:"selected"`
	Code       string          `json:"code,omitempty"`
}

// pairJSON is an exact provider revision in JSON.
type pairJSON struct {
	Provider string `json:"provider"`
	Revision string `json:"revision"`
}

type candidateJSON struct {
	Target pairJSON      `json:"target"`
	Grade  checkfu.Grade `json:"grade"`
	Code   string        `json:"code,omitempty"`
	Reason string        `json:"reason,omitempty"`
}

func selectionSummary(s *admission.Selection, err error) selectionJSON {
	out := selectionJSON{Candidates: []candidateJSON{}}
	if s != nil {
		for _, c := range s.Candidates {
			cj := candidateJSON{Target: pairJSON{c.Target.Provider, c.Target.Revision}, Grade: c.Grade}
			if c.Err != nil {
				code, _ := checkfu.CodeOf(c.Err)
				cj.Code, cj.Reason = string(code), c.Err.Error()
			}
			out.Candidates = append(out.Candidates, cj)
		}
		if err == nil {
			out.Selected = &pairJSON{s.Chosen.Target.Provider, s.Chosen.Target.Revision}
		}
	}
	if err != nil {
		code, _ := checkfu.CodeOf(err)
		out.Code = string(code)
	}
	return out
}

// loadReceipts verifies every *.json in dir against set and keeps, per
// exact pair, a receipt that certifies it. A receipt that does not verify
// is reported and ignored: it certifies nothing. Its file name is
// printed quoted (checkfu.Quote): whoever delivered it named it.
func loadReceipts(e *env, set *signing.AttesterSet, dir string) (map[checkfu.ProviderRevision]*conformance.Receipt, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	out := map[checkfu.ProviderRevision]*conformance.Receipt{}
	for _, p := range paths {
		b, err := receiptReadLimited(p, signing.MaxEnvelopeSize)
		if err != nil {
			return nil, err
		}
		r, err := conformance.Verify(set, b)
		if err != nil {
			code, _ := checkfu.CodeOf(err)
			fmt.Fprintf(e.stderr, "note: %s ignored: %s\n", checkfu.Quote(filepath.Base(p)), code)
			continue
		}
		target := r.Record().Target
		if r.Certifies(target) == nil {
			out[target] = r
		}
	}
	return out, nil
}
