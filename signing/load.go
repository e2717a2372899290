package signing

import (
	"fmt"
	"io"
	"os"
)

// maxKeyFile bounds what LoadAttesterSet and LoadSigner read.
const maxKeyFile = 1 << 20

// LoadAttesterSet reads and parses the attester set file at path with
// [ParseAttesterSet]. It is the I/O half; the parser is pure.
func LoadAttesterSet(path string) (*AttesterSet, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return ParseAttesterSet(data)
}

// LoadSigner reads a PKCS#8 PEM private key from path with
// [ParsePrivateKeyPEM].
func LoadSigner(path string) (*Signer, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return ParsePrivateKeyPEM(data)
}

func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxKeyFile {
		return nil, fmt.Errorf("signing: %q is larger than %d bytes", path, maxKeyFile)
	}
	return data, nil
}
