package runner_test

import (
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/runner"
)

// TestWorkspaceRead pins the decision on each of its checks: the kind,
// the presence of a location, absoluteness, NUL, "..", the root's own
// form and what is outside it.
func TestWorkspaceRead(t *testing.T) {
	const root = "/work/ws"
	tests := []struct {
		name  string
		root  string
		kind  string
		paths []string
		want  bool
	}{
		{"read a file", root, "read", []string{root + "/main.go"}, true},
		{"read the root", root, "read", []string{root}, true},
		{"search two places", root, "search", []string{root, root + "/src/a"}, true},
		{"think with nothing", root, "think", nil, true},
		{"think inside", root, "think", []string{root + "/plan.md"}, true},
		{"dot and double slashes", root, "read", []string{root + "/./src//a.go/"}, true},
		{"read nothing named", root, "read", nil, false},
		{"search nothing named", root, "search", []string{}, false},
		{"think outside", root, "think", []string{"/etc"}, false},
		{"outside", root, "read", []string{"/etc/passwd"}, false},
		{"a sibling sharing the prefix", root, "read", []string{root + "2/a"}, false},
		{"the root's parent", root, "read", []string{"/work"}, false},
		{"the file system root", root, "search", []string{"/"}, false},
		{"dot-dot escaping", root, "read", []string{root + "/../other/a"}, false},
		{"dot-dot ending inside", root, "read", []string{root + "/link/../a.go"}, false},
		{"dot-dot at the end", root, "read", []string{root + "/src/.."}, false},
		{"relative", root, "read", []string{"main.go"}, false},
		{"relative under the root's name", root, "read", []string{"work/ws/main.go"}, false},
		{"empty path", root, "read", []string{""}, false},
		{"NUL", root, "read", []string{root + "/a\x00"}, false},
		{"one outside among many", root, "read", []string{root + "/a", root + "/b", "/etc/shadow", root + "/c"}, false},
		{"edit", root, "edit", []string{root + "/a"}, false},
		{"delete", root, "delete", []string{root + "/a"}, false},
		{"move", root, "move", []string{root + "/a", root + "/b"}, false},
		{"execute", root, "execute", []string{root}, false},
		{"fetch", root, "fetch", []string{root}, false},
		{"switch_mode", root, "switch_mode", nil, false},
		{"other", root, "other", []string{root + "/a"}, false},
		{"no kind", root, "", []string{root + "/a"}, false},
		{"a kind in another case", root, "Read", []string{root + "/a"}, false},
		{"no root", "", "read", []string{"/a"}, false},
		{"the root is /", "/", "read", []string{"/a"}, false},
		{"the root is / and so is the location", "/", "search", []string{"/"}, false},
		{"the root is / and nothing is named", "/", "think", nil, false},
		{"a relative root", "ws", "read", []string{"ws/a"}, false},
		{"an unclean root", root + "/", "read", []string{root + "/a"}, false},
		{"a root with dot-dot", root + "/..", "read", []string{"/work/a"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, why := runner.WorkspaceRead(tt.root, tt.kind, tt.paths)
			if got != tt.want {
				t.Fatalf("WorkspaceRead(%q, %q, %q) = %v (%s), want %v", tt.root, tt.kind, tt.paths, got, why, tt.want)
			}
			if got != (why == "") {
				t.Fatalf("WorkspaceRead(%q, %q, %q) = %v with why %q", tt.root, tt.kind, tt.paths, got, why)
			}
		})
	}
}

// TestWorkspaceReadQuotesBounded: the refusal's text quotes the agent's
// kind and path through checkfu.Quote, so a hostile one is bounded and
// escaped.
func TestWorkspaceReadQuotesBounded(t *testing.T) {
	long := "/etc/" + strings.Repeat("\n\x1b[2J", 1<<16)
	for _, tc := range []struct{ kind, path string }{{"read", long}, {long, "/ws/a"}} {
		ok, why := runner.WorkspaceRead("/ws", tc.kind, []string{tc.path})
		if ok {
			t.Fatalf("a hostile request was allowed")
		}
		if len(why) > 4*checkfu.MaxQuoted+128 || strings.ContainsAny(why, "\n\x1b") {
			t.Fatalf("why is %d bytes, not bounded and escaped: %q", len(why), why)
		}
	}
}

