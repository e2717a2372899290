package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/conformance"
	"github.com/checkfu/checkfu/conformance/matrix"
	"github.com/checkfu/checkfu/signing"
)

func init() {
	register(&command{
		name:    "receipt",
		summary: "sign and verify sandbox egress conformance receipts",
		run: func(e *env, args []string) error {
			return subcommands(e, "receipt", args, map[string]func(*env, []string) error{
				"sign":   receiptSign,
				"verify": receiptVerify,
			})
		},
	})
}

// receiptSign signs the JSON statement of a record into a DSSE receipt.
func receiptSign(e *env, args []string) error {
	fs := newFlagSet(e, "receipt sign", "-key KEY.pem -statement STATEMENT.json -out RECEIPT.json")
	keyPath := fs.String("key", "", "`path` of the attester's PKCS#8 PEM private key")
	stmtPath := fs.String("statement", "", "`path` of the record's JSON statement")
	out := fs.String("out", "", "`path` of the receipt to write (must not exist)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usagef("checkfu receipt sign takes no arguments (got %q)", fs.Args())
	}
	if *keyPath == "" || *stmtPath == "" || *out == "" {
		return usagef("checkfu receipt sign needs -key, -statement and -out")
	}
	signer, err := loadSigner(*keyPath)
	if err != nil {
		return withHint(err, "the key must be a PKCS#8 PEM Ed25519 private key, as made by \"checkfu attester keygen\" or \"openssl genpkey -algorithm ed25519\"")
	}
	stmt, err := receiptReadLimited(*stmtPath, 1<<20)
	if err != nil {
		return err
	}
	rec, err := conformance.ParseStatement(stmt)
	if err != nil {
		return withHint(err, "fix the statement; docs/receipts.md lists its fields and their rules")
	}
	env, err := conformance.Sign(signer, rec)
	if err != nil {
		return err
	}
	if err := attesterWriteNew(*out, env, 0o644); err != nil {
		return err
	}
	// The statement may come from the provider being attested: its pair
	// is printed as a cell (a bidirectional override is no control
	// character, so the record admits it).
	fmt.Fprintf(e.stdout, "signed %s for %s by key %s\n", *out, cell(rec.Target.String()), signer.KeyID())
	if missing := rec.Facts.Missing(); len(missing) > 0 {
		fmt.Fprintf(e.stderr, "note: the record lacks %v; this receipt certifies nothing\n", missing)
	}
	if rec.Label != checkfu.LabelProduction {
		fmt.Fprintf(e.stderr, "note: the evidence is labelled %s; only production evidence certifies\n", rec.Label)
	}
	return nil
}

