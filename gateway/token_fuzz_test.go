package gateway_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/checkfu/checkfu/gateway"
	"github.com/checkfu/checkfu/gateway/internal/rigtest"
)

// FuzzAuthenticate: no input panics; every input is accepted with a valid
// context or refused with token_invalid or token_expired; and a token the
// fuzzer could forge would have to carry the key's MAC, so the only
// accepted inputs are tokens Issue produced.
func FuzzAuthenticate(f *testing.F) {
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	tokens, err := gateway.NewHMACTokens(rigtest.Key, func() time.Time { return now })
	if err != nil {
		f.Fatal(err)
	}
	good, err := tokens.Issue(rigtest.Member(), time.Minute)
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{good, "", "cft1.", "cft1..", "cft1.e30.", good + "=", good[:len(good)-1], "cft1.eyJjb250ZXh0Ijp7fX0.AAAA"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tok string) {
		rc, err := tokens.Authenticate(context.Background(), tok)
		if err != nil {
			if !errors.Is(err, gateway.CodeTokenInvalid) && !errors.Is(err, gateway.CodeTokenExpired) {
				t.Fatalf("Authenticate(%q) = %v", tok, err)
			}
			return
		}
		if err := rc.Validate(); err != nil {
			t.Fatalf("accepted %q with an invalid context: %v", tok, err)
		}
		if tok != good {
			t.Fatalf("accepted a token Issue did not produce: %q", tok)
		}
	})
}
