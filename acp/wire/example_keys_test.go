package wire_test

import (
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/acp/wire"
)

// GenerateKey returns the private key this side keeps and the public key
// the other side pins, both PEM.
func ExampleGenerateKey() {
	priv, pub, err := wire.GenerateKey(nil) // nil: crypto/rand
	if err != nil {
		fmt.Println(err)
		return
	}
	privBlock, _ := pem.Decode(priv)
	pubBlock, _ := pem.Decode(pub)
	fmt.Println(privBlock.Type, "|", pubBlock.Type)
	// Output: PRIVATE KEY | PUBLIC KEY
}

// Keys pin at least one peer, and print no key material.
func ExampleNewKeys() {
	priv, _, _ := wire.GenerateKey(nil)
	_, peer, _ := wire.GenerateKey(nil)

	k, err := wire.NewKeys(priv, peer)
	fmt.Println(err, k.String() == fmt.Sprintf("wire.Keys(key id %s, 1 pinned peers)", k.KeyID()))

	_, err = wire.NewKeys(priv) // no peer
	code, _ := checkfu.CodeOf(err)
	fmt.Println(code)
	// Output:
	// <nil> true
	// config_invalid
}

// A Unix socket made by Listen is mode 0600 whatever the umask.
func ExampleListen() {
	dir, err := os.MkdirTemp("", "wire")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	ln, err := wire.Listen("unix", filepath.Join(dir, "wire.sock"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ln.Close()
	fi, err := os.Stat(filepath.Join(dir, "wire.sock"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(fi.Mode().Perm())
	// Output: -rw-------
}
