package acp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/acp"
)

// overLimit is one session/new request just over one limit of small.
type overLimit struct {
	name string
	req  acp.NewSessionRequest
	code checkfu.Code
}

var small = acp.SessionLimits{
	MaxResumeBlobBytes:      8,
	MaxMCPServers:           2,
	MaxMCPServerBytes:       32,
	MaxBuiltinTools:         2,
	MaxBuiltinToolNameBytes: 4,
	MaxContinuityBytes:      16,
	MaxRuntimeConfigBytes:   16,
}

// atLimit is a request exactly at every limit of small.
func atLimit() acp.NewSessionRequest {
	return acp.NewSessionRequest{
		Cwd:           "/w",
		ResumeBlob:    bytes.Repeat([]byte{1}, 8),
		MCPServers:    []json.RawMessage{json.RawMessage(`{"name":"a","command":"/bin/x"}`), json.RawMessage(`{}`)},
		BuiltinTools:  []string{"read", "edit"},
		Continuity:    json.RawMessage(`{"k":"01234567"}`), // 16 bytes
		RuntimeConfig: json.RawMessage(`{"k":"01234567"}`),
	}
}

func overLimits() []overLimit {
	with := func(f func(*acp.NewSessionRequest)) acp.NewSessionRequest {
		r := atLimit()
		f(&r)
		return r
	}
	return []overLimit{
		{"resume_blob", with(func(r *acp.NewSessionRequest) { r.ResumeBlob = append(r.ResumeBlob, 1) }), acp.CodeResumeBlobTooLarge},
		{"mcpServers count", with(func(r *acp.NewSessionRequest) { r.MCPServers = append(r.MCPServers, json.RawMessage(`{}`)) }), acp.CodeMCPServersTooMany},
		{"mcpServers size", with(func(r *acp.NewSessionRequest) {
			r.MCPServers[1] = json.RawMessage(`{"name":"b","command":"/bin/xyz"}`) // 33 bytes
		}), acp.CodeMCPServersTooMany},
		{"builtinTools count", with(func(r *acp.NewSessionRequest) { r.BuiltinTools = append(r.BuiltinTools, "x") }), acp.CodeBuiltinToolsTooLarge},
		{"builtinTools name", with(func(r *acp.NewSessionRequest) { r.BuiltinTools[1] = "write" }), acp.CodeBuiltinToolsTooLarge},
		{"continuity", with(func(r *acp.NewSessionRequest) { r.Continuity = json.RawMessage(`{"k":"012345678"}`) }), acp.CodeContinuityTooLarge},
		{"runtimeConfig", with(func(r *acp.NewSessionRequest) { r.RuntimeConfig = json.RawMessage(`{"k":"012345678"}`) }), acp.CodeRuntimeConfigTooLarge},
	}
}

// TestSessionLimitsCheck: a request at every limit passes, and one over
// any single limit is refused with that limit's code.
func TestSessionLimitsCheck(t *testing.T) {
	r := atLimit()
	if err := small.Check(&r); err != nil {
		t.Fatalf("request at every limit: %v", err)
	}
	for _, tt := range overLimits() {
		err := small.Check(&tt.req)
		if !errors.Is(err, tt.code) {
			t.Errorf("%s: Check = %v, want code %s", tt.name, err, tt.code)
		}
		if err != nil && (strings.Contains(err.Error(), "0123456") || strings.Contains(err.Error(), "/bin/")) {
			t.Errorf("%s: error quotes field content: %v", tt.name, err)
		}
	}
}