// receiptVerify prints the grade a receipt gives one exact provider
// revision. It exits 0 only for security_boundary. With -evidence, the
// evidence file must also be the one the receipt's record names
// (matrix.ParseEvidenceFile, matrix.MatchEvidence), or the grade is
// advisory_filter.
func receiptVerify(e *env, args []string) error {
	fs := newFlagSet(e, "receipt verify", "[-attesters SET.json] [-evidence EVIDENCE.json] -provider P -revision R RECEIPT.json")
	setPath := fs.String("attesters", "", "`path` of the reviewed attester set (default: the built-in set, which is empty)")
	evidencePath := fs.String("evidence", "", "`path` of the matrix evidence file the receipt's record must name (optional)")
	provider := fs.String("provider", "", "exact provider name the receipt must certify")
	revision := fs.String("revision", "", "exact provider revision the receipt must certify")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("checkfu receipt verify needs exactly one RECEIPT.json argument")
	}
	if err := refuseEmpty(fs, "attesters", "evidence"); err != nil {
		return err
	}
	if *provider == "" || *revision == "" {
		return usagef("checkfu receipt verify needs -provider and -revision (the exact pair; no wildcards)")
	}
	set := conformance.BuiltinAttesters()
	if *setPath != "" {
		var err error
		if set, err = loadAttesterSet(*setPath); err != nil {
			return withHint(err, "the attester set file is refused as a whole; fix or remove the entry named above")
		}
	}
	env, err := receiptReadLimited(fs.Arg(0), signing.MaxEnvelopeSize)
	if err != nil {
		return err
	}
	target := checkfu.ProviderRevision{Provider: *provider, Revision: *revision}
	var evidence []byte
	if *evidencePath != "" {
		if evidence, err = receiptReadLimited(*evidencePath, matrix.MaxEvidenceFileSize); err != nil {
			return err
		}
	}
	receipt, err := conformance.Certify(set, env, target)
	if err == nil && evidence != nil {
		if err = matchEvidenceFile(evidence, receipt.Record()); err != nil {
			receipt = nil
		}
	}
	grade := conformance.EffectiveGrade(target, checkfu.SecurityBoundary, receipt)
	fmt.Fprintf(e.stdout, "provider: %s\nrevision: %s\n", target.Provider, target.Revision)
	fmt.Fprintf(e.stdout, "grade: %s\n", grade)
	if err != nil {
		code, _ := checkfu.CodeOf(err)
		fmt.Fprintf(e.stdout, "refused: %s\n", code)
		return withHint(err, verifyHint(code))
	}
	a, rec := receipt.Attester(), receipt.Record()
	fmt.Fprintf(e.stdout, "attester: %s (key %s)\n", textLine(a.Name), a.KeyID)
	fmt.Fprintf(e.stdout, "issued_at: %s\n", rec.IssuedAt.Format(time.RFC3339))
	for _, d := range rec.Evidence {
		fmt.Fprintf(e.stdout, "evidence: %s\n", d)
	}
	return nil
}

// matchEvidenceFile reads an evidence file strictly and refuses it
// unless it is the one rec names.
func matchEvidenceFile(b []byte, rec conformance.Record) error {
	rep, err := matrix.ParseEvidenceFile(b)
	if err != nil {
		return err
	}
	return matrix.MatchEvidence(rep, rec)
}

func verifyHint(code checkfu.Code) string {
	switch code {
	case matrix.CodeEvidenceFileInvalid, matrix.CodeEvidenceFileMismatch, conformance.CodeRecordInvalid:
		return "the evidence file is not the one this receipt's record names; obtain the receipt and its evidence file again from the attester, together"
	case signing.CodeAttesterUnknown:
		return "the signing key is not in the reviewed attester set; trust widens only by shipping a reviewed set file with -attesters"
	case conformance.CodeProviderMismatch, conformance.CodeRevisionMismatch:
		return "a receipt certifies one exact provider revision; this pair needs its own receipt"
	case conformance.CodeFactMissing, conformance.CodeLabelNotProduction:
		return "this receipt certifies nothing; only all five facts on production evidence do"
	}
	return "the receipt is not a valid signed conformance receipt; obtain it again from the attester"
}

// receiptReadLimited reads a document named on the command line, as
// readBounded does (at most limit+1 bytes, within inputWait), with the
// path alone in its errors.
func receiptReadLimited(path string, limit int64) ([]byte, error) {
	f, err := openInput(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := readInput(f, limit)
	if errors.Is(err, errInputStalled) {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "checkfu: %s sent no end within %v", checkfu.Quote(path), inputWait)
	}
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("checkfu: %q is larger than %d bytes", path, limit)
	}
	return data, nil
}

// maxSigningFile is signing's own bound on a key or attester set file
// (what signing.LoadSigner and LoadAttesterSet read), kept here so that
// the CLI reads them as it reads its other inputs, within inputWait.
const maxSigningFile = 1 << 20

// loadAttesterSet is signing.LoadAttesterSet read within inputWait.
func loadAttesterSet(path string) (*signing.AttesterSet, error) {
	b, err := receiptReadLimited(path, maxSigningFile)
	if err != nil {
		return nil, err
	}
	return signing.ParseAttesterSet(b)
}

// loadSigner is signing.LoadSigner read within inputWait; the key's
// bytes are cleared after use.
func loadSigner(path string) (*signing.Signer, error) {
	b, err := receiptReadLimited(path, maxSigningFile)
	if err != nil {
		return nil, err
	}
	defer clear(b)
	return signing.ParsePrivateKeyPEM(b)
}
