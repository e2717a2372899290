package admission

import (
	"slices"
	"strings"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/egress"
)

// A Lane is the server-owned workload trust fact: who authored the
// workload, not a deployment stage or a nominal tier. The zero Lane
// is LaneAdversarial, so missing provenance is adversarial.
type Lane uint8

// The two lanes.
const (
	// LaneAdversarial: the workload may be hostile (third-party code or
	// steering). It is the default.
	LaneAdversarial Lane = iota
	// LaneTrusted: the workload is first-party code under first-party
	// steering only.
	LaneTrusted
)

// ParseLane parses "trusted" or "adversarial"; the empty string (missing
// provenance) is LaneAdversarial. Anything else is [CodeLaneInvalid].
func ParseLane(s string) (Lane, error) {
	switch s {
	case "", "adversarial":
		return LaneAdversarial, nil
	case "trusted":
		return LaneTrusted, nil
	}
	return LaneAdversarial, checkfu.Refuse(CodeLaneInvalid, "admission: lane %s is not trusted or adversarial", checkfu.Quote(s))
}

// String returns "trusted" or "adversarial".
func (l Lane) String() string {
	if l == LaneTrusted {
		return "trusted"
	}
	return "adversarial"
}

// MarshalText implements encoding.TextMarshaler.
func (l Lane) MarshalText() ([]byte, error) {
	if l > LaneTrusted {
		return nil, checkfu.Refuse(CodeLaneInvalid, "admission: lane(%d) is not a lane", uint8(l))
	}
	return []byte(l.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler with [ParseLane],
// except that empty text is refused (omit the member instead).
func (l *Lane) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		return checkfu.Refuse(CodeLaneInvalid, "admission: empty lane")
	}
	v, err := ParseLane(string(b))
	*l = v
	return err
}

// CheckLane refuses to run v in lane on candidate c with effective
// capability eff when the lane's rule does not hold. Every host v grants
// must pass [CheckGrant] in lane: a trusted session acquires no
// third-party executable content ([CodeTrustedLaneTainted]). The
// adversarial lane also requires:
//
//   - no host that relays to any origin granted only by
//     allow_package_managers ([CodeRelayNotNamed]): name it by hand;
//   - every enforcement axis realized in eff, and either the none policy
//     or an allowlist on a candidate graded security_boundary
//     ([CodeLaneRequirementUnmet]).
//
// It is run at admission and again at placement ([Place]).
func CheckLane(lane Lane, v *Published, c Candidate, eff RunnerProviderCapability) error {
	if !v.published() {
		return notPublished()
	}
	for _, h := range v.Hosts() {
		if err := CheckGrant(lane, h); err != nil {
			return err
		}
	}
	if lane == LaneTrusted {
		return nil
	}
	for _, h := range v.Relays() {
		if !h.ByHand() {
			return checkfu.Refuse(CodeRelayNotNamed, "admission: adversarial lane: %s relays to any origin (%s) and is granted only by allow_package_managers; name it in allowed_hosts to accept it", checkfu.Quote(h.String()), checkfu.Quote(h.RelaysToAnyOrigin))
		}
	}
	if ok, missing := eff.Enforcement.Realized(); !ok {
		names := make([]string, len(missing))
		for i, m := range missing {
			names[i] = m.String()
		}
		return checkfu.Refuse(CodeLaneRequirementUnmet, "admission: adversarial lane needs every enforcement axis realized; %s leaves %s unenforced", checkfu.Quote(c.Target.String()), strings.Join(names, ", "))
	}
	switch v.PolicyType() {
	case egress.PolicyNone:
		return nil
	case egress.PolicyAllowlist:
		if g := c.Grade(); g != checkfu.SecurityBoundary {
			return checkfu.Refuse(CodeLaneRequirementUnmet, "admission: adversarial lane needs no network or an allowlist certified security_boundary; %s is graded %s", checkfu.Quote(c.Target.String()), g)
		}
		return nil
	}
	return checkfu.Refuse(CodeLaneRequirementUnmet, "admission: adversarial lane needs no network or a certified allowlist, not %s", v.PolicyType())
}

// An Acquisition is something a running session takes in.
type Acquisition uint8

// What a session can acquire.
const (
	// AcquireThirdPartyExecutable: executable content the deployment did
	// not author (a dependency, plugin, downloaded tool). The zero value,
	// so an unclassified acquisition counts as third-party.
	AcquireThirdPartyExecutable Acquisition = iota
	// AcquireThirdPartySteering: instructions from a party the deployment
	// does not trust (an issue body, a web page, a customer prompt).
	AcquireThirdPartySteering
	// AcquireFirstParty: content and steering the deployment authored.
	AcquireFirstParty
)

// Acquisition returns what a session acquires through h. A host granted
// by allow_package_managers is a public package registry, where anyone
// can publish what the workload then installs and runs: third-party
// executable content, however else it is granted. A host the profile
// names by hand only is the deployment's own grant: first party, as far
// as admission can tell (it does not know what the host serves).
func (h HostGrant) Acquisition() Acquisition {
	if slices.Contains(h.GrantedBy, GrantAllowPackageManagers) {
		return AcquireThirdPartyExecutable
	}
	return AcquireFirstParty
}

// CheckGrant refuses, with [CodeTrustedLaneTainted], granting h to a
// session in lane when [CheckAcquire] refuses what h gives
// ([HostGrant.Acquisition]); the refusal names the lane, the host and
// the grant. [CheckLane] runs it for every host of a profile, at
// admission and at placement; a platform that grants a running session
// anything later runs it again.
func CheckGrant(lane Lane, h HostGrant) error {
	if CheckAcquire(lane, h.Acquisition()) == nil {
		return nil
	}
	grants := make([]string, len(h.GrantedBy))
	for i, g := range h.GrantedBy {
		grants[i] = string(g)
	}
	return checkfu.Refuse(CodeTrustedLaneTainted, "admission: %s lane: %s is granted by %s (ecosystems %s): third-party executable content, which a %s session may not acquire; start a new adversarial session",
		lane, checkfu.Quote(h.String()), strings.Join(grants, ", "), strings.Join(h.Ecosystems, ", "), lane)
}

// CheckAcquire refuses, with [CodeTrustedLaneTainted], a trusted session
// acquiring third-party executable content or steering: that needs a new
// adversarial session, never an in-place downgrade of trust. An
// adversarial session may acquire anything its policy allows.
func CheckAcquire(lane Lane, what Acquisition) error {
	if lane == LaneTrusted && what != AcquireFirstParty {
		kind := "executable content"
		if what == AcquireThirdPartySteering {
			kind = "steering"
		}
		return checkfu.Refuse(CodeTrustedLaneTainted, "admission: a trusted session may not acquire third-party %s; start a new adversarial session", kind)
	}
	return nil
}
