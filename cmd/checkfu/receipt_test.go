package main

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/checkfu/checkfu"
)

const cliStatement = `{
  "provider": "checkfu:daytona-provider",
  "provider_revision": "2",
  "facts": ["exact_destination_match", "redirect_recheck", "connect_time_public_address", "authority_separation", "default_deny"],
  "label": "production",
  "evidence_digests": ["sha256:0000000000000000000000000000000000000000000000000000000000000001"],
  "issued_at": "2026-11-30T07:00:00Z"
}`

// keygen runs "attester keygen" into dir and returns the key path and the
// printed public key PEM.
func keygen(t *testing.T, dir, name string) (string, string) {
	t.Helper()
	key := filepath.Join(dir, name+".pem")
	stdout, stderr, code := runCLI(t, "", "attester", "keygen", "-out", key)
	if code != exitOK {
		t.Fatalf("attester keygen: exit %d, stderr %q", code, stderr)
	}
	if !regexp.MustCompile(`(?m)^key id: [0-9a-f]{64}$`).MatchString(stdout) {
		t.Fatalf("keygen output lacks a key id: %q", stdout)
	}
	i := strings.Index(stdout, "-----BEGIN PUBLIC KEY-----")
	if i < 0 {
		t.Fatalf("keygen output lacks the public key PEM: %q", stdout)
	}
	return key, stdout[i:]
}

func writeSet(t *testing.T, dir string, pems ...string) string {
	t.Helper()
	type entry struct {
		Name         string `json:"name"`
		PublicKeyPEM string `json:"public_key_pem"`
	}
	var es []entry
	for i, p := range pems {
		es = append(es, entry{Name: "attester-" + string(rune('a'+i)), PublicKeyPEM: p})
	}
	b, _ := json.Marshal(map[string][]entry{"attesters": es})
	path := filepath.Join(dir, "attesters.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func sign(t *testing.T, dir, key, statement, name string) string {
	t.Helper()
	stmt := filepath.Join(dir, name+".statement.json")
	if err := os.WriteFile(stmt, []byte(statement), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, name+".receipt.json")
	_, stderr, code := runCLI(t, "", "receipt", "sign", "-key", key, "-statement", stmt, "-out", out)
	if code != exitOK {
		t.Fatalf("receipt sign %s: exit %d, stderr %q", name, code, stderr)
	}
	return out
}

func TestAttesterKeygenMode(t *testing.T) {
	dir := t.TempDir()
	key, _ := keygen(t, dir, "k")
	fi, err := os.Stat(key)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("key mode %v, want 0600", fi.Mode().Perm())
	}
	_, stderr, code := runCLI(t, "", "attester", "keygen", "-out", key)
	if code != exitFailed || !strings.Contains(stderr, "already exists") {
		t.Fatalf("keygen over an existing file: exit %d, stderr %q", code, stderr)
	}
	for _, args := range [][]string{{"attester", "keygen"}, {"attester", "keygen", "-out", key, "extra"}, {"attester"}, {"attester", "nope"}} {
		if _, _, code := runCLI(t, "", args...); code != exitUsage {
			t.Errorf("checkfu %v: exit %d, want %d", args, code, exitUsage)
		}
	}
	for _, args := range [][]string{{"attester", "keygen", "-h"}, {"receipt", "sign", "-h"}, {"receipt", "verify", "-h"}} {
		_, stderr, code := runCLI(t, "", args...)
		if code != exitOK || !strings.Contains(stderr, "usage: checkfu "+args[0]+" "+args[1]) {
			t.Errorf("checkfu %v: exit %d, stderr %q", args, code, stderr)
		}
	}
}

