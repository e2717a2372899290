package admission_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/checkfu/checkfu/admission"
)

// FuzzParseProfile: the decoder never panics, and a profile it accepts
// re-encodes to a document it accepts again with the same digest.
func FuzzParseProfile(f *testing.F) {
	seeds, err := filepath.Glob(filepath.Join("testdata", "profiles", "*.json"))
	if err != nil || len(seeds) == 0 {
		f.Fatalf("no seed profiles under testdata/profiles (%v)", err)
	}
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(profileDoc("", `{"type": "allowlist", "allow_mcp_servers": true}`)))
	f.Fuzz(func(t *testing.T, doc []byte) {
		p, err := admission.ParseProfile(doc)
		if err != nil {
			return
		}
		d1, err := p.Digest()
		if err != nil {
			t.Fatalf("accepted profile has no digest: %v", err)
		}
		again, err := p.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		q, err := admission.ParseProfile(again)
		if err != nil {
			t.Fatalf("re-encoded profile %s refused: %v", again, err)
		}
		if d2, _ := q.Digest(); d2 != d1 {
			t.Fatalf("digest changed on re-encoding: %s then %s", d1, d2)
		}
	})
}
