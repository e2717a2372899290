package engine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/checkfu/checkfu"
)

func frame(stream byte, data string) []byte {
	h := make([]byte, 8, 8+len(data))
	h[0] = stream
	binary.BigEndian.PutUint32(h[4:], uint32(len(data)))
	return append(h, data...)
}

func TestDemux(t *testing.T) {
	var in []byte
	in = append(in, frame(1, "out1 ")...)
	in = append(in, frame(2, "err1 ")...)
	in = append(in, frame(1, "")...)
	in = append(in, frame(1, "out2")...)
	var out, errb bytes.Buffer
	if err := Demux(bytes.NewReader(in), &out, &errb); err != nil {
		t.Fatal(err)
	}
	if out.String() != "out1 out2" || errb.String() != "err1 " {
		t.Fatalf("Demux: stdout %q stderr %q", out.String(), errb.String())
	}
}

func TestDemuxRefusesBrokenStreams(t *testing.T) {
	// A whole frame one byte over the bound: refused for its header, not
	// for running short.
	long := frame(1, strings.Repeat("x", maxFrame+1))
	for name, in := range map[string][]byte{
		"cut header":     frame(1, "abc")[:5],
		"cut frame":      frame(1, "abc")[:10],
		"bad stream":     frame(3, "abc"),
		"padding set":    append([]byte{1, 0, 1, 0}, frame(1, "abc")[4:]...),
		"oversize frame": long,
	} {
		err := Demux(bytes.NewReader(in), nil, nil)
		if !errors.Is(err, CodeEngineRequestFailed) {
			t.Errorf("%s: Demux = %v, want %s", name, err, CodeEngineRequestFailed)
		}
	}
}

// FuzzDemux checks that Demux never panics and that, on a stream it
// accepts, stdout and stderr together hold exactly the frames' bytes.
func FuzzDemux(f *testing.F) {
	f.Add(append(frame(1, "hello"), frame(2, "err")...))
	f.Add(frame(0, "in"))
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, in []byte) {
		var out, errb bytes.Buffer
		if err := Demux(bytes.NewReader(in), &out, &errb); err != nil {
			return
		}
		if got := out.Len() + errb.Len() + 8*countFrames(in); got != len(in) {
			t.Fatalf("accepted %d bytes but delivered %d (with headers)", len(in), got)
		}
	})
}

func countFrames(in []byte) int {
	n := 0
	for len(in) >= 8 {
		l := int(binary.BigEndian.Uint32(in[4:8]))
		in = in[8+l:]
		n++
	}
	return n
}

func TestVersionLess(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"1.40", "1.41", true}, {"1.41", "1.41", false}, {"1.9", "1.41", true}, {"1.100", "1.41", false},
		{"2.0", "1.47", false}, {"", "1.41", true}, {"x.y", "1.41", true}, {"1.-1", "1.41", true},
	} {
		if got := versionLess(c.a, c.b); got != c.want {
			t.Errorf("versionLess(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

func TestSocketFromEnv(t *testing.T) {
	for _, c := range []struct {
		env, want string
		code      checkfu.Code
	}{
		{"", DefaultSocket, ""},
		{"unix:///run/x.sock", "/run/x.sock", ""},
		{"tcp://198.18.0.1:2375", "", checkfu.CodeConfigInvalid},
		{"unix://", "", checkfu.CodeConfigInvalid},
		{"/run/x.sock", "", checkfu.CodeConfigInvalid},
	} {
		t.Setenv("DOCKER_HOST", c.env)
		got, err := SocketFromEnv()
		if c.code != "" {
			if !errors.Is(err, c.code) {
				t.Errorf("DOCKER_HOST=%q: %v, want %s", c.env, err, c.code)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("DOCKER_HOST=%q: %q, %v; want %q", c.env, got, err, c.want)
		}
	}
}

// TestAPIErrors maps engine error answers to codes.
func TestAPIErrors(t *testing.T) {
	for _, c := range []struct {
		method, path string
		status       int
		body         string
		code         checkfu.Code
	}{
		{"POST", "/v1.41/containers/create", 404, `{"message":"No such image: x:y"}`, CodeImageMissing},
		{"GET", "/v1.41/containers/abc/json", 404, `{"message":"No such container: abc"}`, CodeEngineObjectMissing},
		{"POST", "/v1.41/networks/create", 409, `{"message":"network with name n already exists"}`, CodeEngineNameConflict},
		{"POST", "/v1.41/networks/create", 403, `{"message":"Pool overlaps with other one on this address space"}`, CodeEngineNameConflict},
		{"POST", "/v1.41/containers/create", 400, `{"message":"bad"}`, CodeEngineRequestFailed},
		{"POST", "/v1.41/containers/create", 500, `not json`, CodeEngineRequestFailed},
	} {
		req := httptest.NewRequest(c.method, c.path, nil)
		rec := httptest.NewRecorder()
		rec.WriteHeader(c.status)
		rec.WriteString(c.body)
		err := apiError(req, rec.Result())
		if !errors.Is(err, c.code) {
			t.Errorf("%s %s %d: %v, want %s", c.method, c.path, c.status, err, c.code)
		}
		if strings.Contains(err.Error(), "/v1.41") {
			t.Errorf("error names the versioned path: %v", err)
		}
	}
}
