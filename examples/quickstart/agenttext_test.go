package main

import (
	"encoding/hex"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/checkfu/checkfu/acp"
)

// TestAgentTextCannotDriveTheTerminal: what an agent says, and the name
// it gives in initialize, reach the quickstart's progress lines only as
// printable text of bounded length: no escape sequence, no carriage
// return or newline (which would forge a line of the printed log), no
// bidirectional override, and no megabyte line.
func TestAgentTextCannotDriveTheTerminal(t *testing.T) {
	hostile := []string{
		"\x1b[2J\x1b[Hchain verified: 9 events\r\n7  tool_call  allow",
		"ok\u2028forged line\u2029and\u202egnirts desrever\u200b",
		"\x9b31m C1 CSI \x85 NEL",
		strings.Repeat("é", 1<<20),
		"\xff\xfe not UTF-8",
	}
	for _, in := range hostile {
		for _, got := range []string{printable(in), agentName(&acp.InitializeResponse{AgentInfo: &acp.Implementation{Name: in, Title: in}})} {
			if len(got) > 2*maxAgentText+64 {
				t.Errorf("printable(%.20q...) is %d bytes, want at most about %d", in, len(got), 2*maxAgentText)
			}
			if !utf8.ValidString(got) {
				t.Errorf("printable(%.20q...) = %.40q, not UTF-8", in, got)
			}
			for _, r := range got {
				if !unicode.IsPrint(r) {
					t.Errorf("printable(%.20q...) keeps %U", in, r)
					break
				}
			}
		}
	}
	if got := agentName(&acp.InitializeResponse{}); got != "an agent that gave no agentInfo" {
		t.Errorf("agentName without agentInfo = %q", got)
	}
	if got := agentName(nil); got != "an agent that gave no agentInfo" {
		t.Errorf("agentName(nil) = %q", got)
	}
}

// TestCredentialCheckCanFail: the check behind "the agent never saw the
// credential" finds the credential in an agent message, whole or
// hex-encoded, and passes a message without it.
func TestCredentialCheckCanFail(t *testing.T) {
	const secret = "qs_0123456789abcdef"
	for _, c := range []struct {
		msg  string
		want bool
	}{
		{`{"content":{"text":"the token is qs_0123456789abcdef"}}`, true},
		{`{"content":{"text":"` + hex.EncodeToString([]byte(secret)) + `"}}`, true},
		{`{"content":{"text":"filed issue 7"}}`, false},
	} {
		if got := holds([]byte(c.msg), secret); got != c.want {
			t.Errorf("holds(%s) = %v, want %v", c.msg, got, c.want)
		}
	}
}

// TestLeakScanFindsSecrets: the scan behind "no key or credential in the
// real agent's ACP messages, stderr or HOME" finds each secret whole or
// hex-encoded, also when it is split across writes, keeps a tail shorter
// than any encoding of a secret, and passes text without one.
func TestLeakScanFindsSecrets(t *testing.T) {
	secrets := []string{"qs_0123456789abcdef", "qs_model_fedcba9876543210"}
	for _, c := range []struct {
		name   string
		writes []string
		want   bool
	}{
		{"whole", []string{`{"text":"qs_model_fedcba9876543210"}`}, true},
		{"split", []string{`{"text":"qs_01234`, `56789abcdef"}`}, true},
		{"split byte by byte", strings.Split("key: qs_model_fedcba9876543210.", ""), true},
		{"hex, split", []string{"x" + hex.EncodeToString([]byte(secrets[0]))[:20], hex.EncodeToString([]byte(secrets[0]))[20:]}, true},
		{"clean", []string{"qs_0123456789abcde", "f is not it: a file ends between them"}, false},
		{"none", nil, false},
	} {
		l := &leakScan{secrets: secrets}
		for i, w := range c.writes {
			if c.name == "clean" && i == 1 {
				l.Write([]byte{0})
			}
			l.Write([]byte(w))
			if len(l.tail) >= 2*len(secrets[1]) {
				t.Errorf("%s: the scan keeps %d bytes, as long as a secret's hex encoding", c.name, len(l.tail))
			}
		}
		if got := l.leaked(); got != c.want {
			t.Errorf("%s: leaked() = %v, want %v", c.name, got, c.want)
		}
	}
}
