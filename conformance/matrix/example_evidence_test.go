package matrix_test

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/conformance"
	"github.com/checkfu/checkfu/conformance/matrix"
)

// An evidence file is read strictly, so no two readers see different
// verdicts: a member written twice is refused, not resolved.
func ExampleParseEvidenceFile() {
	_, err := matrix.ParseEvidenceFile([]byte(`{"provider": "checkfu:docker", "provider": "checkfu:process"}`))
	code, _ := checkfu.CodeOf(err)
	fmt.Println(code)
	// Output: evidence_file_invalid
}

// VerifyEvidence checks that each piece of evidence is the one its digest
// names, whatever the file's indentation; it binds the file to no
// statement (MatchEvidence does).
func ExampleVerifyEvidence() {
	rep := &matrix.Report{
		Topology: json.RawMessage(`{ "networks": ["checkfu-a"] }`),
		TopoSum:  conformance.DigestOf([]byte(`{"networks":["checkfu-a"]}`)),
	}
	fmt.Println(matrix.VerifyEvidence(rep))

	rep.Topology = json.RawMessage(`{"networks": ["checkfu-b"]}`)
	code, _ := checkfu.CodeOf(matrix.VerifyEvidence(rep))
	fmt.Println(code)
	// Output:
	// <nil>
	// record_invalid
}

// MatchEvidence binds an evidence file to the record a statement or
// receipt signed: the same pair, label, digests and held facts, or a
// refusal. A record claiming a fact the file's verdicts do not hold is
// refused.
func ExampleMatchEvidence() {
	evidence := json.RawMessage(`{"sent":"GET http://198.18.0.7/","reached":false}`)
	rep := &matrix.Report{
		Target:   checkfu.ProviderRevision{Provider: "partner:vm", Revision: "7"},
		Provider: "partner:vm", Revision: "7", Label: "isolated",
		Topology: json.RawMessage(`{}`), TopoSum: conformance.DigestOf([]byte(`{}`)),
		Cases: []matrix.Case{{Fact: conformance.Facts()[0], Name: "direct-egress", Verdict: matrix.Pass,
			Evidence: evidence, Digest: conformance.DigestOf(evidence)}},
	}
	rec, err := rep.Record(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	fmt.Println(err, matrix.MatchEvidence(rep, rec))

	rec.Facts = conformance.AllFacts()
	code, _ := checkfu.CodeOf(matrix.MatchEvidence(rep, rec))
	fmt.Println(code)
	// Output:
	// <nil> <nil>
	// evidence_file_mismatch
}
