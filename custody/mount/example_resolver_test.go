package mount_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/mount"
)

// revocable is a LeaseHolder with one lease that can be revoked; a
// platform passes its *authz.Leases instead.
type revocable struct {
	mu      sync.Mutex
	revoked bool
}

func (l *revocable) Hold(lease string, scope authz.LeaseScope) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.revoked || lease != "lease_1" {
		return checkfu.Refuse(authz.CodeLeaseRevoked, "lease %q is revoked", lease)
	}
	return nil
}

// NewResolver checks the session's lease before every read and write, so
// revoking the lease cuts the sandbox off from its files at once.
func ExampleNewResolver() {
	dir, _ := os.MkdirTemp("", "mount-example")
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main"), 0o644)

	leases := &revocable{}
	r := mount.NewResolver(leases)
	scope := authz.LeaseScope{Service: "platform", Gateway: "gw", Actor: "alice"}
	_, err := r.Attach("s1", "lease_1", scope, mount.Source{Mount: mount.Mount{Name: "project", Kind: mount.ProjectTree, Target: "/workspace"}, Dir: dir})
	if err != nil {
		panic(err)
	}
	defer r.Detach("s1")

	body, err := r.ReadFile(context.Background(), "s1", "project", "main.go")
	fmt.Printf("%q %v\n", body, err)

	leases.mu.Lock()
	leases.revoked = true
	leases.mu.Unlock()
	_, err = r.ReadFile(context.Background(), "s1", "project", "main.go")
	fmt.Println(errors.Is(err, authz.CodeLeaseRevoked))
	// Output:
	// "package main" <nil>
	// true
}

// WriteFile writes only to a mount the plan marks writable.
func ExampleResolver_WriteFile() {
	dir, _ := os.MkdirTemp("", "mount-example")
	defer os.RemoveAll(dir)
	project, memory := filepath.Join(dir, "project"), filepath.Join(dir, "memory")
	os.Mkdir(project, 0o755)
	os.Mkdir(memory, 0o755)

	r := mount.NewResolver(&revocable{})
	scope := authz.LeaseScope{Service: "platform", Gateway: "gw", Actor: "alice"}
	plan, err := r.Attach("s1", "lease_1", scope,
		mount.Source{Mount: mount.Mount{Name: "project", Kind: mount.ProjectTree, Target: "/workspace"}, Dir: project},
		mount.Source{Mount: mount.Mount{Name: "memory", Kind: mount.MemoryDir, Target: "/memory", Writable: true}, Dir: memory},
	)
	if err != nil {
		panic(err)
	}
	defer r.Detach("s1")
	for _, m := range plan.Mounts {
		fmt.Println(m.Name, m.Kind, m.Target, m.Writable)
	}

	ctx := context.Background()
	fmt.Println(r.WriteFile(ctx, "s1", "memory", "notes.md", []byte("remember")))
	err = r.WriteFile(ctx, "s1", "project", "main.go", []byte("package evil"))
	fmt.Println(errors.Is(err, mount.CodeReadOnly))
	got, _ := os.ReadFile(filepath.Join(memory, "notes.md"))
	fmt.Printf("%q\n", got)
	// Output:
	// project project_tree /workspace false
	// memory memory_dir /memory true
	// <nil>
	// true
	// "remember"
}

func ExampleResolver_Detach() {
	dir, _ := os.MkdirTemp("", "mount-example")
	defer os.RemoveAll(dir)
	r := mount.NewResolver(&revocable{})
	scope := authz.LeaseScope{Service: "platform", Gateway: "gw", Actor: "alice"}
	if _, err := r.Attach("s1", "lease_1", scope, mount.Source{Mount: mount.Mount{Name: "project", Kind: mount.ProjectTree, Target: "/workspace"}, Dir: dir}); err != nil {
		panic(err)
	}
	fmt.Println(r.Detach("s1"))
	_, err := r.ReadFile(context.Background(), "s1", "project", "main.go")
	fmt.Println(errors.Is(err, mount.CodeSessionUnknown))
	// Output:
	// <nil>
	// true
}

func ExampleKind_UnmarshalText() {
	var m mount.Mount
	err := json.Unmarshal([]byte(`{"name":"mem","kind":"memory_dir","target":"/memory","writable":true}`), &m)
	fmt.Println(m.Kind, m.Kind.Valid(), err)

	// Exactly the two names; the zero Kind is invalid and does not marshal.
	fmt.Println(json.Unmarshal([]byte(`{"kind":"Memory_Dir"}`), &m) != nil)
	_, err = json.Marshal(mount.Mount{Name: "x", Target: "/x"})
	fmt.Println(err != nil)
	// Output:
	// memory_dir true <nil>
	// true
	// true
}
