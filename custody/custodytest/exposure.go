package custodytest

import (
	"fmt"
	"go/types"
	"slices"
	"strings"
)

// The types the exposure check forbids by default: the Secret, and the
// unexported box that holds a Secret's (and so a custody record's)
// plaintext, which a type declared as custody.Secret's underlying struct
// would reach.
const (
	SecretType    = "github.com/checkfu/checkfu/custody.Secret"
	PlaintextType = "github.com/checkfu/checkfu/custody.secretBox"
)

// A Violation is one way an exported declaration reaches a forbidden type.
type Violation struct {
	// Object is the exported declaration, "pkgpath.Name" (for methods
	// "pkgpath.Type.Method").
	Object string
	// Path shows how the forbidden type is reached, such as
	// "Response.inner -> []*custody.Secret".
	Path string
}

// String returns "OBJECT: PATH".
func (v Violation) String() string { return v.Object + ": " + v.Path }

// ExposureRules say what [CheckExposure] forbids and where.
type ExposureRules struct {
	// Forbidden lists the types that must be unreachable, as
	// "pkgpath.Name". Empty means [SecretType] and [PlaintextType].
	Forbidden []string
	// Boundary lists package path prefixes whose exported functions,
	// methods, interface methods and func-typed values may return
	// forbidden types (custody hands Secrets to its own edge through
	// them). Fields of their types are still checked for data: a
	// struct, pointer, slice, array, map or channel that holds a forbidden
	// type is reported even there.
	Boundary []string
	// Allow maps "pkgpath.Name" of exported declarations that may reach a
	// forbidden type to the reason why. An entry that is never needed is
	// itself reported, so allowances do not outlive their reason.
	Allow map[string]string
}

// CheckExposure reports every exported declaration of pkgs through which a
// forbidden type is statically reachable:
//
//   - for every exported type: through the fields of its structs,
//     exported or not (fmt and reflection read unexported fields), and
//     through pointers, slices, arrays, maps (keys and values), channels,
//     type arguments of generic instances, the results of func-typed
//     fields, and the method results of interface types;
//   - for every exported type and package outside Boundary: through the
//     results of its exported methods and functions, the arguments they
//     pass to callbacks (func or interface parameters) the caller
//     supplies, and the exported methods of unexported types reached on
//     the way (inside Boundary, calls are not followed at all);
//   - for every exported variable: through its type.
//
// A forbidden type itself is a root, not a violation. What it cannot see:
// a value stored at run time in a field declared as a bare interface (any,
// error) or behind unsafe.Pointer; those are kept honest by the redacting
// methods of custody.Secret and by review.
func CheckExposure(pkgs []*types.Package, rules ExposureRules) []Violation {
	forbidden := rules.Forbidden
	if len(forbidden) == 0 {
		forbidden = []string{SecretType, PlaintextType}
	}
	c := &checker{forbidden: map[string]bool{}}
	for _, f := range forbidden {
		c.forbidden[f] = true
	}
	used := map[string]bool{}
	var out []Violation
	for _, pkg := range pkgs {
		boundary := slices.ContainsFunc(rules.Boundary, func(p string) bool {
			return pkg.Path() == p || strings.HasPrefix(pkg.Path(), p+"/")
		})
		scope := pkg.Scope()
		for _, name := range scope.Names() {
			obj := scope.Lookup(name)
			if !obj.Exported() {
				continue
			}
			id := pkg.Path() + "." + name
			var paths []string
			switch obj := obj.(type) {
			case *types.TypeName:
				if c.forbidden[qualified(obj)] {
					continue
				}
				paths = c.reach(obj.Type(), name, true, !boundary)
				if !boundary {
					paths = append(paths, c.methods(obj.Type(), name)...)
				}
			case *types.Func:
				if !boundary {
					paths = c.results(obj.Type().(*types.Signature), name+"()")
				}
			case *types.Var:
				paths = c.reach(obj.Type(), name, false, !boundary)
			}
			if len(paths) == 0 {
				continue
			}
			if _, ok := rules.Allow[id]; ok {
				used[id] = true
				continue
			}
			for _, p := range paths {
				out = append(out, Violation{Object: id, Path: p})
			}
		}
	}
	for id := range rules.Allow {
		if !used[id] {
			out = append(out, Violation{Object: id, Path: "allowed, but reaches no forbidden type: remove the allowance"})
		}
	}
	slices.SortFunc(out, func(a, b Violation) int { return strings.Compare(a.String(), b.String()) })
	return out
}

type checker struct {
	forbidden map[string]bool
}

func qualified(obj *types.TypeName) string {
	if obj.Pkg() == nil {
		return obj.Name()
	}
	return obj.Pkg().Path() + "." + obj.Name()
}

// reach returns the paths from t to forbidden types. At the root (a
// declared type) the named type itself is expanded rather than checked.
// calls says whether to follow the results of func-typed values and
// interface methods.
func (c *checker) reach(t types.Type, path string, root, calls bool) []string {
	w := &walk{c: c, seen: map[string]bool{}, calls: calls}
	w.typ(t, path, root)
	return w.found
}

