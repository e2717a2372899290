package admission_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/admission"
	"github.com/checkfu/checkfu/admission/admissiontest"
	"github.com/checkfu/checkfu/conformance"
)

var hostPool = []string{"api.example.com", "pypi.org", "proxy.golang.org", "registry.npmjs.org", "data.example.org:8443", "deb.debian.org:80"}

// genPolicy draws a network policy member as a JSON value.
func genPolicy(t *rapid.T) map[string]any {
	switch rapid.IntRange(0, 2).Draw(t, "type") {
	case 0:
		return map[string]any{"type": "none"}
	case 1:
		return map[string]any{"type": "unrestricted"}
	}
	np := map[string]any{"type": "allowlist"}
	hosts := rapid.SliceOfNDistinct(rapid.SampledFrom(hostPool), 0, 4, rapid.ID[string]).Draw(t, "hosts")
	if len(hosts) > 0 || rapid.Bool().Draw(t, "empty hosts list") {
		np["allowed_hosts"] = hosts
	}
	pm := rapid.Bool().Draw(t, "pm")
	if pm || rapid.Bool().Draw(t, "pm false written") {
		np["allow_package_managers"] = pm
	}
	if len(hosts) == 0 && !pm {
		np["allowed_hosts"] = []string{"api.example.com"}
	}
	if rapid.Bool().Draw(t, "mcp") {
		np["allow_mcp_servers"] = true
	}
	if r := rapid.IntRange(0, 2).Draw(t, "req"); r > 0 {
		np["required_egress_certification"] = []string{"", "advisory_filter", "security_boundary"}[r]
	}
	return np
}

// genDoc draws a valid profile document; optional members are present
// only when withOptional.
func genDoc(t *rapid.T, withOptional bool) []byte {
	doc := map[string]any{
		"name":      rapid.StringMatching(`[a-z][a-z0-9-]{0,10}`).Draw(t, "name"),
		"image":     map[string]any{"ref": "docker.io/library/x:1", "digest": imageDigest},
		"resources": map[string]any{"cpu_millis": rapid.IntRange(100, 64000).Draw(t, "cpu"), "memory_mib": rapid.IntRange(64, 4096).Draw(t, "mem")},
	}
	eco := rapid.SliceOfNDistinct(rapid.SampledFrom(admission.Ecosystems()), 1, 6, rapid.ID[string]).Draw(t, "ecosystems")
	doc["network_policy"] = genPolicy(t)
	if withOptional {
		doc["ecosystems"] = eco
		if rapid.Bool().Draw(t, "description") {
			doc["description"] = "d"
		}
		if rapid.Bool().Draw(t, "disk") {
			doc["resources"].(map[string]any)["disk_mib"] = 128
		}
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func parseOrSkip(t *rapid.T, doc []byte) *admission.SandboxProfile {
	p, err := admission.ParseProfile(doc)
	if err != nil {
		t.Fatalf("generated profile %s refused: %v", doc, err)
	}
	return p
}

func TestPropExpansionDeterministic(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		doc := genDoc(t, true)
		a, errA := admission.Publish(nil, parseOrSkip(t, doc), nil)
		b, errB := admission.Publish(nil, parseOrSkip(t, doc), nil)
		if (errA == nil) != (errB == nil) {
			t.Fatalf("publish %s: %v then %v", doc, errA, errB)
		}
		if errA != nil {
			return
		}
		ja, _ := a.MarshalJSON()
		jb, _ := b.MarshalJSON()
		if !bytes.Equal(ja, jb) {
			t.Fatalf("two expansions of %s differ:\n%s\n%s", doc, ja, jb)
		}
	})
}

func TestPropPublicationIdempotent(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := parseOrSkip(t, genDoc(t, true))
		v, err := admission.Publish(nil, p, nil)
		if err != nil {
			return
		}
		again, err := admission.Publish(v, p, nil)
		if err != nil || again != v {
			t.Fatalf("republishing the same profile and catalog = %v, %v; want the same version", again, err)
		}
		doc, _ := v.MarshalJSON()
		back, err := admission.ParsePublished(doc)
		if err != nil {
			t.Fatalf("ParsePublished(%s): %v", doc, err)
		}
		if again, err := admission.Publish(back, p, nil); err != nil || again != back {
			t.Fatalf("republishing after a read back made a new version")
		}
	})
}