func TestReceiptSignVerify(t *testing.T) {
	dir := t.TempDir()
	key, pub := keygen(t, dir, "attester")
	otherKey, _ := keygen(t, dir, "outsider")
	set := writeSet(t, dir, pub)
	good := sign(t, dir, key, cliStatement, "good")
	outsider := sign(t, dir, otherKey, cliStatement, "outsider")
	noDeny := sign(t, dir, key, strings.Replace(cliStatement, `, "default_deny"`, "", 1), "nodeny")
	mock := sign(t, dir, key, strings.Replace(cliStatement, `"production"`, `"mock"`, 1), "mock")
	tampered := filepath.Join(dir, "tampered.json")
	b, _ := os.ReadFile(good)
	var m map[string]any
	json.Unmarshal(b, &m)
	payload, _ := base64.StdEncoding.DecodeString(m["payload"].(string))
	payload[len(payload)-1] ^= 1 // last evidence byte
	m["payload"] = base64.StdEncoding.EncodeToString(payload)
	tb, _ := json.Marshal(m)
	os.WriteFile(tampered, tb, 0o644)

	tests := []struct {
		name    string
		args    []string
		code    int
		stdout  string
		refusal string
	}{
		{"certifies", []string{"-attesters", set, "-provider", "checkfu:daytona-provider", "-revision", "2", good}, exitOK, "grade: security_boundary", ""},
		{"built-in set", []string{"-provider", "checkfu:daytona-provider", "-revision", "2", good}, exitFailed, "grade: advisory_filter", "attester_unknown"},
		{"key outside the set", []string{"-attesters", set, "-provider", "checkfu:daytona-provider", "-revision", "2", outsider}, exitFailed, "grade: advisory_filter", "attester_unknown"},
		{"other revision", []string{"-attesters", set, "-provider", "checkfu:daytona-provider", "-revision", "3", good}, exitFailed, "grade: advisory_filter", "revision_mismatch"},
		{"worker provider", []string{"-attesters", set, "-provider", "checkfu:daytona-worker-provider", "-revision", "2", good}, exitFailed, "grade: advisory_filter", "provider_mismatch"},
		{"fact missing", []string{"-attesters", set, "-provider", "checkfu:daytona-provider", "-revision", "2", noDeny}, exitFailed, "grade: advisory_filter", "fact_missing"},
		{"mock evidence", []string{"-attesters", set, "-provider", "checkfu:daytona-provider", "-revision", "2", mock}, exitFailed, "grade: advisory_filter", "label_not_production"},
		{"tampered payload", []string{"-attesters", set, "-provider", "checkfu:daytona-provider", "-revision", "2", tampered}, exitFailed, "grade: advisory_filter", "signature_invalid"},
		{"no revision", []string{"-attesters", set, "-provider", "checkfu:daytona-provider", good}, exitUsage, "", ""},
		{"no receipt", []string{"-attesters", set, "-provider", "p", "-revision", "2"}, exitUsage, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runCLI(t, "", append([]string{"receipt", "verify"}, tt.args...)...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stdout %q stderr %q", code, tt.code, stdout, stderr)
			}
			if !strings.Contains(stdout, tt.stdout) {
				t.Fatalf("stdout %q lacks %q", stdout, tt.stdout)
			}
			if tt.refusal != "" && (!strings.Contains(stdout, "refused: "+tt.refusal) || !strings.Contains(stderr, "code: "+tt.refusal) || !strings.Contains(stderr, "hint: ")) {
				t.Fatalf("refusal %s not reported: stdout %q stderr %q", tt.refusal, stdout, stderr)
			}
		})
	}
}

