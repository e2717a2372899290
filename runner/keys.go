package runner

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/signing"
)

// A KeySource gives the Runner the plane's keys. Each is asked for once,
// by New. None of them is a provider credential: those stay in custody
// behind their bindings.
type KeySource interface {
	// Custody returns the keyset native custody seals credentials under.
	Custody() (*custody.Keyset, error)
	// Log returns the keys the session log seals event content under.
	Log() (*eventlog.Keys, error)
	// Token returns the HMAC key of the server-owned tokens the
	// application server presents (at least gateway.MinTokenKey bytes).
	Token() ([]byte, error)
	// Deployment returns the deployment key: it signs each session's
	// frozen admission record and the materialization statement of the
	// Runner's own in-process provider.
	Deployment() (*signing.Signer, error)
}

// EphemeralKeys returns a KeySource whose keys are drawn from
// crypto/rand once and live only in memory: what a quickstart or a test
// needs, and nothing a restart can read back: a Runner restarted with
// EphemeralKeys on a Dir whose custody.db holds credentials refuses to
// start with CodeStoreKeysMismatch. A deployment supplies its own
// KeySource, such as a KeyFile.
func EphemeralKeys() KeySource { return ephemeral{} }

type ephemeral struct{}

func (ephemeral) Custody() (*custody.Keyset, error) { return custody.GenerateKeyset(), nil }

func (ephemeral) Log() (*eventlog.Keys, error) {
	k := make([]byte, eventlog.KeySize)
	rand.Read(k)
	return eventlog.NewKeys(k)
}

func (ephemeral) Token() ([]byte, error) {
	k := make([]byte, 32)
	rand.Read(k)
	return k, nil
}

func (ephemeral) Deployment() (*signing.Signer, error) {
	s, _, err := signing.GenerateSigner(nil)
	return s, err
}

// checkStoreKeys opens every stored credential under the namespaces of
// the Connections, so that keys lost across a restart refuse New with
// CodeStoreKeysMismatch instead of failing each call that needs the
// credential (where the agent would see only address_mismatch).
func (r *Runner) checkStoreKeys(ctx context.Context, native *custody.Native) error {
	seen := map[string]bool{}
	for _, c := range r.cfg.Connections {
		ns := c.Credential.Namespace
		if seen[ns] {
			continue
		}
		seen[ns] = true
		_, err := native.CheckNamespace(ctx, ns)
		if code, _ := checkfu.CodeOf(err); code == custody.CodeAddressMismatch || code == custody.CodeKeyVersionUnknown {
			return &checkfu.Refusal{Code: CodeStoreKeysMismatch, Err: err,
				Message: fmt.Sprintf("runner: the credential store holds records under namespace %s that no key of the KeySource opens; start with the keys they were sealed under (a KeyFile survives a restart, EphemeralKeys does not)", checkfu.Quote(ns))}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// keySet returns the attester set naming signer's public key name, the
// form LoadRecord and Enroll take trusted keys in.
func keySet(name string, signer *signing.Signer) (*signing.AttesterSet, error) {
	type entry struct {
		Name         string `json:"name"`
		PublicKeyPEM string `json:"public_key_pem"`
	}
	b, err := json.Marshal(map[string][]entry{"attesters": {{name, string(signer.PublicKeyPEM())}}})
	if err != nil {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "runner: the key of %s does not encode", checkfu.Quote(name))
	}
	return signing.ParseAttesterSet(b)
}