func TestPropSelectionNeverBelowRequirement(t *testing.T) {
	targets := []checkfu.ProviderRevision{pairA, pairB, {Provider: pairA.Provider, Revision: "4"}}
	receipts := map[checkfu.ProviderRevision]*conformance.Receipt{}
	for _, tg := range targets {
		receipts[tg], _ = admissiontest.Receipt(t, tg)
	}
	rapid.Check(t, func(t *rapid.T) {
		v, err := admission.Publish(nil, parseOrSkip(t, genDoc(t, true)), nil)
		if err != nil {
			return
		}
		n := rapid.IntRange(0, 5).Draw(t, "n")
		var cs []admission.Candidate
		for i := range n {
			c := admission.Candidate{
				Target:                 rapid.SampledFrom(targets).Draw(t, "target"),
				Advertised:             checkfu.Grade(rapid.IntRange(0, 3).Draw(t, "grade")),
				NetworkPolicyAuthority: admission.Authority(rapid.IntRange(0, 2).Draw(t, "np")),
			}
			if rapid.Bool().Draw(t, "receipt") {
				c.Receipt = receipts[rapid.SampledFrom(targets).Draw(t, "receipt for")]
			}
			_ = i
			cs = append(cs, c)
		}
		s, err := admission.Select(v, cs)
		anyOK := slices.ContainsFunc(cs, func(c admission.Candidate) bool {
			return v.PolicyType() != "allowlist" || c.Grade() >= v.Requirement().Min()
		})
		if err != nil {
			if anyOK {
				t.Fatalf("a candidate qualifies but Select refused: %v", err)
			}
			return
		}
		if v.PolicyType() == "allowlist" && s.Chosen.Grade() < v.Requirement().Min() {
			t.Fatalf("chose %s graded %s for requirement %s", s.Chosen.Target, s.Chosen.Grade(), v.Requirement().Min())
		}
		if s.Chosen.Grade() == checkfu.SecurityBoundary && s.Chosen.Receipt.Certifies(s.Chosen.Target) != nil {
			t.Fatalf("security_boundary without a receipt for the exact pair")
		}
	})
}

func genCapability(t *rapid.T, label string) admission.RunnerProviderCapability {
	set := func(name string, pool ...string) []string {
		s := rapid.SliceOfNDistinct(rapid.SampledFrom(pool), 0, len(pool), rapid.ID[string]).Draw(t, label+name)
		slices.Sort(s)
		return s
	}
	var e admission.Enforcement
	for i := range e {
		e[i] = admission.Authority(rapid.IntRange(0, 2).Draw(t, label+"auth"))
	}
	return admission.RunnerProviderCapability{
		Drivers: set("drivers", "docker", "e2b", "vm"), LaunchKinds: set("launch", "process", "service"), Tiers: set("tiers", "a", "b"),
		Platforms: set("platforms", "linux/amd64", "linux/arm64"), NetworkModes: set("net", "allowlist", "none", "unrestricted"),
		RetentionModes: set("ret", "standard", "zero"), MountKinds: set("mounts", "memory", "project"), RuntimeAssurances: set("ra", "gvisor", "kata"),
		SnapshotClone: rapid.Bool().Draw(t, label+"clone"), SnapshotCustody: set("custody", "plane", "provider"),
		PackageMaterialization: set("pm", "build", "layer"), Enforcement: e, EgressCertification: checkfu.Grade(rapid.IntRange(0, 2).Draw(t, label+"grade")),
		ImageModes: set("im", "derived", "fixed"), FixedBaseImages: set("fbi", "sha256:a", "sha256:b"), PackageManagers: set("pkg", admission.Ecosystems()...),
		Snapshots: rapid.Bool().Draw(t, label+"snap"), ListDir: rapid.Bool().Draw(t, label+"ls"),
	}
}

