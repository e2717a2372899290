package mount_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/mount"
)

// ReadFile serves regular files only, inside the mount, by clean relative
// names; every other answer is a typed refusal.
func ExampleResolver_ReadFile() {
	dir, _ := os.MkdirTemp("", "mount-example")
	defer os.RemoveAll(dir)
	os.Mkdir(filepath.Join(dir, "src"), 0o755)
	os.WriteFile(filepath.Join(dir, "src", "main.go"), []byte("package main"), 0o644)

	r := mount.NewResolver(&revocable{})
	scope := authz.LeaseScope{Service: "platform", Gateway: "gw", Actor: "alice"}
	if _, err := r.Attach("s1", "lease_1", scope, mount.Source{Mount: mount.Mount{Name: "project", Kind: mount.ProjectTree, Target: "/workspace"}, Dir: dir}); err != nil {
		panic(err)
	}
	defer r.Detach("s1")

	ctx := context.Background()
	for _, name := range []string{"src/main.go", "src", "src/missing.go", "/etc/passwd"} {
		body, err := r.ReadFile(ctx, "s1", "project", name)
		switch {
		case err == nil:
			fmt.Printf("%s: %q\n", name, body)
		case errors.Is(err, mount.CodeNotRegular):
			fmt.Println(name+":", "not a regular file")
		case errors.Is(err, mount.CodeNotFound):
			fmt.Println(name+":", "not found")
		case errors.Is(err, mount.CodePathInvalid):
			fmt.Println(name+":", "not a clean relative path")
		default:
			fmt.Println(name+":", err)
		}
	}
	_, err := r.ReadFile(ctx, "s1", "memory", "notes.md")
	fmt.Println(errors.Is(err, mount.CodeMountUnknown))
	// Output:
	// src/main.go: "package main"
	// src: not a regular file
	// src/missing.go: not found
	// /etc/passwd: not a clean relative path
	// true
}
