package signing_test

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/signing"
)

// exampleKey is a fixed key so that the examples' output is
// deterministic. Never use a published key.
const exampleKey = `-----BEGIN PRIVATE KEY-----
MC4CAQAwBQYDK2VwBCIEINGoLlF1LEo8bxTAXNZsJS+OXvkkORoiab8+6wlz8dUo
-----END PRIVATE KEY-----
`

// exampleSetFile is the attester set file an operator would ship.
func exampleSetFile(signer *signing.Signer) []byte {
	b, _ := json.Marshal(map[string]any{"attesters": []map[string]string{{"name": "checkfu-release", "public_key_pem": string(signer.PublicKeyPEM())}}})
	return b
}

func ExampleParsePrivateKeyPEM() {
	signer, err := signing.ParsePrivateKeyPEM([]byte(exampleKey))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("key id:", signer.KeyID())
	fmt.Print(string(signer.PublicKeyPEM()))
	// Output:
	// key id: 9ffd5db67699bdb0bc2ec36a1e2d1bfbb03bcf3db499cfcf9ca52ae0ee244fb4
	// -----BEGIN PUBLIC KEY-----
	// MCowBQYDK2VwAyEAL+XIuP8rh1/93MLXfmm3EA4yjVlG4DiWMIf0+7VIcL0=
	// -----END PUBLIC KEY-----
}

func ExampleGenerateSigner() {
	signer, privatePEM, err := signing.GenerateSigner(nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	again, err := signing.ParsePrivateKeyPEM(privatePEM)
	fmt.Println(err == nil && again.KeyID() == signer.KeyID())
	// Output: true
}

func ExampleParseAttesterSet() {
	signer, _ := signing.ParsePrivateKeyPEM([]byte(exampleKey))
	set, err := signing.ParseAttesterSet(exampleSetFile(signer))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, a := range set.Attesters() {
		fmt.Println(a.Name, a.KeyID == signer.KeyID())
	}
	// The identity point as a key would make one fixed signature verify
	// for every message; admission refuses it.
	_, err = signing.ParseAttesterSet([]byte(`{"attesters":[{"name":"evil","public_key_pem":"-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAAQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n-----END PUBLIC KEY-----\n"}]}`))
	code, _ := checkfu.CodeOf(err)
	fmt.Println(code)
	// Output:
	// checkfu-release true
	// key_small_order
}

func ExampleLoadAttesterSet() {
	signer, _ := signing.ParsePrivateKeyPEM([]byte(exampleKey))
	dir, _ := os.MkdirTemp("", "attesters")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "attesters.json")
	_ = os.WriteFile(path, exampleSetFile(signer), 0o644)
	set, err := signing.LoadAttesterSet(path)
	fmt.Println(set.Len(), err)
	// Output: 1 <nil>
}

func ExampleKeyIDOf() {
	signer, _ := signing.ParsePrivateKeyPEM([]byte(exampleKey))
	id, err := signing.KeyIDOf(signer.PublicKeyPEM())
	fmt.Println(id == signer.KeyID(), err)
	// Output: true <nil>
}

func ExampleLoadSigner() {
	dir, _ := os.MkdirTemp("", "signer")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "key.pem")
	_ = os.WriteFile(path, []byte(exampleKey), 0o600)
	signer, err := signing.LoadSigner(path)
	fmt.Println(signer.KeyID(), err)
	// Output: 9ffd5db67699bdb0bc2ec36a1e2d1bfbb03bcf3db499cfcf9ca52ae0ee244fb4 <nil>
}

func ExampleParseKeyID() {
	id, err := signing.ParseKeyID("9ffd5db67699bdb0bc2ec36a1e2d1bfbb03bcf3db499cfcf9ca52ae0ee244fb4")
	fmt.Println(err)
	signer, _ := signing.ParsePrivateKeyPEM([]byte(exampleKey))
	fmt.Println(id == signer.KeyID())

	_, err = signing.ParseKeyID("9ffd5db6")
	fmt.Println(errors.Is(err, signing.CodeKeyInvalid))
	fmt.Println(err)
	// Output:
	// <nil>
	// true
	// true
	// refused: key_invalid: signing: key id "9ffd5db6" is not 64 lowercase hex digits
}

func ExampleSigner_SignPayload() {
	signer, _ := signing.ParsePrivateKeyPEM([]byte(exampleKey))
	env, err := signer.SignPayload("checkfu.example-statement.v1", []byte("hello"))
	if err != nil {
		fmt.Println(err)
		return
	}
	var e struct {
		PayloadType string `json:"payloadType"`
	}
	_ = json.Unmarshal(env, &e)
	fmt.Println(e.PayloadType)
	_, err = signer.SignPayload("example.v1", []byte("hello"))
	fmt.Println(errors.Is(err, signing.CodePayloadTypeInvalid))
	// Output:
	// checkfu.example-statement.v1
	// true
}

func ExampleAttesterSet_VerifyPayload() {
	signer, _ := signing.ParsePrivateKeyPEM([]byte(exampleKey))
	set, _ := signing.ParseAttesterSet(exampleSetFile(signer))
	env, _ := signer.SignPayload("checkfu.example-statement.v1", []byte("hello"))
	who, payload, err := set.VerifyPayload(env, "checkfu.example-statement.v1")
	fmt.Println(who.Name, string(payload), err)
	_, _, err = set.VerifyPayload(env, "checkfu.other-statement.v1")
	code, _ := checkfu.CodeOf(err)
	fmt.Println(code)
	// Output:
	// checkfu-release hello <nil>
	// payload_type_mismatch
}

func ExampleParsePublicKey() {
	signer, _ := signing.ParsePrivateKeyPEM([]byte(exampleKey))
	env, _ := signer.SignPayload("checkfu.example-statement.v1", []byte("hello"))
	var e struct {
		Signatures []struct {
			Sig []byte `json:"sig"`
		} `json:"signatures"`
	}
	_ = json.Unmarshal(env, &e)
	raw, _ := hex.DecodeString("2fe5c8b8ff2b875ffddcc2d77e69b7100e328d5946e038963087f4fbb54870bd") // the key of exampleKey
	key, err := signing.ParsePublicKey(raw)
	fmt.Println(err, key.Verify([]byte("DSSEv1 28 checkfu.example-statement.v1 5 hello"), e.Signatures[0].Sig))
	// The identity point would make one fixed signature verify for every
	// message; admission refuses it.
	identity := make([]byte, 32)
	identity[0] = 1
	_, err = signing.ParsePublicKey(identity)
	code, _ := checkfu.CodeOf(err)
	fmt.Println(code)
	// Output:
	// <nil> true
	// key_small_order
}
