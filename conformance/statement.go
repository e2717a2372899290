package conformance

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/internal/strictjson"
	"github.com/checkfu/checkfu/signing"
)

// statementJSON is the human-readable JSON form of a Record. It is for
// people and for "checkfu receipt sign"; the signature never covers it.
type statementJSON struct {
	Provider         string   `json:"provider"`
	ProviderRevision string   `json:"provider_revision"`
	Facts            []string `json:"facts"`
	Label            string   `json:"label"`
	EvidenceDigests  []string `json:"evidence_digests"`
	IssuedAt         string   `json:"issued_at"`
	AttesterKeyID    string   `json:"attester_key_id,omitempty"`
}

// ParseStatement parses the JSON statement of a record:
//
//	{
//	  "provider": "checkfu:daytona-provider",
//	  "provider_revision": "2",
//	  "facts": ["exact_destination_match", "redirect_recheck", ...],
//	  "label": "production",
//	  "evidence_digests": ["sha256:<64 hex>", ...],
//	  "issued_at": "2026-11-30T07:00:00Z",
//	  "attester_key_id": "<64 hex>"            (optional)
//	}
//
// Parsing is strict: keys are case-sensitive, unknown or duplicate keys,
// unknown or repeated facts and anything [Record.Check] refuses are
// refused with [CodeRecordInvalid].
func ParseStatement(data []byte) (Record, error) {
	var s statementJSON
	if err := strictjson.Unmarshal(data, &s, strictjson.Options{MaxDepth: 4}); err != nil {
		return Record{}, checkfu.Refuse(CodeRecordInvalid, "conformance: statement: %v", err)
	}
	r := Record{Target: checkfu.ProviderRevision{Provider: s.Provider, Revision: s.ProviderRevision}}
	for _, name := range s.Facts {
		f, err := ParseFact(name)
		if err != nil {
			return Record{}, err
		}
		if r.Facts.Has(f) {
			return Record{}, checkfu.Refuse(CodeRecordInvalid, "conformance: statement names fact %q twice", name)
		}
		r.Facts.bits |= f.bit()
	}
	label, err := checkfu.ParseLabel(s.Label)
	if err != nil {
		return Record{}, checkfu.Refuse(CodeRecordInvalid, "conformance: statement: %v", err)
	}
	r.Label = label
	for _, ds := range s.EvidenceDigests {
		d, err := ParseDigest(ds)
		if err != nil {
			return Record{}, err
		}
		r.Evidence = append(r.Evidence, d)
	}
	t, err := time.Parse(time.RFC3339, s.IssuedAt)
	if err != nil {
		return Record{}, checkfu.Refuse(CodeRecordInvalid, "conformance: issued_at %s is not an RFC 3339 time such as 2026-11-30T07:00:00Z", checkfu.Quote(s.IssuedAt))
	}
	r.IssuedAt = t.UTC()
	if s.AttesterKeyID != "" {
		if r.Attester, err = signing.ParseKeyID(s.AttesterKeyID); err != nil {
			return Record{}, checkfu.Refuse(CodeRecordInvalid, "conformance: attester_key_id %s is not 64 lowercase hex digits", checkfu.Quote(s.AttesterKeyID))
		}
	}
	if err := r.Check(); err != nil {
		return Record{}, err
	}
	return r, nil
}

// Statement returns the indented JSON statement of r, the inverse of
// [ParseStatement]. A zero Attester is left out. It refuses a record that
// fails [Record.Check].
func (r Record) Statement() ([]byte, error) {
	if err := r.Check(); err != nil {
		return nil, err
	}
	s := statementJSON{
		Provider:         r.Target.Provider,
		ProviderRevision: r.Target.Revision,
		Facts:            []string{},
		Label:            r.Label.String(),
		IssuedAt:         r.IssuedAt.UTC().Format(time.RFC3339),
	}
	for _, f := range r.Facts.List() {
		s.Facts = append(s.Facts, string(f))
	}
	for _, d := range r.Evidence {
		s.EvidenceDigests = append(s.EvidenceDigests, d.String())
	}
	if r.Attester != (signing.KeyID{}) {
		s.AttesterKeyID = r.Attester.String()
	}
	out, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// MarshalJSON implements json.Marshaler with the statement form (compact),
// so a Record never marshals as an opaque struct. It refuses a record that
// fails [Record.Check].
func (r Record) MarshalJSON() ([]byte, error) {
	js, err := r.Statement()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, js); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// UnmarshalJSON implements json.Unmarshaler with [ParseStatement].
func (r *Record) UnmarshalJSON(data []byte) error {
	v, err := ParseStatement(data)
	if err != nil {
		return err
	}
	*r = v
	return nil
}
