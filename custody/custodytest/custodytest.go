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