// TestWorkspaceReadLocationsEdge: MaxPermissionLocations locations, all
// inside, are allowed; one more is not, for every allowed kind.
func TestWorkspaceReadLocationsEdge(t *testing.T) {
	paths := make([]string, runner.MaxPermissionLocations+1)
	for i := range paths {
		paths[i] = "/ws/f"
	}
	for _, kind := range []string{"read", "search", "think"} {
		if ok, why := runner.WorkspaceRead("/ws", kind, paths[:runner.MaxPermissionLocations]); !ok {
			t.Errorf("%s of %d locations refused: %s", kind, runner.MaxPermissionLocations, why)
		}
		if ok, _ := runner.WorkspaceRead("/ws", kind, paths); ok {
			t.Errorf("%s of %d locations allowed", kind, len(paths))
		}
	}
}

// insideRef is the slow reference of a path at or below root: absolute,
// no NUL, no ".." element, and root's elements a prefix of its elements
// once empty and "." elements are dropped.
func insideRef(root, p string) bool {
	if !strings.HasPrefix(p, "/") || strings.Contains(p, "\x00") {
		return false
	}
	elems := func(s string) []string {
		var out []string
		for _, e := range strings.Split(s, "/") {
			if e != "" && e != "." {
				out = append(out, e)
			}
		}
		return out
	}
	for _, e := range strings.Split(p, "/") {
		if e == ".." {
			return false
		}
	}
	r, q := elems(root), elems(p)
	if len(q) < len(r) {
		return false
	}
	for i := range r {
		if r[i] != q[i] {
			return false
		}
	}
	return true
}

// pathGen draws paths from few elements, so that they often meet the
// root, its siblings, "." and "..".
func pathGen() *rapid.Generator[string] {
	elem := rapid.SampledFrom([]string{"ws", "w", "ws2", "src", "a.go", "..", ".", "", "etc", "link"})
	return rapid.Custom(func(t *rapid.T) string {
		p := strings.Join(rapid.SliceOfN(elem, 0, 5).Draw(t, "elems"), "/")
		if rapid.IntRange(0, 9).Draw(t, "relative") > 0 {
			p = "/" + p
		}
		return p
	})
}

var (
	rootGen = rapid.SampledFrom([]string{"/ws", "/ws/src", "/w", "/tmp/ws", "/", "", "ws", "/ws/"})
	kindGen = rapid.SampledFrom([]string{"read", "search", "think", "edit", "delete", "move", "execute", "fetch", "switch_mode", "other", "", "READ"})
)

// TestWorkspaceReadProperties: the decision agrees with the reference;
// nothing outside the root is ever allowed; a location outside, or a
// kind that changes something, turns an allow into a refusal.
func TestWorkspaceReadProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		root := rootGen.Draw(t, "root")
		kind := kindGen.Draw(t, "kind")
		paths := rapid.SliceOfN(pathGen(), 0, 6).Draw(t, "paths")
		ok, why := runner.WorkspaceRead(root, kind, paths)
		want := root != "/" && strings.HasPrefix(root, "/") && !strings.HasSuffix(root, "/") &&
			(kind == "think" || (kind == "read" || kind == "search") && len(paths) > 0)
		for _, p := range paths {
			want = want && insideRef(root, p)
		}
		if ok != want {
			t.Fatalf("WorkspaceRead(%q, %q, %q) = %v (%s), want %v", root, kind, paths, ok, why, want)
		}
		if !ok {
			return
		}
		outside := rapid.SampledFrom([]string{"/etc/passwd", root + "2", root + "/../x", root + "/a/../b", "/", "rel"}).Draw(t, "outside")
		at := rapid.IntRange(0, len(paths)).Draw(t, "at")
		more := append(append(append([]string{}, paths[:at]...), outside), paths[at:]...)
		if ok, _ := runner.WorkspaceRead(root, kind, more); ok {
			t.Fatalf("adding %q at %d still allows %q", outside, at, more)
		}
		mutating := rapid.SampledFrom([]string{"edit", "delete", "move", "execute", "fetch", "other"}).Draw(t, "mutating")
		if ok, _ := runner.WorkspaceRead(root, mutating, paths); ok {
			t.Fatalf("kind %q allowed for %q", mutating, paths)
		}
	})
}

