package admission

import (
	"strings"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/egress"
)

// A Lane is the server-owned workload trust fact of D243: who authored
// the workload, not a deployment stage or a nominal tier. The zero Lane
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
// capability eff when the lane's rule does not hold. The trusted lane
// adds nothing. The adversarial lane requires:
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
