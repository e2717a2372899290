package custodytest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
)

// A Module is the exported API of every package of a Go module, loaded
// from compiler export data.
type Module struct {
	Path     string           // module path
	Packages []*types.Package // the module's packages, in import path order
	// ImportPaths holds the import path of each of Packages (the export
	// data of a command names its package "main").
	ImportPaths []string
	Fset        *token.FileSet
	// Importer imports any package the module depends on (and the module's
	// own packages), for type-checking further source against them.
	Importer types.Importer
}

// LoadModule runs "go list -e -export -deps ./..." in dir (which must be
// inside the module) and imports every package of the main module from
// the export data the go command builds. It fails if any package of the
// module does not build, so that no package escapes the check. Packages
// added to the module later are covered without any registration.
func LoadModule(dir string) (*Module, error) {
	cmd := exec.Command(goTool(), "list", "-e", "-export", "-deps", "-json=ImportPath,Export,Module,DepOnly,Error", "./...")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("custodytest: go list in %q: %v: %s", dir, err, stderr.Bytes())
	}
	type listed struct {
		ImportPath string
		Export     string
		DepOnly    bool
		Module     *struct {
			Path string
			Main bool
		}
		Error *struct{ Err string }
	}
	exports := map[string]string{}
	var mine []string
	m := &Module{Fset: token.NewFileSet()}
	dec := json.NewDecoder(bytes.NewReader(out))
	var errs []error
	for {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("custodytest: decoding go list output: %w", err)
		}
		exports[p.ImportPath] = p.Export
		if p.Module == nil || !p.Module.Main || p.DepOnly {
			continue
		}
		m.Path = p.Module.Path
		if p.Error != nil || p.Export == "" {
			msg := "no export data"
			if p.Error != nil {
				msg = p.Error.Err
			}
			errs = append(errs, fmt.Errorf("custodytest: package %s does not build: %s", p.ImportPath, msg))
			continue
		}
		mine = append(mine, p.ImportPath)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	lookup := func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok || f == "" {
			return nil, fmt.Errorf("custodytest: no export data for %q", path)
		}
		return os.Open(f)
	}
	m.Importer = importer.ForCompiler(m.Fset, "gc", lookup)
	for _, path := range mine {
		pkg, err := m.Importer.Import(path)
		if err != nil {
			return nil, fmt.Errorf("custodytest: importing %s: %w", path, err)
		}
		m.Packages = append(m.Packages, pkg)
		m.ImportPaths = append(m.ImportPaths, path)
	}
	return m, nil
}

// goTool returns the go command on PATH (under go test, the one running
// the test: go test puts its own GOROOT/bin first on the test's PATH).
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return "go"
}
