package conformance

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/checkfu/checkfu/signing"
)

const goodStatement = `{
  "provider": "checkfu:daytona-provider",
  "provider_revision": "2",
  "facts": ["exact_destination_match", "redirect_recheck", "connect_time_public_address", "authority_separation", "default_deny"],
  "label": "production",
  "evidence_digests": ["sha256:0000000000000000000000000000000000000000000000000000000000000001"],
  "issued_at": "2026-11-30T07:00:00Z"
}`

func TestParseStatement(t *testing.T) {
	r, err := ParseStatement([]byte(goodStatement))
	if err != nil {
		t.Fatal(err)
	}
	if r.Target != daytona2 || !r.Facts.Complete() || r.Label.String() != "production" || r.IssuedAt.Unix() != 1796022000 || len(r.Evidence) != 1 {
		t.Fatalf("ParseStatement = %+v", r)
	}
	edit := func(old, new string) string {
		if !strings.Contains(goodStatement, old) {
			t.Fatalf("statement has no %q", old)
		}
		return strings.Replace(goodStatement, old, new, 1)
	}
	tests := []struct{ name, in, msg string }{
		{"unknown fact", edit(`"default_deny"`, `"default_deny_ish"`), `"default_deny_ish" is not a fact`},
		{"repeated fact", edit(`"default_deny"`, `"redirect_recheck"`), "twice"},
		{"unknown label", edit(`"production"`, `"prod"`), `"prod" is not an evidence label`},
		{"label case", edit(`"production"`, `"Production"`), "not an evidence label"},
		{"fractional second", edit(`07:00:00Z`, `07:00:00.5Z`), "fraction of a second"},
		{"not a time", edit(`2026-11-30T07:00:00Z`, `yesterday`), "not an RFC 3339 time"},
		{"digest without algorithm", edit(`sha256:`, ``), "not sha256:"},
		{"upper-case digest", edit(`0000000000000000000000000000000000000000000000000000000000000001`, `000000000000000000000000000000000000000000000000000000000000000A`), "not sha256:"},
		{"no evidence", edit(`["sha256:0000000000000000000000000000000000000000000000000000000000000001"]`, `[]`), "0 evidence digests"},
		{"empty provider", edit(`"checkfu:daytona-provider"`, `""`), "provider"},
		{"control in revision", edit(`"provider_revision": "2"`, `"provider_revision": "2\n"`), "control character"},
		{"unknown key", edit(`"label"`, `"grade": "security_boundary", "label"`), `unknown member "grade"`},
		{"key case", edit(`"label"`, `"Label"`), "case-sensitive"},
		{"duplicate key", edit(`"label": "production"`, `"label": "mock", "label": "production"`), `member "label" appears twice`},
		{"bad key id", edit(`"label"`, `"attester_key_id": "xyz", "label"`), "attester_key_id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseStatement([]byte(tt.in))
			if !errors.Is(err, CodeRecordInvalid) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("ParseStatement = %v, want %s mentioning %q", err, CodeRecordInvalid, tt.msg)
			}
		})
	}
}

func TestSignRefusesInvalidRecord(t *testing.T) {
	a := testSigner(1)
	r := goodRecord()
	r.Evidence = nil
	if _, err := Sign(a, r); !errors.Is(err, CodeRecordInvalid) {
		t.Fatalf("Sign(no evidence) = %v", err)
	}
	r = goodRecord()
	r.Attester = testSigner(2).KeyID()
	if _, err := Sign(a, r); !errors.Is(err, CodeRecordInvalid) {
		t.Fatalf("Sign(other attester) = %v", err)
	}
}

func TestRecordJSON(t *testing.T) {
	r := goodRecord()
	r.Attester = testSigner(1).KeyID()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"facts":["exact_destination_match","redirect_recheck","connect_time_public_address","authority_separation","default_deny"]`) ||
		!strings.Contains(string(b), `"attester_key_id":"`+r.Attester.String()+`"`) {
		t.Fatalf("json.Marshal(Record) = %s", b)
	}
	var back Record
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Target != r.Target || back.Facts != r.Facts || back.Attester != r.Attester || !back.IssuedAt.Equal(r.IssuedAt) || len(back.Evidence) != 2 {
		t.Fatalf("round trip = %+v", back)
	}
	if _, err := json.Marshal(Record{}); !errors.Is(err, CodeRecordInvalid) {
		t.Fatalf("json.Marshal(zero Record) = %v", err)
	}
	var id signing.KeyID
	if err := json.Unmarshal([]byte(`"`+r.Attester.String()+`"`), &id); err != nil || id != r.Attester {
		t.Fatalf("KeyID JSON: %v", err)
	}
	var d Digest
	if err := json.Unmarshal([]byte(`"sha256:AB"`), &d); !errors.Is(err, CodeRecordInvalid) {
		t.Fatalf("Digest JSON accepted bad text: %v", err)
	}
}