func TestReceiptSignRefusesBadStatement(t *testing.T) {
	dir := t.TempDir()
	key, _ := keygen(t, dir, "attester")
	for name, stmt := range map[string]string{
		"unknown fact":        strings.Replace(cliStatement, `"default_deny"`, `"default_deny_v2"`, 1),
		"no evidence":         strings.Replace(cliStatement, `["sha256:0000000000000000000000000000000000000000000000000000000000000001"]`, `[]`, 1),
		"unknown field":       strings.Replace(cliStatement, `"label"`, `"grade": "security_boundary", "label"`, 1),
		"control in provider": strings.Replace(cliStatement, `daytona-provider`, `daytona\u0000provider`, 1),
	} {
		p := filepath.Join(dir, "s.json")
		os.WriteFile(p, []byte(stmt), 0o644)
		out := filepath.Join(dir, "r.json")
		_, stderr, code := runCLI(t, "", "receipt", "sign", "-key", key, "-statement", p, "-out", out)
		if code != exitFailed || !strings.Contains(stderr, "code: record_invalid") {
			t.Errorf("%s: exit %d, stderr %q", name, code, stderr)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s: a receipt was written", name)
		}
	}
}

// TestReceiptSignOpenSSLKey signs with a key from `openssl genpkey`.
func TestReceiptSignOpenSSLKey(t *testing.T) {
	openssl, err := exec.LookPath("openssl")
	if err != nil {
		t.Skip("openssl not installed")
	}
	dir := t.TempDir()
	key := filepath.Join(dir, "k.pem")
	if out, err := exec.Command(openssl, "genpkey", "-algorithm", "ed25519", "-out", key).CombinedOutput(); err != nil {
		t.Fatalf("openssl genpkey: %v\n%s", err, out)
	}
	pub, err := exec.Command(openssl, "pkey", "-in", key, "-pubout").Output()
	if err != nil {
		t.Fatal(err)
	}
	set := writeSet(t, dir, string(pub))
	receipt := sign(t, dir, key, cliStatement, "r")
	stdout, stderr, code := runCLI(t, "", "receipt", "verify", "-attesters", set, "-provider", "checkfu:daytona-provider", "-revision", "2", receipt)
	if code != exitOK {
		t.Fatalf("verify: exit %d, stdout %q stderr %q", code, stdout, stderr)
	}
}

func TestAttesterCheck(t *testing.T) {
	dir := t.TempDir()
	_, pub := keygen(t, dir, "a")
	set := writeSet(t, dir, pub)
	stdout, stderr, code := runCLI(t, "", "attester", "check", set)
	if code != exitOK || !strings.Contains(stdout, `"attester-a"`) || !strings.Contains(stdout, "1 attesters admitted") {
		t.Fatalf("attester check: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	bad := writeSet(t, dir, pub, pub)
	_, stderr, code = runCLI(t, "", "attester", "check", bad)
	if code != exitFailed || !strings.Contains(stderr, "code: attester_duplicate") {
		t.Fatalf("attester check of a duplicate: exit %d, stderr %q", code, stderr)
	}
	if _, _, code := runCLI(t, "", "attester", "check"); code != exitUsage {
		t.Fatalf("attester check without a file: exit %d", code)
	}
}

// TestReceiptVerifyQuotesTheAttesterName: an attester set may name an
// attester with a format character (a right-to-left override, which the
// set's own check lets through, unlike control characters); verify then
// prints the name quoted, so it cannot reorder what the terminal shows.
func TestReceiptVerifyQuotesTheAttesterName(t *testing.T) {
	dir := t.TempDir()
	key, pub := keygen(t, dir, "attester")
	name := "release\u202Eelif"
	b, _ := json.Marshal(map[string][]map[string]string{"attesters": {{"name": name, "public_key_pem": pub}}})
	set := filepath.Join(dir, "attesters.json")
	if err := os.WriteFile(set, b, 0o644); err != nil {
		t.Fatal(err)
	}
	good := sign(t, dir, key, cliStatement, "good")
	stdout, stderr, code := runCLI(t, "", "receipt", "verify", "-attesters", set, "-provider", "checkfu:daytona-provider", "-revision", "2", good)
	if code != exitOK {
		t.Fatalf("exit %d; stdout %q stderr %q", code, stdout, stderr)
	}
	if strings.Contains(stdout, "\u202E") || !strings.Contains(stdout, "attester: "+checkfu.Quote(name)) {
		t.Fatalf("the attester's name is not printed quoted: %q", stdout)
	}
}