// TestSessionLimitsDefaults checks that the zero SessionLimits is the
// documented defaults, not "unlimited".
func TestSessionLimitsDefaults(t *testing.T) {
	var zero acp.SessionLimits
	big := acp.NewSessionRequest{ResumeBlob: make([]byte, acp.DefaultMaxResumeBlobBytes+1)}
	if err := zero.Check(&big); !errors.Is(err, acp.CodeResumeBlobTooLarge) {
		t.Errorf("zero limits accept a resume_blob of %d bytes: %v", len(big.ResumeBlob), err)
	}
	many := acp.NewSessionRequest{MCPServers: make([]json.RawMessage, acp.DefaultMaxMCPServers+1)}
	if err := zero.Check(&many); !errors.Is(err, acp.CodeMCPServersTooMany) {
		t.Errorf("zero limits accept %d mcpServers: %v", len(many.MCPServers), err)
	}
	tools := acp.NewSessionRequest{BuiltinTools: make([]string, acp.DefaultMaxBuiltinTools+1)}
	if err := zero.Check(&tools); !errors.Is(err, acp.CodeBuiltinToolsTooLarge) {
		t.Errorf("zero limits accept %d builtinTools: %v", len(tools.BuiltinTools), err)
	}
	cont := acp.NewSessionRequest{Continuity: make(json.RawMessage, acp.DefaultMaxContinuityBytes+1)}
	if err := zero.Check(&cont); !errors.Is(err, acp.CodeContinuityTooLarge) {
		t.Errorf("zero limits accept continuity of %d bytes: %v", len(cont.Continuity), err)
	}
	rc := acp.NewSessionRequest{RuntimeConfig: make(json.RawMessage, acp.DefaultMaxRuntimeConfigBytes+1)}
	if err := zero.Check(&rc); !errors.Is(err, acp.CodeRuntimeConfigTooLarge) {
		t.Errorf("zero limits accept runtimeConfig of %d bytes: %v", len(rc.RuntimeConfig), err)
	}
}

// countingWriter counts what reaches the agent's input.
type countingWriter struct {
	lockedWriter
	buf bytes.Buffer
}

func newCountingWriter(w io.Writer) *countingWriter {
	c := &countingWriter{}
	c.lockedWriter.w = io.MultiWriter(&c.buf, w)
	return c
}

// TestNewSessionRefusedBeforeWrite: an over-limit session/new is refused
// by the client with its code and not one byte of it reaches the agent.
func TestNewSessionRefusedBeforeWrite(t *testing.T) {
	out, in := startFake(t)
	cw := newCountingWriter(in)
	c := acp.NewClient(out, cw, acp.Config{Limits: small})
	t.Cleanup(func() { c.Close(); in.Close() })
	ctx := context.Background()
	if _, err := c.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	for _, tt := range overLimits() {
		before := cw.buf.Len()
		_, err := c.NewSession(ctx, tt.req)
		if !errors.Is(err, tt.code) {
			t.Errorf("%s: NewSession = %v, want code %s", tt.name, err, tt.code)
		}
		if n := cw.buf.Len() - before; n != 0 {
			t.Errorf("%s: %d bytes reached the agent before the refusal", tt.name, n)
		}
	}
	if _, err := c.NewSession(ctx, atLimit()); err != nil {
		t.Errorf("request at every limit: %v", err)
	}
	if !strings.Contains(cw.buf.String(), `"_meta":{"checkfu":{"resume_blob":"AQEBAQEBAQE=","builtinTools":["read","edit"]`) {
		t.Errorf("session/new frame lacks the harness fields in _meta.checkfu:\n%s", cw.buf.String())
	}
}

// TestSessionNewFrameIsBoundedByTheLine: a session/new within the field
// limits but over the line bound is refused as line_too_long, unwritten.
func TestSessionNewFrameIsBoundedByTheLine(t *testing.T) {
	out, in := startFake(t)
	cw := newCountingWriter(in)
	c := acp.NewClient(out, cw, acp.Config{MaxLineBytes: 1 << 10})
	t.Cleanup(func() { c.Close(); in.Close() })
	if _, err := c.Initialize(context.Background()); err != nil {
		t.Fatal(err)
	}
	before := cw.buf.Len()
	_, err := c.NewSession(context.Background(), acp.NewSessionRequest{Cwd: "/w", ResumeBlob: make([]byte, 2<<10)})
	if !errors.Is(err, acp.CodeLineTooLong) || cw.buf.Len() != before {
		t.Errorf("NewSession = %v after writing %d bytes, want line_too_long and nothing written", err, cw.buf.Len()-before)
	}
}
