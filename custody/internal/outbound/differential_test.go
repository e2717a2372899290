package outbound

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/checkfu/checkfu/custody/address"
	"github.com/checkfu/checkfu/custody/authz"
)

// TestBuiltRequestIsTheCheckedAction (red team, docs/changes/wt-rtpipe.md):
// for any arguments an agent sends that authz accepts, the request Build
// makes is the action authz checked and an approval binds: the
// registration's method, host and path unchanged (no argument reaches
// them, whatever '/', '?', '#', '%', '.', CR or LF it holds), a body
// byte for byte the canonical arguments, and a query that a server's
// parser (url.ParseQuery) reads back as exactly the canonical members,
// each once, with the value the schema saw.
func TestBuiltRequestIsTheCheckedAction(t *testing.T) {
	const resource = "https://api.example.com/v1/items"
	cred := address.Binding{Namespace: "acme", Integration: "x", Handle: address.MustParseHandle("ch_aaaaaaaaaaaaaaaaaaaaaaaaaa")}
	regs := map[string]*authz.Registry{}
	for _, op := range []string{"GET", "DELETE", "POST", "PUT"} {
		r, err := authz.NewRegistry(authz.Registration{Capability: "c", Operation: op, Resource: resource, Credential: cred, Effect: authz.ReadOnly,
			Tool: authz.ToolDescriptor{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)}})
		if err != nil {
			t.Fatal(err)
		}
		regs[op] = r
	}
	alphabet := []rune("aZ09 &=+%#?/.\\;:,\r\n\t\x00\"'<>\u2028\u00e9\u0130\u212a\U0001F600~-_[]{}")
	text := rapid.StringOfN(rapid.SampledFrom(alphabet), 0, 12, -1)
	scalar := rapid.OneOf(
		rapid.Map(text, func(s string) string { b, _ := json.Marshal(s); return string(b) }),
		rapid.SampledFrom([]string{"0", "-0", "1e5", "1E+5", "-1.50", "123456789012345678901234567890", "true", "false"}),
	)
	rapid.Check(t, func(t *rapid.T) {
		op := rapid.SampledFrom([]string{"GET", "DELETE", "POST", "PUT"}).Draw(t, "op")
		keys := rapid.SliceOfNDistinct(text, 0, 6, func(s string) string { return strings.ToLower(s) }).Draw(t, "keys")
		var b strings.Builder
		b.WriteString("{")
		for i, k := range keys {
			if i > 0 {
				b.WriteString(",")
			}
			kj, _ := json.Marshal(k)
			b.WriteString(string(kj) + ":" + scalar.Draw(t, "v"))
		}
		b.WriteString("}")
		args := b.String()
		action, err := regs[op].Resolve(authz.ToolCall{Capability: "c", Tool: "t", Operation: op, Resource: resource, Arguments: json.RawMessage(args)}, cred)
		if err != nil {
			return // refused before any request exists (a case-folded pair, say)
		}
		req, err := Build(context.Background(), action)
		if err != nil {
			t.Fatalf("%s %s: Build refused what authz accepted: %v", op, args, err)
		}
		if req.Method != op || req.URL.Scheme != "https" || req.URL.Host != "api.example.com" || req.URL.EscapedPath() != "/v1/items" || req.URL.Fragment != "" || req.URL.User != nil {
			t.Fatalf("%s %s: the request goes to %s %s", op, args, req.Method, req.URL)
		}
		var canonical map[string]any
		dec := json.NewDecoder(strings.NewReader(string(action.Body)))
		dec.UseNumber()
		if err := dec.Decode(&canonical); err != nil {
			t.Fatal(err)
		}
		if !Bodiless(op) {
			body, _ := io.ReadAll(req.Body)
			if string(body) != string(action.Body) || req.URL.RawQuery != "" {
				t.Fatalf("%s: body %q query %q, want the canonical %q and no query", op, body, req.URL.RawQuery, action.Body)
			}
			return
		}
		if req.Body != nil && req.Body != http.NoBody {
			t.Fatalf("%s carries a body", op)
		}
		got, err := url.ParseQuery(req.URL.RawQuery)
		if err != nil {
			t.Fatalf("%s %s: the query %q does not parse: %v", op, args, req.URL.RawQuery, err)
		}
		if len(got) != len(canonical) {
			t.Fatalf("%s %s: the query %q has %d members, the checked action %d", op, args, req.URL.RawQuery, len(got), len(canonical))
		}
		for k, v := range canonical {
			want := ""
			switch v := v.(type) {
			case string:
				want = v
			case json.Number:
				want = v.String()
			case bool:
				want = map[bool]string{true: "true", false: "false"}[v]
			}
			if vs := got[k]; len(vs) != 1 || vs[0] != want {
				t.Fatalf("%s %s: member %q reads back as %q, want %q", op, args, k, vs, want)
			}
		}
	})
}
