package signing

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/internal/strictjson"
)

// An Attester is one reviewed signer: of conformance receipts, admission
// records or any other statement verified against an [AttesterSet].
type Attester struct {
	// Name is the operator's name for the attester, unique in its set.
	Name string
	// KeyID is the attester's key id.
	KeyID KeyID
	// PublicKey is the attester's Ed25519 public key, a copy.
	PublicKey ed25519.PublicKey
}

// An AttesterSet is a reviewed set of public keys, each with the
// operator's name for it, whose signatures [AttesterSet.VerifyPayload]
// accepts. It is immutable: the only ways to obtain one are
// [ParseAttesterSet] or [LoadAttesterSet] on a file the operator ships,
// and nothing adds a key afterwards. Every key in it passed admission
// ([ParsePublicKey]) once, so verifying an envelope does no per-key work.
//
// A nil or zero *AttesterSet is the empty set.
type AttesterSet struct {
	byID  map[KeyID]*admitted
	order []KeyID // file order
}

type admitted struct {
	name string
	id   KeyID
	key  *PublicKey
}

func (a *admitted) public() Attester {
	return Attester{Name: a.name, KeyID: a.id, PublicKey: bytes.Clone(a.key.pub)}
}

type attesterSetJSON struct {
	Attesters []attesterJSON `json:"attesters"`
}

type attesterJSON struct {
	Name         string `json:"name"`
	PublicKeyPEM string `json:"public_key_pem"`
}

// ParseAttesterSet parses an attester set file:
//
//	{"attesters": [{"name": "checkfu-release-2026", "public_key_pem": "-----BEGIN PUBLIC KEY-----\n..."}]}
//
// Every key must be a PKIX PEM Ed25519 public key that decodes and
// re-encodes to the same bytes (PEM, DER and point), is not of small order
// ([CodeKeySmallOrder]) and lies in the prime-order subgroup
// ([CodeKeyMixedOrder]), as [ParsePublicKey] admits; other key faults are [CodeKeyInvalid]. Repeated
// names or keys are refused with [CodeAttesterDuplicate], and a malformed
// file with [CodeAttesterSetInvalid]. One bad entry refuses the whole set.
func ParseAttesterSet(data []byte) (*AttesterSet, error) {
	var sj attesterSetJSON
	if err := strictjson.Unmarshal(data, &sj, strictjson.Options{MaxDepth: 4}); err != nil {
		return nil, checkfu.Refuse(CodeAttesterSetInvalid, "signing: attester set: %v", err)
	}
	s := &AttesterSet{byID: make(map[KeyID]*admitted, len(sj.Attesters))}
	names := make(map[string]bool, len(sj.Attesters))
	for i, aj := range sj.Attesters {
		if err := checkName(aj.Name); err != nil {
			return nil, checkfu.Refuse(CodeAttesterSetInvalid, "signing: attester %d: %v", i, err)
		}
		if names[aj.Name] {
			return nil, checkfu.Refuse(CodeAttesterDuplicate, "signing: attester %d: name %q appears twice", i, aj.Name)
		}
		names[aj.Name] = true
		pub, id, err := parsePublicKeyPEM([]byte(aj.PublicKeyPEM))
		if err == nil {
			var k *PublicKey
			if k, err = admitKey(pub); err == nil {
				if prev, dup := s.byID[id]; dup {
					return nil, checkfu.Refuse(CodeAttesterDuplicate, "signing: attester %d (%q) has the key of attester %q", i, aj.Name, prev.name)
				}
				s.byID[id] = &admitted{name: aj.Name, id: id, key: k}
				s.order = append(s.order, id)
				continue
			}
		}
		var r *checkfu.Refusal
		if !errors.As(err, &r) {
			return nil, err
		}
		return nil, &checkfu.Refusal{Code: r.Code, Message: "signing: attester " + quote(aj.Name) + ": " + strings.TrimPrefix(r.Message, "signing: ")}
	}
	return s, nil
}

func quote(s string) string { return strconv.Quote(s) }

func checkName(name string) error {
	if name == "" || len(name) > 255 || !utf8.ValidString(name) {
		return checkfu.Refuse(CodeAttesterSetInvalid, "name %s must be 1 to 255 bytes of UTF-8", checkfu.Quote(name))
	}
	for _, c := range name {
		if unicode.IsControl(c) {
			return checkfu.Refuse(CodeAttesterSetInvalid, "name %s holds control character %U", checkfu.Quote(name), c)
		}
	}
	return nil
}

// Len returns the number of attesters in s.
func (s *AttesterSet) Len() int {
	if s == nil {
		return 0
	}
	return len(s.order)
}

// Attesters returns the attesters of s in file order (copies).
func (s *AttesterSet) Attesters() []Attester {
	if s == nil {
		return nil
	}
	out := make([]Attester, len(s.order))
	for i, id := range s.order {
		out[i] = s.byID[id].public()
	}
	return out
}

// lookup returns the admitted attester with key id id.
func (s *AttesterSet) lookup(id KeyID) (*admitted, bool) {
	if s == nil {
		return nil, false
	}
	a, ok := s.byID[id]
	return a, ok
}
