package runner_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/runner"
)

// LocalKeyWrapper seals under a key the host keeps apart from the key
// file: what it wraps opens only with the same associated data, and a key
// of the wrong size is refused.
func ExampleLocalKeyWrapper() {
	ctx := context.Background()
	kek := make([]byte, runner.LocalKeyWrapperKeySize)
	rand.Read(kek)
	w, err := runner.LocalKeyWrapper(kek)
	if err != nil {
		fmt.Println(err)
		return
	}
	wrapped, _ := w.Wrap(ctx, []byte("the key file's contents"), []byte("deployment-1"))
	plain, err := w.Unwrap(ctx, wrapped, []byte("deployment-1"))
	fmt.Printf("%q %v\n", plain, err)
	_, err = w.Unwrap(ctx, wrapped, []byte("deployment-2"))
	fmt.Println(err != nil, bytes.Contains(wrapped, []byte("contents")))

	_, err = runner.LocalKeyWrapper(kek[:16])
	code, _ := checkfu.CodeOf(err)
	fmt.Println(code)
	// Output:
	// "the key file's contents" <nil>
	// true false
	// config_invalid
}

// EphemeralKeys draws its keys from crypto/rand and keeps them only in
// memory: no two sources share a key, so a restarted Runner cannot read
// back what an earlier one sealed.
func ExampleEphemeralKeys() {
	a, _ := runner.EphemeralKeys().Deployment()
	b, _ := runner.EphemeralKeys().Deployment()
	fmt.Println(a.KeyID() != b.KeyID())
	// Output: true
}
