package admission

import (
	"slices"
	"strings"

	"github.com/checkfu/checkfu"
)

// A Protocol is how the Runner drives a harness.
type Protocol string

// The two harness protocols.
const (
	// ProtocolACPv1: the Agent Client Protocol over the process's stdio.
	ProtocolACPv1 Protocol = "acp-v1"
	// ProtocolOneshotV1: one prompt written, output read to EOF.
	ProtocolOneshotV1 Protocol = "oneshot-v1"
)

// An Availability says whether a harness entry can be launched.
type Availability string

// The two availabilities.
const (
	// Available: the entry can be launched.
	Available Availability = "available"
	// Blocked: the entry exists but cannot be launched.
	Blocked Availability = "blocked"
)

// A HarnessEntry is one harness of the catalog.
type HarnessEntry struct {
	// Name identifies the entry in its catalog.
	Name string `json:"name"`
	// Protocol is how the Runner drives it.
	Protocol Protocol `json:"protocol"`
	// Availability says whether it can be launched.
	Availability Availability `json:"availability"`
}

// A HarnessCatalog lists the harnesses a session may name. It is
// immutable.
type HarnessCatalog struct {
	entries []HarnessEntry // sorted by name
}

// DefaultHarnessCatalog returns the packaged catalog: the ACP harness,
// which is the real case, one ACP entry per third-party agent of Agents
// (launched as Agent says), and the one-shot harness, whose sole entry
// is blocked.
func DefaultHarnessCatalog() *HarnessCatalog {
	entries := []HarnessEntry{
		{Name: "acp", Protocol: ProtocolACPv1, Availability: Available},
		{Name: "oneshot", Protocol: ProtocolOneshotV1, Availability: Blocked},
	}
	for _, name := range Agents() {
		entries = append(entries, HarnessEntry{Name: name, Protocol: ProtocolACPv1, Availability: Available})
	}
	c, err := NewHarnessCatalog(entries)
	if err != nil {
		panic("admission: default harness catalog: " + err.Error())
	}
	return c
}

// NewHarnessCatalog returns a catalog of entries (copied, sorted by
// name). It refuses, with [CodeCapabilityInvalid], an empty or repeated
// name and a protocol or availability outside the vocabulary.
func NewHarnessCatalog(entries []HarnessEntry) (*HarnessCatalog, error) {
	c := &HarnessCatalog{entries: slices.Clone(entries)}
	slices.SortFunc(c.entries, func(a, b HarnessEntry) int { return strings.Compare(a.Name, b.Name) })
	for i, e := range c.entries {
		if e.Name == "" || len(e.Name) > 64 || (i > 0 && c.entries[i-1].Name == e.Name) {
			return nil, checkfu.Refuse(CodeCapabilityInvalid, "admission: harness name %s is empty, too long or repeated", checkfu.Quote(e.Name))
		}
		if e.Protocol != ProtocolACPv1 && e.Protocol != ProtocolOneshotV1 {
			return nil, checkfu.Refuse(CodeCapabilityInvalid, "admission: harness %s protocol %s is not acp-v1 or oneshot-v1", checkfu.Quote(e.Name), checkfu.Quote(string(e.Protocol)))
		}
		if e.Availability != Available && e.Availability != Blocked {
			return nil, checkfu.Refuse(CodeCapabilityInvalid, "admission: harness %s availability %s is not available or blocked", checkfu.Quote(e.Name), checkfu.Quote(string(e.Availability)))
		}
	}
	return c, nil
}

// Entries returns the catalog's entries, sorted by name (a copy).
func (c *HarnessCatalog) Entries() []HarnessEntry { return slices.Clone(c.entries) }

// Launch returns the entry named name if it can be launched. An unknown
// name is [CodeHarnessUnknown]; a blocked entry is [CodeHarnessBlocked].
func (c *HarnessCatalog) Launch(name string) (HarnessEntry, error) {
	i, ok := slices.BinarySearchFunc(c.entries, name, func(e HarnessEntry, n string) int { return strings.Compare(e.Name, n) })
	if !ok {
		return HarnessEntry{}, checkfu.Refuse(CodeHarnessUnknown, "admission: no harness %s in the catalog", checkfu.Quote(name))
	}
	e := c.entries[i]
	if e.Availability != Available {
		return HarnessEntry{}, checkfu.Refuse(CodeHarnessBlocked, "admission: harness %s (%s) is blocked and cannot be launched", checkfu.Quote(name), e.Protocol)
	}
	return e, nil
}
