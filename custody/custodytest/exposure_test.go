package custodytest_test

import (
	"errors"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/checkfu/checkfu/custody/custodytest"
)

var (
	moduleOnce sync.Once
	module     *custodytest.Module
	moduleErr  error
)

func loadModule(t *testing.T) *custodytest.Module {
	t.Helper()
	moduleOnce.Do(func() { module, moduleErr = custodytest.LoadModule("../..") })
	if moduleErr != nil {
		t.Fatal(moduleErr)
	}
	return module
}

const planted = `package planted

import (
	"sync/atomic"

	"github.com/checkfu/checkfu/custody"
)

type Direct struct{ S custody.Secret }
type Hidden struct{ inner struct{ m map[string][]*custody.Secret } }
type MapKey struct{ m map[*custody.Secret]int }
type Chan struct{ c chan custody.Secret }
type Array struct{ a [2]*custody.Secret }
type Iface interface{ Token() *custody.Secret }
type Embeds interface{ Iface }
type FuncField struct{ f func() (int, *custody.Secret) }
type Generic struct{ p atomic.Pointer[custody.Secret] }
type Alias = custody.Secret
type ViaAlias struct{ a Alias }
type Defined custody.Secret
type Recursive struct {
	next *Recursive
	s    *custody.Secret
}
type Box[T any] struct{ v T }
type UsesBox struct{ b Box[*custody.Secret] }
type Opaque[T any] struct{ m map[string]any } // holds T at run time, declared by its type argument
type UsesOpaque struct{ o Opaque[custody.Secret] }
type ValueMethod struct{}

func (ValueMethod) Token() custody.Secret { return custody.Secret{} }

type PtrMethod struct{}

func (*PtrMethod) Tokens() []*custody.Secret { return nil }

func GetToken() (*custody.Secret, error) { return nil, nil }

var Global *custody.Secret

type opener struct{}

func (*opener) Token() *custody.Secret { return nil }

func NewOpener() *opener { return nil }

func Each(fn func(*custody.Secret) error) {}

type Visitor func(*custody.Secret)

func Walk(v Visitor) {}

type Sink interface{ Put(*custody.Secret) }

func Feed(s Sink) {}

func Seq() func(yield func(*custody.Secret) bool) { return nil }

type Iter struct{}

func (Iter) All(yield func(int, *custody.Secret) bool) {}

func Takes(s *custody.Secret, f func() *custody.Secret, k custody.Custodian) {}

type Clean struct {
	h custody.Handle
	b custody.Binding
	r custody.Record
	n *custody.Native
	k *custody.Keyset
	s custody.Store
	e error
	a any
	self *Clean
}

type CleanBox = Box[int]

func Fine() custody.Binding { return custody.Binding{} }

type unexported struct{ s custody.Secret }
`

// Every exported declaration of the planted package except Clean,
// CleanBox, Fine, Takes (its arguments come from the caller), Visitor
// and Sink (types a caller supplies; the functions taking them are
// reported) and the generic Box and Opaque must be reported.
var plantedViolators = []string{
	"Alias", "Array", "Chan", "Defined", "Direct", "Embeds", "FuncField", "Generic", "GetToken", "Global",
	"Hidden", "Iface", "MapKey", "PtrMethod", "Recursive", "UsesBox", "UsesOpaque", "ValueMethod", "ViaAlias",
	"NewOpener", "Each", "Walk", "Feed", "Seq", "Iter",
}

func checkPlanted(t *testing.T, rules custodytest.ExposureRules) []custodytest.Violation {
	t.Helper()
	m := loadModule(t)
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "planted.go", planted, 0)
	if err != nil {
		t.Fatal(err)
	}
	conf := types.Config{Importer: m.Importer}
	pkg, err := conf.Check("example.com/planted", fset, []*ast.File{f}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return custodytest.CheckExposure([]*types.Package{pkg}, rules)
}

// TestCheckExposureCatchesPlantedViolations proves the walker reds: each
// planted declaration reaches a custody.Secret by another route.
func TestCheckExposureCatchesPlantedViolations(t *testing.T) {
	vs := checkPlanted(t, custodytest.ExposureRules{})
	reported := map[string]bool{}
	for _, v := range vs {
		reported[strings.TrimPrefix(v.Object, "example.com/planted.")] = true
	}
	for _, name := range plantedViolators {
		if !reported[name] {
			t.Errorf("planted violation %s not reported", name)
		}
	}
	for name := range reported {
		if !slices.Contains(plantedViolators, name) {
			t.Errorf("clean declaration %s reported: %v", name, vs)
		}
	}
	var hidden string
	for _, v := range vs {
		if v.Object == "example.com/planted.Hidden" {
			hidden = v.Path
		}
	}
	if want := "Hidden.inner.m -> map value -> [] -> * -> github.com/checkfu/checkfu/custody.Secret"; hidden != want {
		t.Errorf("Hidden path = %q, want %q", hidden, want)
	}
}

func TestCheckExposureAllowAndBoundary(t *testing.T) {
	vs := checkPlanted(t, custodytest.ExposureRules{
		Boundary: []string{"example.com/planted"},
		Allow:    map[string]string{"example.com/planted.Direct": "test", "example.com/planted.Clean": "stale"},
	})
	got := map[string]string{}
	for _, v := range vs {
		got[strings.TrimPrefix(v.Object, "example.com/planted.")] = v.Path
	}
	for _, name := range []string{"Direct", "GetToken", "ValueMethod", "PtrMethod", "Iface", "Embeds", "FuncField", "NewOpener", "Each", "Walk", "Feed", "Seq", "Iter"} {
		if _, ok := got[name]; ok {
			t.Errorf("%s reported despite allowance or boundary: %s", name, got[name])
		}
	}
	if !strings.Contains(got["Clean"], "remove the allowance") {
		t.Errorf("stale allowance not reported: %v", vs)
	}
	for _, name := range []string{"Hidden", "MapKey", "Chan", "Array", "Generic", "Recursive", "UsesBox", "Global", "Alias", "ViaAlias"} {
		if _, ok := got[name]; !ok {
			t.Errorf("%s: a boundary package's data is no longer checked", name)
		}
	}
}

// TestLoadModuleSeesEveryPackage compares the loaded packages with the
// directories of Go files on disk, so no package can escape the check.
func TestLoadModuleSeesEveryPackage(t *testing.T) {
	m := loadModule(t)
	loaded := map[string]bool{}
	for _, p := range m.ImportPaths {
		loaded[p] = true
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if p != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata") {
			return filepath.SkipDir
		}
		if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil && p != root {
			return filepath.SkipDir // another module
		}
		bp, err := build.ImportDir(p, 0)
		if err != nil {
			var noGo *build.NoGoError
			if errors.As(err, &noGo) {
				return nil
			}
			return err
		}
		if len(bp.GoFiles) == 0 {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		path := m.Path
		if rel != "." {
			path += "/" + filepath.ToSlash(rel)
		}
		if !loaded[path] {
			t.Errorf("package %s is on disk but was not loaded", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !loaded[m.Path+"/custody"] || !loaded[m.Path] {
		t.Fatalf("loaded %v, missing the root or custody", loaded)
	}
}
