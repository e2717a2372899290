package edge_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/address"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/custodytest"
	"github.com/checkfu/checkfu/custody/edge"
	"github.com/checkfu/checkfu/custody/internal/reveal"
	"github.com/checkfu/checkfu/custody/pgstore"
	"github.com/checkfu/checkfu/custody/sqlitestore"
	"github.com/checkfu/checkfu/internal/pgtest"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// canary is the known secret value. Every form of it (bytes, hex, base64,
// decimal) is searched for in everything the test captures.
const canary = "ghp_CANARY_9f2c7e41d0b35a86"

// capture collects everything a run could leak into.
type capture struct {
	log    bytes.Buffer // slog text and JSON handlers, debug level
	logger *slog.Logger
	errs   []string // every error string, in %v, %+v and %#v forms
	events []authz.Evidence
	// edgeEvents counts the events at the end of events that the edge's
	// own evidence sink recorded.
	edgeEvents int
	// responses holds every response the edge returned, as JSON and %+v.
	responses []string
	rows      bytes.Buffer // raw stored bytes: files, rows, records
}

func newCapture() *capture {
	c := &capture{}
	opts := &slog.HandlerOptions{Level: slog.LevelDebug}
	c.logger = slog.New(fanout{slog.NewTextHandler(&c.log, opts), slog.NewJSONHandler(&c.log, opts)})
	return c
}

func (c *capture) err(err error) {
	if err != nil {
		c.errs = append(c.errs, err.Error(), fmt.Sprintf("%v|%+v|%#v", err, err, err))
	}
}

// fanout sends each record to every handler.
type fanout []slog.Handler

func (f fanout) Enabled(ctx context.Context, l slog.Level) bool { return f[0].Enabled(ctx, l) }
func (f fanout) Handle(ctx context.Context, r slog.Record) error {
	for _, h := range f {
		if err := h.Handle(ctx, r.Clone()); err != nil {
			return err
		}
	}
	return nil
}
func (f fanout) WithAttrs(as []slog.Attr) slog.Handler {
	out := make(fanout, len(f))
	for i, h := range f {
		out[i] = h.WithAttrs(as)
	}
	return out
}
func (f fanout) WithGroup(g string) slog.Handler {
	out := make(fanout, len(f))
	for i, h := range f {
		out[i] = h.WithGroup(g)
	}
	return out
}

