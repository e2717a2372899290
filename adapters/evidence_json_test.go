package adapters_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/checkfu/checkfu/adapters"
	"github.com/checkfu/checkfu/adapters/adaptertest"
)

const goodEvidence = `{"label":"isolated","instance":"i-1","provider":"partner:vm","provider_revision":"7",
"materialization_revision":"vm-7","root_image":"","platform":"linux/amd64","profile_digest":"",
"network_mode":"none","limits":{"pids":64},"enforcement":{"image":"provider_attested"}}`

func TestParseEvidence(t *testing.T) {
	ev, err := adapters.ParseEvidence([]byte(goodEvidence))
	if err != nil {
		t.Fatal(err)
	}
	if ev.Instance != "i-1" || ev.Limits.Pids != 64 || ev.Enforcement[0] != 1 || ev.Label != 1 {
		t.Errorf("decoded %+v", ev)
	}
	for name, doc := range map[string]string{
		"unknown member":      strings.Replace(goodEvidence, `"platform"`, `"platfrom"`, 1),
		"case-folded member":  strings.Replace(goodEvidence, `"platform"`, `"Platform"`, 1),
		"repeated member":     strings.Replace(goodEvidence, `"platform":"linux/amd64"`, `"platform":"linux/amd64","platform":"x"`, 1),
		"repeated axis":       strings.Replace(goodEvidence, `{"image":"provider_attested"}`, `{"image":"unenforced","image":"runner_enforced"}`, 1),
		"unknown axis":        strings.Replace(goodEvidence, `{"image"`, `{"imagery"`, 1),
		"unknown authority":   strings.Replace(goodEvidence, `"provider_attested"`, `"root"`, 1),
		"unknown label":       strings.Replace(goodEvidence, `"isolated"`, `"real"`, 1),
		"trailing value":      goodEvidence + `{}`,
		"not an object":       `[]`,
		"invalid UTF-8":       strings.Replace(goodEvidence, `i-1`, "i-\xff", 1),
		"too large":           strings.Replace(goodEvidence, `i-1`, strings.Repeat("x", adapters.MaxEvidenceBytes), 1),
		"limit not a number":  strings.Replace(goodEvidence, `"pids":64`, `"pids":"64"`, 1),
		"limit out of range":  strings.Replace(goodEvidence, `"pids":64`, `"pids":1e30`, 1),
		"networks not a list": strings.Replace(goodEvidence, `"network_mode":"none"`, `"network_mode":"none","networks":"eth0"`, 1),
	} {
		if _, err := adapters.ParseEvidence([]byte(doc)); !errors.Is(err, adapters.CodeEvidenceInvalid) {
			t.Errorf("%s: ParseEvidence = %v, want %s", name, err, adapters.CodeEvidenceInvalid)
		}
	}
}

// TestEvidenceRoundTrip: a generated evidence encodes and parses back to
// itself.
func TestEvidenceRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ev := adaptertest.Matching().Draw(t, "pair").Evidence
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		got, err := adapters.ParseEvidence(b)
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if !reflect.DeepEqual(got, ev) {
			t.Fatalf("round trip: %+v, want %+v", got, ev)
		}
	})
}

// FuzzParseEvidence: no input panics; whatever parses re-encodes and
// parses back to the same value.
func FuzzParseEvidence(f *testing.F) {
	f.Add([]byte(goodEvidence))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"enforcement":{"syscalls":"runner_enforced"},"networks":["a","b"]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ev, err := adapters.ParseEvidence(data)
		if err != nil {
			return
		}
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatalf("a parsed evidence does not encode: %v", err)
		}
		again, err := adapters.ParseEvidence(b)
		if err != nil || !reflect.DeepEqual(again, ev) {
			t.Fatalf("re-parse of %s: %v", b, err)
		}
	})
}
