package eventlog

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/checkfu/checkfu"
)

func genEnvelope() *rapid.Generator[envelope] {
	ident := rapid.OneOf(rapid.Just(""), rapid.StringMatching(`[A-Za-z0-9._:@/+=-]{1,12}`))
	return rapid.Custom(func(t *rapid.T) envelope {
		env := envelope{
			session: rapid.StringMatching(`[a-z0-9-]{1,12}`).Draw(t, "session"),
			seq:     rapid.Uint64Min(1).Draw(t, "seq"),
			event: Event{
				Kind:     Kind(rapid.IntRange(1, int(kindEnd)-1).Draw(t, "kind")),
				Time:     time.Unix(0, rapid.Int64Min(0).Draw(t, "time")).UTC(),
				Label:    checkfu.Label(rapid.IntRange(0, 2).Draw(t, "label")),
				Decision: Decision(rapid.IntRange(0, 2).Draw(t, "decision")),
				Actor:    ident.Draw(t, "actor"),
				Code:     ident.Draw(t, "code"),
				Tool:     ToolDescriptor{ident.Draw(t, "tool"), ident.Draw(t, "tool_rev")},
				Result:   ident.Draw(t, "result"),
			},
			mode: ContentMode(rapid.IntRange(0, 2).Draw(t, "mode")),
			old:  rapid.SampledFrom([]uint8{0, envelopeVersionV1, envelopeVersionV2}).Draw(t, "old"),
		}
		e := &env.event
		if env.old != envelopeVersionV1 {
			// The fields version 2 added: a version 1 envelope has none.
			e.Role, e.Tenant, e.Workspace = ident.Draw(t, "role"), ident.Draw(t, "tenant"), ident.Draw(t, "workspace")
			e.Project, e.SessionID = ident.Draw(t, "project"), ident.Draw(t, "session_id")
		}
		if env.old == 0 {
			// The field version 3 added.
			e.Channel = ident.Draw(t, "channel")
		}
		if env.event.Kind == KindShred {
			env.seq = rapid.Uint64Min(2).Draw(t, "shred_seq")
			env.shredOf = rapid.Uint64Range(1, env.seq-1).Draw(t, "shred_of")
			env.mode = ContentNone
		}
		copy(env.prev[:], rapid.SliceOfN(rapid.Byte(), 32, 32).Draw(t, "prev"))
		if env.mode != ContentNone {
			copy(env.mac[:], rapid.SliceOfN(rapid.Byte(), 32, 32).Draw(t, "mac"))
		}
		if env.mode == ContentSealed {
			copy(env.sealed[:], rapid.SliceOfN(rapid.Byte(), 32, 32).Draw(t, "sealed"))
		}
		return env
	})
}

func TestEnvelopeRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		env := genEnvelope().Draw(t, "env")
		b := env.encode()
		got, err := decodeEnvelope(b)
		if err != nil {
			t.Fatalf("decode(encode(env)) = %v", err)
		}
		if diff := cmp.Diff(env, *got, cmp.AllowUnexported(envelope{})); diff != "" {
			t.Fatalf("round trip (-want +got):\n%s", diff)
		}
	})
}

func TestEnvelopeStrict(t *testing.T) {
	env := envelope{session: "s", seq: 1, event: Event{Kind: KindSkip, Time: time.Unix(5, 0).UTC()}}
	good := env.encode()
	if _, err := decodeEnvelope(good); err != nil {
		t.Fatal(err)
	}
	tests := map[string][]byte{
		"trailing byte": append(bytes.Clone(good), 0),
		"version 0":     append([]byte{0}, good[1:]...),
		"version 4":     append([]byte{4}, good[1:]...),
		// A version 3 body under an older version: the fields later
		// versions added are left over.
		"version 1 of a version 3 body": append([]byte{1}, good[1:]...),
		"version 2 of a version 3 body": append([]byte{2}, good[1:]...),
		"truncated":                     good[:len(good)-1],
		"empty":                         nil,
		"kind 0":                        replaceAt(good, 1+2+1+8+32+8, 0),
		"label 3":                       replaceAt(good, 1+2+1+8+32+8+1, 3),
		"content mode 3":                replaceAt(good, len(good)-1, 3),
		"seq 0":                         replaceAt(good, 1+2+1+7, 0),
	}
	for name, b := range tests {
		if _, err := decodeEnvelope(b); err == nil {
			t.Errorf("%s: decodeEnvelope accepted %x", name, b)
		}
	}
}

func replaceAt(b []byte, i int, v byte) []byte {
	c := bytes.Clone(b)
	c[i] = v
	return c
}

// FuzzDecodeEnvelope: decodeEnvelope never panics, and whatever it
// accepts re-encodes to exactly the input (one envelope, one encoding).
func FuzzDecodeEnvelope(f *testing.F) {
	for _, env := range []envelope{
		{session: "s", seq: 1, event: Event{Kind: KindSkip, Time: time.Unix(5, 0).UTC()}},
		{session: "sess-2", seq: 99, event: Event{Kind: KindToolCall, Actor: "a", Tool: ToolDescriptor{"t", "1"}, Time: time.Unix(0, 1).UTC()}, mode: ContentSealed},
		{session: "z", seq: 3, event: Event{Kind: KindDenial, Decision: DecisionDeny, Code: "no_rule_matched", Time: time.Unix(9, 9).UTC()}, mode: ContentDigestOnly},
	} {
		f.Add(env.encode())
	}
	f.Add(mustHex(f, v1Vector))
	f.Add(mustHex(f, v2Vector))
	f.Add(mustHex(f, v3Vector))
	f.Fuzz(func(t *testing.T, data []byte) {
		env, err := decodeEnvelope(data)
		if err != nil {
			return
		}
		if !bytes.Equal(env.encode(), data) {
			t.Fatalf("accepted %x, which re-encodes to %x", data, env.encode())
		}
	})
}

// TestShredEnvelopeStrict: a shred event names an earlier seq, and
// carries no content.
func TestShredEnvelopeStrict(t *testing.T) {
	shred := func(seq, of uint64, mode ContentMode) []byte {
		env := envelope{session: "s", seq: seq, event: Event{Kind: KindShred, Time: time.Unix(5, 0).UTC()}, shredOf: of, mode: mode}
		return env.encode()
	}
	if env, err := decodeEnvelope(shred(3, 2, ContentNone)); err != nil || env.shredOf != 2 {
		t.Fatalf("decode(shred of 2 at 3) = %+v, %v", env, err)
	}
	for name, b := range map[string][]byte{
		"shred of itself":    shred(3, 3, ContentNone),
		"shred of a later":   shred(3, 4, ContentNone),
		"shred of seq 0":     shred(3, 0, ContentNone),
		"shred with content": shred(3, 2, ContentDigestOnly),
	} {
		if _, err := decodeEnvelope(b); !errors.Is(err, CodeEventInvalid) {
			t.Errorf("%s: decode = %v, want %s", name, err, CodeEventInvalid)
		}
	}
}
