package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"

	"golang.org/x/mod/sumdb/note"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/eventlog"
)

// maxKeyFile bounds a key or checkpoint file read by "log".
const maxKeyFile = 64 << 10

// readSigner loads a note signer key written by "log keygen", from a
// file no other user may read or write.
func readSigner(path string) (note.Signer, error) {
	b, err := readKeyFile("-signing-key", path, true, maxKeyFile)
	if err != nil {
		return nil, withHint(fmt.Errorf("checkfu log: read signing key: %w", err), "create one with: checkfu log keygen -name NAME -signing-key FILE (mode 0600)")
	}
	defer clear(b)
	s, err := note.NewSigner(string(bytes.TrimSpace(b)))
	if err != nil {
		// The error of NewSigner may quote the key: say only what failed.
		return nil, withHint(checkfu.Refuse(eventlog.CodeCheckpointSignerMissing, "checkfu log: %q does not hold a note signing key", path),
			"create one with: checkfu log keygen -name NAME -signing-key FILE")
	}
	return s, nil
}

// readCheckpoint loads a checkpoint and the verifier key to check it,
// from a file no other user may write.
func readCheckpoint(checkpointFile, verifierFile string) ([]byte, note.Verifiers, error) {
	vb, err := readKeyFile("-verifier-key", verifierFile, false, maxKeyFile)
	if err != nil {
		return nil, nil, err
	}
	v, err := eventlog.NewCheckpointVerifier(string(bytes.TrimSpace(vb)))
	if err != nil {
		return nil, nil, withHint(err, "pass -verifier-key the file \"checkfu log keygen\" printed the verifier key to")
	}
	cp, err := readBounded("-checkpoint", checkpointFile, maxKeyFile)
	if err != nil {
		return nil, nil, fmt.Errorf("checkfu log: read checkpoint: %w", err)
	}
	return cp, note.VerifierList(v), nil
}

func logCheckpoint(e *env, args []string) error {
	var lf logFlags
	var keyFile, masterFile string
	fs := lf.register(e, "checkpoint", "-store DSN -session ID -signing-key FILE [-key-file F] > checkpoint")
	fs.StringVar(&keyFile, "signing-key", "", "file with the log's note signing key (from \"checkfu log keygen\")")
	fs.StringVar(&masterFile, "key-file", "", "file with the workspace master key (64 hex digits): sign only if every shred event was made by a holder of the key")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := lf.check("checkpoint"); err != nil {
		return err
	}
	if err := refuseEmpty(fs, "key-file"); err != nil {
		return err
	}
	if keyFile == "" {
		return usagef("checkfu log checkpoint: -signing-key is required")
	}
	signer, err := readSigner(keyFile)
	if err != nil {
		return err
	}
	keys, err := readKeys(masterFile)
	if err != nil {
		return err
	}
	ctx := context.Background()
	store, err := openStore(ctx, lf.store, false)
	if err != nil {
		return err
	}
	defer store.Close()
	l, err := eventlog.New(store, eventlog.Options{Signer: signer, Keys: keys})
	if err != nil {
		return err
	}
	cp, err := l.Checkpoint(ctx, lf.session)
	if errors.Is(err, eventlog.CodeEventNotFound) {
		return withHint(err, "check -session: an empty log has no checkpoint")
	}
	if err != nil {
		return err
	}
	_, err = e.stdout.Write(cp)
	return err
}

func logKeygen(e *env, args []string) error {
	var name, keyFile string
	fs := newFlagSet(e, "log keygen", "-name NAME -signing-key FILE > verifier-key")
	fs.StringVar(&name, "name", "", "the key's name, which begins every checkpoint's origin (such as example.com/eventlog)")
	fs.StringVar(&keyFile, "signing-key", "", "file to create (mode 0600) with the signing key; the verifier key goes to stdout")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if name == "" || keyFile == "" {
		return usagef("checkfu log keygen: -name and -signing-key are required")
	}
	skey, vkey, err := note.GenerateKey(rand.Reader, name)
	if err != nil {
		return usagef("checkfu log keygen: -name %q is not a key name (no spaces or '+')", name)
	}
	f, err := os.OpenFile(keyFile, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, iofs.ErrExist) {
		return withHint(fmt.Errorf("checkfu log keygen: %q exists", keyFile), "a signing key is never overwritten; choose another file")
	}
	if err != nil {
		return fmt.Errorf("checkfu log keygen: %w", err)
	}
	_, err = f.WriteString(skey + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("checkfu log keygen: write %q: %w", keyFile, err)
	}
	_, err = fmt.Fprintln(e.stdout, vkey)
	return err
}

// writeCheckpoint signs a checkpoint of session, the input being at its
// end, and writes it to path by rename, so that path holds either the old
// checkpoint or the new one, even across a crash: the new file is a
// fresh temporary file beside path (created, never opened through a
// link someone left there), synced before the rename, and the directory
// is synced after it.
func writeCheckpoint(ctx context.Context, l *eventlog.Log, session, path string) error {
	cp, err := l.Checkpoint(ctx, session)
	if err != nil {
		return withHint(fmt.Errorf("checkfu log append: checkpoint: %w", err), "the events acknowledged are stored; run \"checkfu log checkpoint\" to sign one")
	}
	if err := replaceFile(path, cp); err != nil {
		return fmt.Errorf("checkfu log append: write checkpoint: %w", err)
	}
	return nil
}

// replaceFile replaces path with a file holding b, mode 0644, atomically
// and durably.
func replaceFile(path string, b []byte) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()
	_, err = f.Write(b)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return nil // the rename is done; only its durability is unconfirmed
	}
	defer d.Close()
	_ = d.Sync()
	return nil
}
