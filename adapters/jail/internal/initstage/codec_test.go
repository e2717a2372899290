package initstage_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"testing"

	"pgregory.net/rapid"

	"github.com/checkfu/checkfu/adapters/jail/internal/initstage"
)

// seedConfigs are configs like the provider's: a jail's, with binds,
// a relay and the groups; and the trial start's.
var seedConfigs = []initstage.Config{
	{
		SystemDirs: []string{"/usr", "/bin", "/lib", "/etc"},
		Binds:      []initstage.Bind{{FD: 0, Target: "/workspace", Dir: true, Writable: true}, {FD: 1, Target: "/opt/checkfu/probe"}},
		Hostname:   "checkfu-jail", Argv: []string{"/bin/echo", "x"}, Env: []string{"PATH=/usr/bin:/bin", "HOME=/workspace"},
		Dir: "/workspace", Landlock: 7, Relay: []initstage.Relay{{Port: 3128}}, NoFile: 1024, TmpBytes: 64 << 20, Cgroups: 3,
	},
	{Check: true},
}

// normal is c with empty lists made nil: the encoding does not tell
// them apart.
func normal(c initstage.Config) initstage.Config {
	for _, l := range []*[]string{&c.SystemDirs, &c.Argv, &c.Env} {
		if len(*l) == 0 {
			*l = nil
		}
	}
	if len(c.Binds) == 0 {
		c.Binds = nil
	}
	if len(c.Relay) == 0 {
		c.Relay = nil
	}
	return c
}

func TestConfigRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		strs := rapid.SliceOf(rapid.String())
		c := initstage.Config{
			SystemDirs: strs.Draw(t, "dirs"),
			Binds: rapid.SliceOf(rapid.Custom(func(t *rapid.T) initstage.Bind {
				return initstage.Bind{FD: rapid.Int().Draw(t, "fd"), Target: rapid.String().Draw(t, "target"), Dir: rapid.Bool().Draw(t, "dir"), Writable: rapid.Bool().Draw(t, "w")}
			})).Draw(t, "binds"),
			Hostname: rapid.String().Draw(t, "host"), Argv: strs.Draw(t, "argv"), Env: strs.Draw(t, "env"), Dir: rapid.String().Draw(t, "wd"),
			Landlock: rapid.Int().Draw(t, "landlock"),
			Relay: rapid.SliceOf(rapid.Custom(func(t *rapid.T) initstage.Relay {
				return initstage.Relay{Port: rapid.Int().Draw(t, "port")}
			})).Draw(t, "relay"),
			NoFile: rapid.Uint64().Draw(t, "nofile"), TmpBytes: rapid.Int64().Draw(t, "tmp"), Cgroups: rapid.Int().Draw(t, "cgroups"),
			Check: rapid.Bool().Draw(t, "check"),
		}
		got, err := initstage.DecodeConfig(c.Encode())
		if err != nil {
			t.Fatalf("DecodeConfig(Encode(c)): %v", err)
		}
		if !reflect.DeepEqual(got, normal(c)) {
			t.Fatalf("round trip: got %+v, want %+v", got, normal(c))
		}
		r := initstage.Ready{Tid: rapid.Int().Draw(t, "tid"), Landlock: rapid.Int().Draw(t, "abi")}
		if gr, err := initstage.DecodeReady(r.Encode()); err != nil || gr != r {
			t.Fatalf("Ready round trip: %+v, %v", gr, err)
		}
	})
}

// TestDecodeIsStrict refuses each way a message can differ from an
// encoding: cut short, a byte too many, a bool other than 0 or 1, a
// length past the end, a negative count.
func TestDecodeIsStrict(t *testing.T) {
	good := seedConfigs[0].Encode()
	le := func(v int64) []byte { return binary.LittleEndian.AppendUint64(nil, uint64(v)) }
	bad := map[string][]byte{
		"empty":            {},
		"cut short":        good[:len(good)-1],
		"a byte too many":  append(bytes.Clone(good), 0),
		"check is 2":       append(bytes.Clone(good[:len(good)-1]), 2),
		"a length too far": append(le(1), append(le(int64(len(good))), good[16:]...)...),
		"a negative count": append(le(-1), good[8:]...),
	}
	for name, msg := range bad {
		if _, err := initstage.DecodeConfig(msg); !errors.Is(err, initstage.ErrEncoding) {
			t.Errorf("%s: DecodeConfig = %v, want ErrEncoding", name, err)
		}
	}
	if _, err := initstage.DecodeConfig(good); err != nil {
		t.Errorf("the good message: %v", err)
	}
	r := initstage.Ready{Tid: 1, Landlock: 7}.Encode()
	for name, msg := range map[string][]byte{"cut short": r[:15], "a byte too many": append(bytes.Clone(r), 0), "JSON": []byte(`{"tid":1,"landlock":7}`)} {
		if _, err := initstage.DecodeReady(msg); !errors.Is(err, initstage.ErrEncoding) {
			t.Errorf("Ready %s: DecodeReady = %v, want ErrEncoding", name, err)
		}
	}
}

// FuzzDecodeConfig: no input panics, and whatever decodes is the one
// encoding of its value.
func FuzzDecodeConfig(f *testing.F) {
	for _, c := range seedConfigs {
		f.Add(c.Encode())
	}
	f.Add([]byte(`{"check":true}`))
	f.Fuzz(func(t *testing.T, msg []byte) {
		c, err := initstage.DecodeConfig(msg)
		if err != nil {
			return
		}
		if !bytes.Equal(c.Encode(), msg) {
			t.Fatalf("%x decodes to %+v, which encodes to %x", msg, c, c.Encode())
		}
	})
}

// FuzzDecodeReady: the same for the stage's report.
func FuzzDecodeReady(f *testing.F) {
	f.Add(initstage.Ready{Tid: 1, Landlock: 7}.Encode())
	f.Add([]byte(`{"tid":1}`))
	f.Fuzz(func(t *testing.T, msg []byte) {
		r, err := initstage.DecodeReady(msg)
		if err != nil {
			return
		}
		if !bytes.Equal(r.Encode(), msg) {
			t.Fatalf("%x decodes to %+v, which encodes to %x", msg, r, r.Encode())
		}
	})
}
