package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/checkfu/checkfu/signing"
)

func init() {
	register(&command{
		name:    "attester",
		summary: "make conformance attester keys",
		run: func(e *env, args []string) error {
			return subcommands(e, "attester", args, map[string]func(*env, []string) error{
				"keygen": attesterKeygen,
				"check":  attesterCheck,
			})
		},
	})
}

// attesterKeygen writes a new PKCS#8 PEM Ed25519 private key to -out
// (mode 0600, never overwriting) and prints the public key PEM and key id.
func attesterKeygen(e *env, args []string) error {
	fs := newFlagSet(e, "attester keygen", "-out KEY.pem")
	out := fs.String("out", "", "`path` of the new private key (created with mode 0600; must not exist)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usagef("checkfu attester keygen takes no arguments (got %q)", fs.Args())
	}
	if *out == "" {
		return usagef("checkfu attester keygen needs -out KEY.pem")
	}
	signer, privatePEM, err := signing.GenerateSigner(nil)
	if err != nil {
		return err
	}
	if err := attesterWriteNew(*out, privatePEM, 0o600); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "key id: %s\n", signer.KeyID())
	fmt.Fprintf(e.stdout, "%s", signer.PublicKeyPEM())
	return nil
}

// attesterCheck loads an attester set file under the same admission rules
// receipt verification uses and lists who it admits, for the review that
// must precede shipping it.
func attesterCheck(e *env, args []string) error {
	fs := newFlagSet(e, "attester check", "SET.json")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("checkfu attester check needs exactly one SET.json argument")
	}
	set, err := loadAttesterSet(fs.Arg(0))
	if err != nil {
		return withHint(err, "the whole set is refused; fix or remove the entry named above")
	}
	for _, a := range set.Attesters() {
		fmt.Fprintf(e.stdout, "%s %q\n", a.KeyID, a.Name)
	}
	fmt.Fprintf(e.stdout, "%d attesters admitted\n", set.Len())
	return nil
}

// attesterWriteNew creates path with mode perm and writes data, refusing to
// replace an existing file.
func attesterWriteNew(path string, data []byte, perm os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return withHint(fmt.Errorf("checkfu: %q already exists", path), "choose a new path; an existing file is never overwritten")
		}
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return err
	}
	return nil
}
