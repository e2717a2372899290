package evidencelog

import "github.com/checkfu/checkfu"

// Refusal codes of the evidence bridge.
const (
	// CodeEvidenceUnknown refuses evidence of a kind or outcome this package
	// does not map.
	CodeEvidenceUnknown checkfu.Code = "evidence_unknown"
)
