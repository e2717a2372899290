package admission

import (
	"encoding/base64"
	"encoding/json"

	"github.com/checkfu/checkfu/signing"
)

// unverifiedPayload is what a verifier that skipped the signature would
// do: decode the envelope's payload and believe the signer it names. The
// mutants of Enroll and LoadRecord swap it in for VerifyPayload, so that
// deleting the verification is not masked by the payload's absence.
func unverifiedPayload(envelope []byte) (signing.Attester, []byte, error) {
	var env struct {
		Payload string `json:"payload"`
	}
	if err := json.Unmarshal(envelope, &env); err != nil {
		return signing.Attester{}, nil, err
	}
	payload, err := base64.StdEncoding.DecodeString(env.Payload)
	if err != nil {
		return signing.Attester{}, nil, err
	}
	var named struct {
		Provider   string `json:"provider"`
		Deployment string `json:"deployment"`
	}
	_ = json.Unmarshal(payload, &named)
	return signing.Attester{Name: named.Provider + named.Deployment}, payload, nil
}

var _ = unverifiedPayload // used by the mutants in mutants_test.go