// TestCanary passes a known secret through sealing, every store, opening,
// refusals (a moved record, a wrong keyset, a destroyed secret, a removed
// key version), a debug log line and an evidence event, then searches all
// captured output, error strings, events and stored bytes (the SQLite
// file and WAL, PostgreSQL rows) for every form of the canary.
//
// The same canary then goes through the outbound edge (the edge test rig
// of edge_test.go: a loopback TLS provider reached as api.example.com): a
// credentialed request the provider answers (positive control: the
// provider saw the canary), a request the egress rules deny, a response
// that echoes the credential (withheld), and an external-effect call run
// under an approval, whose evidence events are captured.
func TestCanary(t *testing.T) {
	ctx := context.Background()
	c := newCapture()
	if leaks := custodytest.FindLeaks([]byte(canary), []byte(fmt.Sprintf("x%xy", canary))); len(leaks) == 0 {
		t.Fatal("the leak detector does not find a hex-encoded canary")
	}

	stores := map[string]custody.Store{"memory": custody.NewMemoryStore()}
	dbPath := filepath.Join(t.TempDir(), "custody.db")
	sq, err := sqlitestore.Open(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sq.Close() })
	stores["sqlite"] = sq
	pool, pgTable := canaryPostgres(t)
	if pool != nil {
		ps, err := pgstore.OpenPool(ctx, pool, pgTable)
		if err != nil {
			t.Fatal(err)
		}
		stores["postgres"] = ps
	}

	keys := custody.GenerateKeyset()
	for name, store := range stores {
		n := custody.NewNative(keys, store)
		b := custody.Binding{Namespace: "acme", Integration: "github", Handle: address.NewHandle()}
		secret := custody.NewSecret([]byte(canary))
		c.logger.Debug("sealing", "store", name, "binding", b, "secret", secret, "secret_value", *secret)
		if err := n.Put(ctx, b, secret); err != nil {
			t.Fatalf("%s: Put: %v", name, err)
		}

		opened, err := n.Open(ctx, b)
		if err != nil {
			t.Fatalf("%s: Open: %v", name, err)
		}
		// Positive control: the path really carries the canary.
		if err := reveal.With(opened, func(p []byte) error {
			if string(p) != canary {
				return errors.New("opened secret is not the canary")
			}
			return nil
		}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		c.logger.Debug("opened", "store", name, "secret", opened, slog.Any("wrapped", struct{ s *custody.Secret }{opened}))

		// A moved record: refused, logged, recorded as an event.
		rec, err := store.Get(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		moved := custody.Binding{Namespace: "evil", Integration: b.Integration, Handle: b.Handle}
		if err := store.Put(ctx, custody.Record{Binding: moved, Sealed: rec.Sealed}); err != nil {
			t.Fatal(err)
		}
		_, err = n.Open(ctx, moved)
		if !errors.Is(err, custody.CodeAddressMismatch) {
			t.Fatalf("%s: Open of the moved record: %v", name, err)
		}
		c.err(err)
		c.logger.Debug("refused", "store", name, "err", err, "secret", opened)
		code, _ := checkfu.CodeOf(err)
		c.events = append(c.events, authz.Evidence{
			Kind: authz.EvidenceApprovalResult, Time: time.Unix(0, 0), Actor: "agent", Effect: authz.ExternalEffect, Outcome: authz.OutcomeRefused, Code: code, Scope: moved.String(),
		})

		// A wrong keyset, a removed key version, a destroyed secret.
		_, err = custody.NewNative(custody.GenerateKeyset(), store).Open(ctx, b)
		c.err(err)
		rotated, _ := keys.Rotate()
		retired, _ := rotated.Without(1)
		_, err = custody.NewNative(retired, store).Open(ctx, b)
		c.err(err)
		opened.Destroy()
		_, err = keys.Seal(b, opened)
		c.err(err)
		c.err(fmt.Errorf("wrapping a secret: %v %s %q %x", opened, secret, secret, secret))
		if len(c.errs) == 0 {
			t.Fatal("no errors captured")
		}
		c.logger.Error("failure", "store", name, "errs", c.errs)
	}

	c.edge(t)

	sink := &custodytest.MemoryEvidence{}
	for _, ev := range c.events[:len(c.events)-c.edgeEvents] {
		if err := sink.Record(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	events, err := json.Marshal(append(sink.Events(), c.events[len(c.events)-c.edgeEvents:]...))
	if err != nil {
		t.Fatal(err)
	}
	c.logger.Debug("events", "events", sink.Events())

	// Stored bytes: the SQLite file and WAL, every PostgreSQL row.
	for _, p := range []string{dbPath, dbPath + "-wal"} {
		data, err := os.ReadFile(p)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		c.rows.Write(data)
	}
	if pool != nil {
		rows, err := pool.Query(ctx, `SELECT row_to_json(r)::text, sealed FROM `+pgx.Identifier{pgTable, "custody_records"}.Sanitize()+` r`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var js string
			var sealed []byte
			if err := rows.Scan(&js, &sealed); err != nil {
				t.Fatal(err)
			}
			c.rows.WriteString(js)
			c.rows.Write(sealed)
		}
		rows.Close()
	}
	if c.rows.Len() == 0 || c.log.Len() == 0 {
		t.Fatal("nothing captured")
	}

	for what, data := range map[string][]byte{
		"log output":   c.log.Bytes(),
		"errors":       []byte(fmt.Sprint(c.errs)),
		"events":       events,
		"responses":    []byte(fmt.Sprint(c.responses)),
		"stored bytes": c.rows.Bytes(),
	} {
		if leaks := custodytest.FindLeaks([]byte(canary), data); leaks != nil {
			t.Errorf("%s hold the canary as %v", what, leaks)
		}
	}
	t.Logf("searched %d bytes of logs, %d error strings, %d events, %d responses, %d stored bytes across %d stores",
		c.log.Len(), len(c.errs), len(c.events), len(c.responses), c.rows.Len(), len(stores))
}

// canaryPostgres returns a pool and a fresh schema name when
// CHECKFU_TEST_POSTGRES_DSN is set; nil when it is not (locally), and
// fails when CI is set without it.
func canaryPostgres(t *testing.T) (*pgxpool.Pool, string) {
	t.Helper()
	dsn, ok := pgtest.LookupDSN(t)
	if !ok {
		t.Log("CHECKFU_TEST_POSTGRES_DSN is empty: the PostgreSQL rows are not searched")
		return nil, ""
	}
	schema := pgtest.SchemaName("custody_canary_")
	pgtest.DropSchema(t, dsn, schema)
	return pgtest.NewPool(t, dsn), schema
}

// edge sends the canary through the outbound edge: an allowed
// credentialed call, a call the egress rules deny, a response echoing the
// credential, and an approved external-effect call.
func (c *capture) edge(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	rig := newEdgeRig(t)
	if err := rig.native.Put(ctx, govCred, custody.NewSecret([]byte(canary))); err != nil {
		t.Fatal(err)
	}
	respond := func(what string, resp *edge.Response, err error) {
		c.err(err)
		c.logger.Debug("edge call", "what", what, "response", resp, "err", err)
		if resp != nil {
			j, _ := json.Marshal(resp)
			c.responses = append(c.responses, string(j), fmt.Sprintf("%+v %#v", resp, resp))
		}
	}

	resp, err := rig.call(ctx, rig.list())
	if err != nil {
		t.Fatalf("credentialed call: %v", err)
	}
	rig.mu.Lock()
	auth := rig.lastAuth
	rig.mu.Unlock()
	if auth != "Bearer "+canary { // positive control: the canary really went out
		t.Fatalf("the provider saw Authorization %q, not the canary", auth)
	}
	respond("credentialed", resp, err)

	hits, opens := rig.hits.Load(), rig.custodian.opens.Load()
	resp, err = rig.call(ctx, rig.invocation("outside.rules", "outside", "GET", "/v2/other", `{}`))
	if err == nil || rig.hits.Load() != hits || rig.custodian.opens.Load() != opens {
		t.Fatalf("denied call: err %v, %d provider hits, %d opens", err, rig.hits.Load()-hits, rig.custodian.opens.Load()-opens)
	}
	respond("denied", resp, err)

	resp, err = rig.call(ctx, rig.invocation("echo", "echo", "GET", "/v1/echo", `{}`))
	if !errors.Is(err, edge.CodeCredentialEchoed) {
		t.Fatalf("echo call: %v, want %s", err, edge.CodeCredentialEchoed)
	}
	respond("echo", resp, err)

	inv := rig.create()
	rig.approve(inv)
	resp, err = rig.call(ctx, inv)
	if err != nil {
		t.Fatalf("approved call: %v", err)
	}
	respond("approved", resp, err)

	evs := rig.evidence.Events()
	if len(evs) == 0 {
		t.Fatal("the approved call recorded no evidence")
	}
	c.logger.Debug("edge evidence", "events", evs)
	c.events = append(c.events, evs...)
	c.edgeEvents = len(evs)
}