// FuzzWorkspaceRead: for any root, kind and paths (one a line), an allow
// agrees with the reference, and a refusal's text is bounded.
func FuzzWorkspaceRead(f *testing.F) {
	f.Add("/ws", "read", "/ws/a.go")
	f.Add("/ws", "search", "/ws\n/ws/src")
	f.Add("/ws", "think", "")
	f.Add("/ws", "read", "/ws/../etc/passwd")
	f.Add("/ws", "read", "/ws/link/../a")
	f.Add("/ws", "read", "/ws2/a")
	f.Add("/ws", "edit", "/ws/a")
	f.Add("/", "read", "/etc")
	f.Add("/ws", "read", "/ws/a\x00/../../etc")
	f.Fuzz(func(t *testing.T, root, kind, lines string) {
		var paths []string
		if lines != "" {
			paths = strings.Split(lines, "\n")
		}
		ok, why := runner.WorkspaceRead(root, kind, paths)
		if !ok {
			if len(why) > 4*checkfu.MaxQuoted+128 {
				t.Fatalf("why is %d bytes", len(why))
			}
			return
		}
		if kind != "read" && kind != "search" && kind != "think" || len(paths) > runner.MaxPermissionLocations {
			t.Fatalf("kind %q with %d paths allowed", kind, len(paths))
		}
		for _, p := range paths {
			if !insideRef(root, p) {
				t.Fatalf("%q allowed under root %q", p, root)
			}
		}
	})
}

// FuzzPermissionToolCall: any tool call the agent sends decodes (or is
// refused) without a panic, and what the decision allows under "/ws"
// agrees with the reference.
func FuzzPermissionToolCall(f *testing.F) {
	f.Add([]byte(`{"toolCallId":"c","title":"Read","kind":"read","locations":[{"path":"/ws/a.go","line":3}]}`))
	f.Add([]byte(`{"toolCallId":"c","title":"Grep","kind":"search","locations":[{"path":"/ws"},{"path":"/ws/src"}]}`))
	f.Add([]byte(`{"toolCallId":"c","title":"Read","kind":"read","locations":[{"path":"/ws/../etc/passwd"}]}`))
	f.Add([]byte(`{"toolCallId":"c","kind":"read","Kind":"edit","locations":[{"path":"/ws/a"}]}`))
	f.Add([]byte(`{"toolCallId":"c","kind":"read","kind":"edit","locations":[{"path":"/ws/a"}]}`))
	f.Add([]byte(`{"toolCallId":"c","kind":"read","locations":[{"path":"/ws/a","path":"/etc"}]}`))
	f.Add([]byte(`{"toolCallId":"c","kind":"think","locations":null}`))
	f.Add([]byte(`{"toolCallId":"c","kind":"read","locations":[{"path":"/ws/\u0000"}]}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		kind, paths, err := runner.DecodePermission(raw)
		if err != nil {
			return
		}
		if ok, _ := runner.WorkspaceRead("/ws", kind, paths); ok {
			for _, p := range paths {
				if !insideRef("/ws", p) {
					t.Fatalf("%q allowed from %q", p, raw)
				}
			}
		}
	})
}
