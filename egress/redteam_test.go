package egress_test

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/checkfu/checkfu/egress"
)

// TestClientRedirectWithholdsFoldedEcho has a hostile provider echo the
// attached credential in the host of a Location, spelt so that a plain
// substring test misses it but the canonicaliser turns it back into the
// credential: upper-case (hosts are case-folded) and full-width (IDNA
// width-folds). The target must be withheld, never reported.
//
// Mutant: deleting the echoes(next.Host, ...) check in redirectRefusal
// makes this test fail (the full-width row reports the credential).
func TestClientRedirectWithholdsFoldedEcho(t *testing.T) {
	rig := newClientRig(t)
	fullWidth := strings.Map(func(r rune) rune {
		if r >= '!' && r <= '~' {
			return r - '!' + '！'
		}
		return r
	}, secret)
	for _, loc := range []string{
		"https://" + strings.ToUpper(secret) + ".evil.example.com/",
		"https://" + fullWidth + ".evil.example.com/",
		"https://" + strings.ToUpper(secret[:1]) + secret[1:] + ".evil.example.com/",
	} {
		q := "?status=302&to=" + url.QueryEscape(loc)
		_, _, err := rig.do(t, "GET", rig.url("api.example.com", "/v1/r"+q))
		wantRefusal(t, err, egress.CodeRedirectRefused)
		var re *egress.RedirectError
		if !errors.As(err, &re) {
			t.Fatalf("%s: %v carries no RedirectError", loc, err)
		}
		if strings.Contains(strings.ToLower(err.Error()), strings.ToLower(secret)) {
			t.Errorf("location %q: error %q carries the credential, case-folded", loc, err)
		}
		if re.Target != "" {
			t.Errorf("location %q: target %q reported, want it withheld", loc, re.Target)
		}
	}
}

// TestGuardDoesNotRelayItsOwnHeaders has a destination answer with the
// guard's Checkfu-Refusal and Checkfu-Upstream-Failure headers. Relayed,
// they would make the destination's answer read as the guard's refusal or
// failure; the guard must strip them, as only it may set them.
//
// Mutant: deleting the deletion of RefusalHeader and
// UpstreamFailureHeader in copyResponse makes this test fail.
func TestGuardDoesNotRelayItsOwnHeaders(t *testing.T) {
	rig := newGuardRig(t, allowBoth)
	got := rig.get(t, rig.client(t), "http://legit.example.test:"+rig.upPort+"/spoof")
	if got.status != http.StatusForbidden || got.refusal != "" || got.upstream != "" {
		t.Errorf("destination's 403 relayed as status %d with refusal %q upstream %q, want 403 with neither", got.status, got.refusal, got.upstream)
	}
}
