// Package custodytest holds what integrators need to test code that uses
// package custody: the conformance suite every custody.Store must pass
// ([TestStore]), the forms a leaked secret would take in captured output
// ([CanaryForms], [FindLeaks]), the exposure checker that proves no
// exported type of a module can hold a custody.Secret ([LoadModule],
// [CheckExposure]), and rapid generators of valid names, handles and
// bindings ([Names], [Handles], [Bindings]), and an in-memory
// authz.EvidenceSink ([MemoryEvidence]).
//
// Invariants: the suite uses only the exported API of custody, so it proves
// what any caller relies on; every subtest gets a fresh store (or rig)
// from the factory, and the Sequence subtests drive that one instance
// through a long run of operations against a model; each suite's own
// tests prove it rejects a list of broken implementations; nothing here ever prints a secret (a leak is reported by the
// name of the form and where it was found, never by the bytes).
package custodytest

import (
	"encoding/base64"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
)

// CanaryForms returns the encodings under which secret bytes would be
// recognisable in captured output: the raw bytes, lower- and uppercase
// hex, standard and URL base64 (padded and raw), the decimal byte list as
// fmt prints a []byte ("[99 97 ...]") and comma-separated, and the
// Go-quoted form.
func CanaryForms(secret []byte) map[string]string {
	var dec []string
	for _, c := range secret {
		dec = append(dec, strconv.Itoa(int(c)))
	}
	return map[string]string{
		"raw":           string(secret),
		"hex":           hex.EncodeToString(secret),
		"HEX":           strings.ToUpper(hex.EncodeToString(secret)),
		"base64":        base64.StdEncoding.EncodeToString(secret),
		"base64-raw":    base64.RawStdEncoding.EncodeToString(secret),
		"base64url":     base64.URLEncoding.EncodeToString(secret),
		"base64url-raw": base64.RawURLEncoding.EncodeToString(secret),
		"decimal":       "[" + strings.Join(dec, " ") + "]",
		"decimal-comma": strings.Join(dec, ","),
		"decimal-list":  strings.Join(dec, ", "),
		"quoted":        strconv.Quote(string(secret)),
	}
}

// FindLeaks returns the names of the forms of secret (see [CanaryForms])
// that occur in captured, sorted; nil means no form was found. A secret
// shorter than 8 bytes would match by chance and is reported as the
// single pseudo-form "canary-too-short".
func FindLeaks(secret, captured []byte) []string {
	if len(secret) < 8 {
		return []string{"canary-too-short"}
	}
	var found []string
	for name, form := range CanaryForms(secret) {
		if strings.Contains(string(captured), form) {
			found = append(found, name)
		}
	}
	slices.Sort(found)
	return found
}