// methods returns the paths from the results of t's exported methods
// (value and pointer receivers) to forbidden types. Interface methods are
// walked as part of the type.
func (c *checker) methods(t types.Type, path string) []string {
	if types.IsInterface(t) {
		return nil
	}
	recv := t
	if _, isPtr := t.Underlying().(*types.Pointer); !isPtr {
		recv = types.NewPointer(t)
	}
	var found []string
	ms := types.NewMethodSet(recv)
	for i := range ms.Len() {
		m := ms.At(i).Obj().(*types.Func)
		if m.Exported() {
			found = append(found, c.results(m.Type().(*types.Signature), path+"."+m.Name()+"()")...)
		}
	}
	return found
}

// results returns the paths from what a call of a function with
// signature sig hands its caller (its results, and the arguments it
// passes to callbacks the caller supplies) to forbidden types.
func (c *checker) results(sig *types.Signature, path string) []string {
	w := &walk{c: c, seen: map[string]bool{}, calls: true}
	w.sig(sig, path+" result", path+" param")
	return w.found
}

type walk struct {
	c     *checker
	seen  map[string]bool
	calls bool // follow func results and interface method results
	found []string
}

func (w *walk) typ(t types.Type, path string, root bool) {
	switch t := t.(type) {
	case *types.Alias:
		// An alias of a forbidden type re-exports it: never a root.
		w.typ(types.Unalias(t), path, false)
	case *types.Named:
		q := qualified(t.Obj())
		if w.c.forbidden[q] && !root {
			w.found = append(w.found, path+" -> "+types.TypeString(t, nil))
			return
		}
		key := types.TypeString(t, nil)
		if w.seen[key] {
			return
		}
		w.seen[key] = true
		args := t.TypeArgs()
		for i := range args.Len() {
			w.typ(args.At(i), fmt.Sprintf("%s[type arg %d]", path, i), false)
		}
		w.typ(t.Underlying(), path, false)
		if w.calls && !t.Obj().Exported() && !types.IsInterface(t) {
			// No declaration of its own is checked, but whoever holds a
			// value of it can call its exported methods.
			ms := types.NewMethodSet(types.NewPointer(t))
			for i := range ms.Len() {
				if m := ms.At(i).Obj().(*types.Func); m.Exported() {
					w.sig(m.Type().(*types.Signature), path+"."+m.Name()+"() result", path+"."+m.Name()+"() param")
				}
			}
		}
	case *types.TypeParam:
		// Checked at each instantiation, through the type arguments.
	case *types.Pointer:
		w.typ(t.Elem(), path+" -> *", false)
	case *types.Slice:
		w.typ(t.Elem(), path+" -> []", false)
	case *types.Array:
		w.typ(t.Elem(), path+" -> [n]", false)
	case *types.Map:
		w.typ(t.Key(), path+" -> map key", false)
		w.typ(t.Elem(), path+" -> map value", false)
	case *types.Chan:
		w.typ(t.Elem(), path+" -> chan", false)
	case *types.Struct:
		for i := range t.NumFields() {
			f := t.Field(i)
			w.typ(f.Type(), path+"."+f.Name(), false)
		}
	case *types.Signature:
		if !w.calls {
			return
		}
		w.sig(t, path+" -> func result", path+" -> func param")
	case *types.Interface:
		if !w.calls {
			return
		}
		for i := range t.NumMethods() {
			m := t.Method(i)
			w.typ(m.Type(), path+"."+m.Name()+"()", false)
		}
	}
}

// sig walks what a call of a function with signature t hands its caller:
// the results, and the arguments passed to callbacks the caller supplies
// as parameters.
func (w *walk) sig(t *types.Signature, result, param string) {
	for i := range t.Results().Len() {
		w.typ(t.Results().At(i).Type(), fmt.Sprintf("%s %d", result, i), false)
	}
	for i := range t.Params().Len() {
		w.supplied(t.Params().At(i).Type(), fmt.Sprintf("%s %d", param, i))
	}
}

// supplied walks a value of type t that the caller supplies and the callee
// calls: the arguments of a func, or of an interface's methods, are handed
// to the caller's code (the results are the caller's, not followed).
func (w *walk) supplied(t types.Type, path string) {
	switch u := types.Unalias(t).Underlying().(type) {
	case *types.Signature:
		for i := range u.Params().Len() {
			w.typ(u.Params().At(i).Type(), fmt.Sprintf("%s -> callback param %d", path, i), false)
		}
	case *types.Interface:
		key := "supplied " + types.TypeString(t, nil)
		if w.seen[key] {
			return
		}
		w.seen[key] = true
		for i := range u.NumMethods() {
			m := u.Method(i)
			w.supplied(m.Type(), path+"."+m.Name()+"()")
		}
	}
}