// within reports whether x is no wider than y on every axis.
func within(x, y admission.RunnerProviderCapability) bool {
	xv, yv := reflect.ValueOf(x), reflect.ValueOf(y)
	for i := range xv.NumField() {
		switch a := xv.Field(i).Interface().(type) {
		case []string:
			for _, s := range a {
				if !slices.Contains(yv.Field(i).Interface().([]string), s) {
					return false
				}
			}
		case bool:
			if a && !yv.Field(i).Bool() {
				return false
			}
		case checkfu.Grade:
			if a > yv.Field(i).Interface().(checkfu.Grade) {
				return false
			}
		case admission.Enforcement:
			b := yv.Field(i).Interface().(admission.Enforcement)
			for j := range a {
				if a[j] > b[j] {
					return false
				}
			}
		default:
			panic("within: unhandled axis type " + xv.Field(i).Type().String())
		}
	}
	return true
}

func TestPropIntersectionNeverWidens(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a, b := genCapability(t, "a"), genCapability(t, "b")
		got := admission.Intersect(a, b)
		if !within(got, a) || !within(got, b) {
			t.Fatalf("Intersect widened an axis:\na   %+v\nb   %+v\ngot %+v", a, b, got)
		}
		if err := got.Check(); err != nil {
			t.Fatalf("intersection is not a valid capability: %v", err)
		}
		if aa := admission.Intersect(a, a); !within(a, aa) || !within(aa, a) {
			t.Fatalf("Intersect(a, a) != a")
		}
	})
}

// retainedProfile is the profile schema as it was before any optional
// member existed. A profile that uses none must digest the same under it.
type retainedProfile struct {
	Name      string          `json:"name"`
	Image     admission.Image `json:"image"`
	Resources struct {
		CPUMillis int `json:"cpu_millis"`
		MemoryMiB int `json:"memory_mib"`
	} `json:"resources"`
	NetworkPolicy json.RawMessage `json:"network_policy"`
}

func TestPropDigestIgnoresAbsentOptionalFields(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := parseOrSkip(t, genDoc(t, false))
		got, err := p.Digest()
		if err != nil {
			t.Fatal(err)
		}
		np, _ := p.NetworkPolicy.MarshalJSON()
		r := retainedProfile{Name: p.Name, Image: p.Image, NetworkPolicy: np}
		r.Resources.CPUMillis, r.Resources.MemoryMiB = p.Resources.CPUMillis, p.Resources.MemoryMiB
		raw, _ := json.Marshal(r)
		var tree any
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		_ = dec.Decode(&tree)
		canon, _ := json.Marshal(tree)
		sum := sha256.Sum256(append([]byte("checkfu.sandbox-profile.v1\n"), canon...))
		if want := "sha256:" + hex.EncodeToString(sum[:]); got != want {
			t.Fatalf("digest %s under the current schema, %s under the retained one (%s)", got, want, canon)
		}
	})
}

// TestPropHostOrderIsNotIdentity: the same allowed hosts written in any
// order give one canonical document, one profile digest and one network
// policy hash, and publishing the reordered profile over the first
// version gives that version back, not a new one.
func TestPropHostOrderIsNotIdentity(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		hosts := rapid.SliceOfNDistinct(rapid.SampledFrom(hostPool), 2, len(hostPool), rapid.ID[string]).Draw(t, "hosts")
		perm := rapid.Permutation(hosts).Draw(t, "reordered")
		doc := func(hs []string) string {
			b, _ := json.Marshal(hs)
			return profileDoc(`["go", "pip"]`, `{"type": "allowlist", "allowed_hosts": `+string(b)+`, "allow_package_managers": true}`)
		}
		a, err := admission.ParseProfile([]byte(doc(hosts)))
		if err != nil {
			t.Fatal(err)
		}
		b, err := admission.ParseProfile([]byte(doc(perm)))
		if err != nil {
			t.Fatal(err)
		}
		da, _ := a.Digest()
		db, _ := b.Digest()
		ja, _ := a.MarshalJSON()
		jb, _ := b.MarshalJSON()
		if da != db || !bytes.Equal(ja, jb) {
			t.Fatalf("hosts %v and %v: digests %s and %s, documents %s and %s", hosts, perm, da, db, ja, jb)
		}
		v1, err := admission.Publish(nil, a, nil)
		if err != nil {
			t.Fatal(err)
		}
		v2, err := admission.Publish(v1, b, nil)
		if err != nil {
			t.Fatal(err)
		}
		if v2 != v1 {
			t.Fatalf("hosts %v republished as %v: a new version %d, want version 1 back", hosts, perm, v2.Version())
		}
	})
}
