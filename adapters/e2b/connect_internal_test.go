package e2b

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

func TestEnvelopeRefusals(t *testing.T) {
	for name, in := range map[string][]byte{
		"cut header":  {0, 0, 0},
		"compressed":  envelope(flagCompressed, []byte("{}")),
		"oversized":   {0, 0x7f, 0xff, 0xff, 0xff},
		"cut message": envelope(0, []byte(`{"event":{}}`))[:8],
	} {
		if _, _, err := readEnvelope(bytes.NewReader(in)); !errors.Is(err, CodeEnvdStreamInvalid) {
			t.Errorf("%s: readEnvelope = %v, want envd_stream_invalid", name, err)
		}
	}
	if _, _, err := readEnvelope(bytes.NewReader(nil)); err != io.EOF {
		t.Errorf("empty stream = %v, want io.EOF", err)
	}
	for name, msg := range map[string]string{
		"two events":    `{"event":{"start":{"pid":1},"keepalive":{}}}`,
		"no event":      `{"event":{}}`,
		"unknown event": `{"event":{"start":{"pid":1,"extra":1}}}`,
		"duplicate":     `{"event":{"start":{"pid":1}},"event":{"keepalive":{}}}`,
	} {
		if _, err := nextEvent(bytes.NewReader(envelope(0, []byte(msg)))); !errors.Is(err, CodeEnvdStreamInvalid) {
			t.Errorf("%s: nextEvent = %v, want envd_stream_invalid", name, err)
		}
	}
	if _, err := nextEvent(bytes.NewReader(envelope(flagEndStream, []byte(`{"error":{"code":"internal","message":"boom"}}`)))); !errors.Is(err, CodeEnvdRefused) {
		t.Errorf("an end-stream error = %v, want envd_refused", err)
	}
}

func TestExitStatus(t *testing.T) {
	for _, tc := range []struct {
		exited bool
		code   int
		status string
		want   int
	}{
		{true, 0, "exit status 0", 0}, {true, 3, "exit status 3", 3},
		{false, -1, "signal: killed", 137}, {false, -1, "signal: terminated", 143},
		{false, -1, "signal: segmentation fault (core dumped)", 139},
	} {
		if got := exitStatus(tc.exited, tc.code, tc.status); got != tc.want {
			t.Errorf("exitStatus(%t, %d, %q) = %d, want %d", tc.exited, tc.code, tc.status, got, tc.want)
		}
	}
}

// FuzzStream: any byte stream yields events or a typed refusal, never a
// panic.
func FuzzStream(f *testing.F) {
	f.Add(envelope(0, []byte(`{"event":{"start":{"pid":7}}}`)))
	f.Add(append(envelope(0, []byte(`{"event":{"data":{"stdout":"aGk="}}}`)), envelope(flagEndStream, []byte(`{}`))...))
	f.Add(envelope(flagEndStream, []byte(`{"error":{"code":"x","message":"y"}}`)))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bytes.NewReader(data)
		for range 100 {
			if _, err := nextEvent(r); err != nil {
				if err != io.EOF && !errors.Is(err, CodeEnvdStreamInvalid) && !errors.Is(err, CodeEnvdRefused) {
					t.Fatalf("untyped error %v", err)
				}
				return
			}
		}
	})
}
