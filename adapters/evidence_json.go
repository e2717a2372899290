package adapters

import (
	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/internal/strictjson"
)

// MaxEvidenceBytes bounds an evidence document [ParseEvidence] accepts.
const MaxEvidenceBytes = 64 << 10

// ParseEvidence decodes the JSON form of an [Evidence], as a remote
// provider sends it, strictly (internal/strictjson: one value, valid
// UTF-8, exact member names, no unknown or repeated member, at most
// MaxEvidenceBytes and 8 levels deep), and refuses anything else with
// [CodeEvidenceInvalid]. A decoded Evidence is not yet trusted: match it
// with [MatchEvidence].
func ParseEvidence(data []byte) (Evidence, error) {
	var ev Evidence
	if err := strictjson.Unmarshal(data, &ev, strictjson.Options{MaxDepth: 8, MaxBytes: MaxEvidenceBytes}); err != nil {
		return Evidence{}, &checkfu.Refusal{Code: CodeEvidenceInvalid, Message: "adapters: evidence is not a strict evidence document", Err: err}
	}
	return ev, nil
}
