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
