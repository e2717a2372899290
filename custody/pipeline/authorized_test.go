package pipeline_test

import (
	"fmt"
	"go/types"
	"slices"
	"strings"
	"testing"

	"github.com/checkfu/checkfu/custody/custodytest"
)

// TestNoExportedPathReachesTheEdge is the compile-time argument, checked
// against the module's exported API: nothing reaches the outbound edge
// with a call that did not pass the pipeline.
//
//  1. The edge's exported methods are Send, Remote and
//     CloseIdleConnections, and the two that send take an edge.Authorized.
//  2. edge.Authorized is a struct with no exported field, declared in an
//     internal package of custody: outside custody only its zero value can
//     be written, and the edge refuses that (TestSendRefuses in package
//     custody/edge). The import rules (imports_test.go) let only
//     custody/pipeline and custody/edge import that package.
//  3. No exported function or method of any package returns one, or a
//     type that holds one: the pipeline hands the value to the edge and
//     to no caller.
func TestNoExportedPathReachesTheEdge(t *testing.T) {
	if testing.Short() {
		t.Skip("loads the whole module's export data")
	}
	m, err := custodytest.LoadModule("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range edgePaths(m) {
		t.Error(v)
	}
}

// TestEdgePathsFindsPlantedLeaks proves the checker can fail: a small
// module in testdata/leaky plants one fault for each of its checks, and
// every one must be reported.
func TestEdgePathsFindsPlantedLeaks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module's export data")
	}
	m, err := custodytest.LoadModule("testdata/leaky")
	if err != nil {
		t.Fatal(err)
	}
	got := edgePaths(m)
	for _, want := range []string{
		"edge.Authorized is declared in leaky/custody/outbound, not in an internal package of custody",
		"edge.Authorized has an exported field C",
		"edge.Edge.Call(ctx context.Context, url string) error does not take an edge.Authorized",
		"edge.Edge's exported methods are [Call CloseIdleConnections Remote Send]",
		"leaky/mint.Mint returns an edge.Authorized",
		"leaky/mint.Box.Open returns an edge.Authorized",
	} {
		if !slices.ContainsFunc(got, func(v string) bool { return strings.HasPrefix(v, want) }) {
			t.Errorf("the planted fault %q was not reported; got %q", want, got)
		}
	}
}

// edgePaths returns one line per way the exported API of module m lets a
// caller reach the outbound edge (m.Path/custody/edge) with a call that did
// not pass the pipeline; see TestNoExportedPathReachesTheEdge.
func edgePaths(m *custodytest.Module) []string {
	var out []string
	var edgePkg *types.Package
	for _, p := range m.Packages {
		if p.Path() == m.Path+"/custody/edge" {
			edgePkg = p
		}
	}
	if edgePkg == nil {
		return []string{"custody/edge not loaded"}
	}
	alias := edgePkg.Scope().Lookup("Authorized")
	if alias == nil {
		return []string{"edge.Authorized is gone"}
	}
	named, ok := types.Unalias(alias.Type()).(*types.Named)
	if !ok {
		return []string{fmt.Sprintf("edge.Authorized is %s, not a named type", alias.Type())}
	}
	// 2. Where it is declared, and what it holds.
	declared := named.Obj().Pkg().Path()
	if !strings.HasPrefix(declared, m.Path+"/custody/") || !strings.Contains(declared, "/internal/") {
		out = append(out, fmt.Sprintf("edge.Authorized is declared in %s, not in an internal package of custody", declared))
	}
	st, ok := named.Underlying().(*types.Struct)
	if !ok {
		return append(out, fmt.Sprintf("edge.Authorized is %s, not a struct", named.Underlying()))
	}
	for i := range st.NumFields() {
		if st.Field(i).Exported() {
			out = append(out, "edge.Authorized has an exported field "+st.Field(i).Name())
		}
	}
	// 1. The edge's exported methods, and what the sending ones take.
	edgeType := edgePkg.Scope().Lookup("Edge").Type()
	ms := types.NewMethodSet(types.NewPointer(edgeType))
	var names []string
	for i := range ms.Len() {
		f := ms.At(i).Obj().(*types.Func)
		if !f.Exported() {
			continue
		}
		names = append(names, f.Name())
		sig := f.Type().(*types.Signature)
		if f.Name() == "CloseIdleConnections" {
			continue
		}
		if sig.Params().Len() < 2 || !types.Identical(sig.Params().At(1).Type(), named) {
			out = append(out, fmt.Sprintf("edge.Edge.%s%s does not take an edge.Authorized", f.Name(), strings.TrimPrefix(sig.String(), "func")))
		}
	}
	slices.Sort(names)
	// Stream (a model call) takes the Authorized value second, then the
	// reader of the answer, which gets the answer and a screen, never
	// the credential.
	if want := []string{"CloseIdleConnections", "Remote", "Send", "Stream"}; !slices.Equal(names, want) {
		out = append(out, fmt.Sprintf("edge.Edge's exported methods are %v, want %v: a new one is a new path to the credential and needs this test's review", names, want))
	}
	// 3. Nobody hands one out.
	for i, p := range m.Packages {
		if strings.Contains(m.ImportPaths[i], "/internal/") {
			continue
		}
		for _, name := range p.Scope().Names() {
			obj := p.Scope().Lookup(name)
			if !obj.Exported() {
				continue
			}
			if f, ok := obj.(*types.Func); ok && returns(f.Type().(*types.Signature), named) {
				out = append(out, fmt.Sprintf("%s.%s returns an edge.Authorized", p.Path(), name))
			}
			tn, ok := obj.(*types.TypeName)
			if !ok {
				continue
			}
			for _, t0 := range []types.Type{tn.Type(), types.NewPointer(tn.Type())} {
				ms := types.NewMethodSet(t0)
				for j := range ms.Len() {
					f := ms.At(j).Obj()
					if f.Exported() && returns(f.Type().(*types.Signature), named) {
						out = append(out, fmt.Sprintf("%s.%s.%s returns an edge.Authorized", p.Path(), name, f.Name()))
					}
				}
			}
		}
	}
	return out
}

// returns reports whether a result of sig is, or holds in a field, an
// element or a pointer, the type a.
func returns(sig *types.Signature, a *types.Named) bool {
	for i := range sig.Results().Len() {
		if holds(sig.Results().At(i).Type(), a, map[types.Type]bool{}) {
			return true
		}
	}
	return false
}

func holds(t types.Type, a *types.Named, seen map[types.Type]bool) bool {
	t = types.Unalias(t)
	if types.Identical(t, a) {
		return true
	}
	if seen[t] {
		return false
	}
	seen[t] = true
	switch u := t.(type) {
	case *types.Pointer:
		return holds(u.Elem(), a, seen)
	case *types.Slice:
		return holds(u.Elem(), a, seen)
	case *types.Array:
		return holds(u.Elem(), a, seen)
	case *types.Map:
		return holds(u.Key(), a, seen) || holds(u.Elem(), a, seen)
	case *types.Chan:
		return holds(u.Elem(), a, seen)
	case *types.Named:
		return holds(u.Underlying(), a, seen)
	case *types.Struct:
		for i := range u.NumFields() {
			if u.Field(i).Exported() && holds(u.Field(i).Type(), a, seen) {
				return true
			}
		}
	}
	return false
}
