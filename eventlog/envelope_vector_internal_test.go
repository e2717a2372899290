package eventlog

import (
	"bytes"
	"encoding/hex"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/checkfu/checkfu"
)

// The pinned envelopes: one event as the log wrote it before version 2
// (v1Vector, produced by the encoder of version 1), as it wrote it
// before version 3, with the whole request context (v2Vector), and as it
// writes it now, with the channel too (v3Vector), with their record
// hashes. A change to the encoding or to the chain's domain fails here
// first; a log written before version 2 or 3 still verifies because
// v1Vector and v2Vector still decode, re-encode to themselves and hash
// the same.
const (
	v1Vector = "010006736573732d310000000000000002000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f187d0bcc0be6a00501010100057265712d31000572756e2d310008757365723a626f62000a617574686f72697a65640000000000000000000b6c6973745f6973737565730000000000000000000000000000000b6973737565732e6c6973740000000a617574686f72697a6564000c636865636b6675407465737402a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
	v1Hash   = "84f306a29e1304bc5144bcb24ca5409d3ccc2ea14856393c55e53071364d2cc7"
	v2Vector = "020006736573732d310000000000000002000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f187d0bcc0be6a00501010100057265712d31000572756e2d310008757365723a626f62000a617574686f72697a65640000000000000000000b6c6973745f6973737565730000000000000000000000000000000b6973737565732e6c6973740000000a617574686f72697a6564000c636865636b6675407465737400066d656d62657200056f72672d31000477732d31000670726f6a2d310006736573732d3102a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
	v2Hash   = "3483e3d953337a2a62a394b54349a0337eacc32b981e193d210f78a20c129a32"
	v3Vector = "030006736573732d310000000000000002000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f187d0bcc0be6a00501010100057265712d31000572756e2d310008757365723a626f62000a617574686f72697a65640000000000000000000b6c6973745f6973737565730000000000000000000000000000000b6973737565732e6c6973740000000a617574686f72697a6564000c636865636b6675407465737400066d656d62657200056f72672d31000477732d31000670726f6a2d310006736573732d31001b63682d30303031303230333034303530363037303830393061306202a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
	v3Hash   = "598e81268323412923a2e4510627728965bd29f0dc635bff7c86c6b443d05cac"
)

// vectorEnvelope is the envelope the vectors hold, as version v: each
// older version leaves out the fields later versions added.
func vectorEnvelope(v uint8) envelope {
	old := v
	if v == envelopeVersion {
		old = 0
	}
	env := envelope{session: "sess-1", seq: 2, mode: ContentDigestOnly, old: old, event: Event{
		Kind: KindToolCall, Time: time.Unix(1764579600, 5).UTC(), Label: checkfu.LabelIsolated,
		RequestID: "req-1", RunID: "run-1", Actor: "user:bob", Decision: DecisionAllow, Code: "authorized",
		Tool: ToolDescriptor{"list_issues", ""}, Release: "checkfu@test", EffectID: "issues.list", Result: "authorized",
	}}
	e := &env.event
	if v >= envelopeVersionV2 {
		e.Role, e.Tenant, e.Workspace, e.Project, e.SessionID = "member", "org-1", "ws-1", "proj-1", "sess-1"
	}
	if v >= 3 {
		e.Channel = "ch-000102030405060708090a0b"
	}
	for i := range env.prev {
		env.prev[i] = byte(i)
	}
	for i := range env.mac {
		env.mac[i] = byte(0xa0 + i)
	}
	return env
}

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestEnvelopeVectors(t *testing.T) {
	for _, tc := range []struct {
		name         string
		v            uint8
		vector, hash string
	}{
		{"version 1", envelopeVersionV1, v1Vector, v1Hash},
		{"version 2", envelopeVersionV2, v2Vector, v2Hash},
		{"version 3", 3, v3Vector, v3Hash},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := vectorEnvelope(tc.v)
			b := mustHex(t, tc.vector)
			got, err := decodeEnvelope(b)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if diff := cmp.Diff(want, *got, cmp.AllowUnexported(envelope{})); diff != "" {
				t.Errorf("decoded (-want +got):\n%s", diff)
			}
			if enc := want.encode(); !bytes.Equal(enc, b) {
				t.Errorf("encode = %x\nwant     %s", enc, tc.vector)
			}
			if h := chainHash(b).String(); h != tc.hash {
				t.Errorf("chain hash = %s, want %s", h, tc.hash)
			}
		})
	}
	// The log writes version 3: an envelope built by the log is never
	// of an older version.
	if b := (&envelope{session: "s", seq: 1, event: Event{Kind: KindSkip}}).encode(); b[0] != envelopeVersion || envelopeVersion != 3 {
		t.Errorf("a new envelope is version %d", b[0])
	}
}

// TestOlderVersionsVerify: a log whose first record was written as
// version 1 (before version 2), whose second was written as version 2
// (before version 3) and whose next one is version 3 verifies, reads
// back in order (the version 1 event with no role, tenant, workspace,
// project or session_id, the version 2 one with no channel), and keeps
// growing.
func TestOlderVersionsVerify(t *testing.T) {
	ctx := t.Context()
	store := NewMemoryStore()
	v1 := envelope{session: "s-old", seq: 1, old: envelopeVersionV1, event: Event{Kind: KindToolCall, Time: time.Unix(7, 0).UTC(), Actor: "user:bob", RequestID: "req-0"}}
	b1 := v1.encode()
	v2 := envelope{session: "s-old", seq: 2, prev: chainHash(b1), old: envelopeVersionV2, event: Event{Kind: KindToolCall, Time: time.Unix(8, 0).UTC(), Actor: "user:bob", Tenant: "org-1"}}
	b2 := v2.encode()
	if b1[0] != envelopeVersionV1 || b2[0] != envelopeVersionV2 {
		t.Fatalf("the old records are versions %d and %d", b1[0], b2[0])
	}
	if err := store.Append(ctx, "s-old", 0, []Record{{Seq: 1, Envelope: b1, Hash: chainHash(b1)}, {Seq: 2, Envelope: b2, Hash: chainHash(b2)}}); err != nil {
		t.Fatal(err)
	}
	l, err := New(store, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(ctx, "s-old", Event{Kind: KindToolCall, Actor: "user:bob", Tenant: "org-1", SessionID: "sess-1", Channel: "ch-1"}); err != nil {
		t.Fatal(err)
	}
	head, err := Verify(ctx, store, "s-old")
	if err != nil || head.Seq != 3 {
		t.Fatalf("Verify = %+v, %v", head, err)
	}
	var got []string
	for e, err := range l.Read(ctx, "s-old", 1) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, e.Actor+"/"+e.RequestID+"/"+e.Tenant+"/"+e.SessionID+"/"+e.Channel)
	}
	if want := []string{"user:bob/req-0///", "user:bob//org-1//", "user:bob//org-1/sess-1/ch-1"}; !cmp.Equal(got, want) {
		t.Errorf("read %q, want %q", got, want)
	}
}
