package egress

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/checkfu/checkfu"
)

// TestHostileTextIsQuotedBounded: text from a request, a rule set or a
// policy document reaches a refusal only through checkfu.Quote, so a
// long one is cut to 64 bytes and its length given, and control bytes
// are escaped.
func TestHostileTextIsQuotedBounded(t *testing.T) {
	long := strings.Repeat("a", 500) + "\x1b[31m"
	want := checkfu.Quote(long)
	check := func(what string, err error) {
		t.Helper()
		if err == nil {
			t.Fatalf("%s: accepted", what)
		}
		if !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), strings.Repeat("a", 65)) || strings.Contains(err.Error(), "\x1b") {
			t.Errorf("%s: %q does not quote the text through checkfu.Quote", what, err)
		}
	}
	_, err := CanonicalHost(long)
	check("CanonicalHost", err)
	_, err = CanonicalRequest(&http.Request{Method: long, URL: &url.URL{Scheme: "https", Host: "example.com", Path: "/"}})
	check("CanonicalRequest method", err)
	_, err = ParseRules([]byte(`[{"host":"example.com","port":443,"methods":["GET"],"path_prefix":"/` + strings.Repeat("a", 500) + `\u001b[31m/"}]`))
	if err == nil || strings.Contains(err.Error(), strings.Repeat("a", 65)) || strings.Contains(err.Error(), "\x1b") {
		t.Errorf("ParseRules: %v", err)
	}
	_, err = ParseNetworkPolicy([]byte(`{"type":"` + strings.Repeat("a", 500) + `"}`))
	if err == nil || !strings.Contains(err.Error(), "(500 bytes)") {
		t.Errorf("ParseNetworkPolicy: %v", err)
	}
}
