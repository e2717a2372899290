package mount_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/custody"
	"github.com/checkfu/checkfu/custody/address"
	"github.com/checkfu/checkfu/custody/authz"
	"github.com/checkfu/checkfu/custody/mount"
)

func ExampleResolver_Attach() {
	dir, _ := os.MkdirTemp("", "mount-example")
	defer os.RemoveAll(dir)
	project := filepath.Join(dir, "project")
	os.MkdirAll(project, 0o755)
	os.WriteFile(filepath.Join(project, "README.md"), []byte("hello"), 0o644)
	os.Symlink("../../etc/passwd", filepath.Join(project, "escape"))

	// The platform's lease for the session (see authz.Leases).
	registry, _ := authz.NewRegistry(authz.Registration{
		Capability: "project.files", Operation: "GET", Resource: "https://platform.example/files",
		Credential: custody.Binding{Namespace: "acme", Integration: "platform", Handle: address.MustParseHandle("ch_aaaaaaaaaaaaaaaaaaaaaaaaaa")},
		Effect:     authz.ReadOnly, Tool: authz.ToolDescriptor{Name: "read_file", InputSchema: json.RawMessage(`{}`)},
	})
	provider := checkfu.ProviderRevision{Provider: "checkfu:platform", Revision: "1"}
	catalog, _ := authz.NewCatalog(authz.ProviderEntry{Revision: provider, Capabilities: []string{"project.files"}})
	leases, _ := authz.NewLeases(authz.LeaseConfig{Catalog: catalog, Registry: registry})
	scope := authz.LeaseScope{Service: "platform", Gateway: "gw", Actor: "alice"}
	lease, _ := leases.Issue(authz.LeaseRequest{Provider: provider, Capabilities: []string{"project.files"}, Scope: scope, Budget: 1, TTL: time.Hour})

	r := mount.NewResolver(leases)
	plan, err := r.Attach("s1", lease.ID, scope, mount.Source{Mount: mount.Mount{Name: "project", Kind: mount.ProjectTree, Target: "/workspace"}, Dir: project})
	if err != nil {
		panic(err)
	}
	defer r.Detach("s1")
	doc, _ := json.Marshal(plan) // what the sandbox receives: no lease, no token, no host path
	fmt.Println(string(doc))

	body, err := r.ReadFile(context.Background(), "s1", "project", "README.md")
	fmt.Println(string(body), err)
	_, err = r.ReadFile(context.Background(), "s1", "project", "escape")
	fmt.Println(checkfu.CodeOf(err))
	_, err = r.ReadFile(context.Background(), "s1", "project", "../project/README.md")
	fmt.Println(checkfu.CodeOf(err))
	// Output:
	// {"session":"s1","mounts":[{"name":"project","kind":"project_tree","target":"/workspace","writable":false}]}
	// hello <nil>
	// mount_path_escapes true
	// mount_path_invalid true
}
