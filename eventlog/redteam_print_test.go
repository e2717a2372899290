package eventlog_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"log/slog"
	"testing"

	"github.com/checkfu/checkfu/eventlog"
	"github.com/checkfu/checkfu/eventlog/eventlogtest"
)

// TestEventXMLOmitsContent: encoding/xml, the standard library's other
// encoder, writes no content either, and still writes the envelope.
func TestEventXMLOmitsContent(t *testing.T) {
	ev := contentEvent()
	entry := eventlog.Entry{Session: "s", Seq: 3, Event: ev}
	for name, v := range map[string]any{"Event": ev, "*Event": &ev, "Entry": entry, "holder": eventHolder{Event: ev, Ptr: &ev, List: []eventlog.Event{ev}, Entry: entry}} {
		out, err := xml.Marshal(v)
		if err != nil {
			t.Fatalf("xml.Marshal(%s): %v", name, err)
		}
		assertNoContent(t, "xml.Marshal("+name+")", out)
		assertNoContent(t, "xml.Marshal("+name+") in base64", bytes.ReplaceAll(out, []byte(base64.StdEncoding.EncodeToString([]byte(printCanary))), []byte(printCanary)))
		if !bytes.Contains(out, []byte("agent:test")) {
			t.Errorf("xml.Marshal(%s) = %s, want the envelope", name, out)
		}
	}
	out, _ := xml.Marshal(entry)
	if !bytes.Contains(out, []byte("<Seq>3</Seq>")) {
		t.Errorf("xml.Marshal(Entry) = %s, want its seq", out)
	}
}

// TestRecordPrintsNoSealedBytes: a store that logs a Record (fmt, slog)
// prints neither the wrapped data key nor the ciphertext, which would
// outlive a shred in the log file.
func TestRecordPrintsNoSealedBytes(t *testing.T) {
	ctx := context.Background()
	m := eventlog.NewMemoryStore()
	l, err := eventlog.New(m, eventlog.Options{Keys: eventlogtest.FixedKeys(t)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(ctx, "s", contentEvent()); err != nil {
		t.Fatal(err)
	}
	recs, err := m.Read(ctx, "s", 1, 1)
	if err != nil || len(recs) != 1 || recs[0].DataKey == nil {
		t.Fatalf("Read = %v, %v", recs, err)
	}
	r := recs[0]
	forms := func(b []byte) []string {
		return []string{hex.EncodeToString(b[:12]), fmt.Sprint(b[:12])[1:30], base64.StdEncoding.EncodeToString(b[:12]), string(b[8:20])}
	}
	var buf bytes.Buffer
	slog.New(slog.NewTextHandler(&buf, nil)).Info("append", "record", r, "ptr", &r)
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("append", "record", r)
	outs := map[string]string{"slog": buf.String()}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%x", "%q"} {
		outs[verb] = fmt.Sprintf(verb, r) + fmt.Sprintf(verb, &r) + fmt.Sprintf(verb, []eventlog.Record{r})
	}
	for where, out := range outs {
		for _, b := range [][]byte{r.DataKey, r.Sealed} {
			for _, f := range forms(b) {
				if bytes.Contains([]byte(out), []byte(f)) {
					t.Errorf("%s prints a record's sealed bytes (%q): %q", where, f, out)
				}
			}
		}
	}
	if got := fmt.Sprintf("%+v", r); !bytes.Contains([]byte(got), []byte("Seq:1")) {
		t.Errorf("Sprintf(%%+v, record) = %q, want its seq", got)
	}
}
