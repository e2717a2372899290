package mount

import (
	"testing"

	"github.com/checkfu/checkfu/internal/mutation"
)

func TestMutants(t *testing.T) { mutation.Run(t, mutants) }

// mutants delete or weaken the mount resolver's checks one at a time;
// each names the tests that must fail without the check.
var mutants = []mutation.Mutant{
	{Name: "nonblocking open in ReadFile", File: "resolve.go",
		Edits: []mutation.Edit{{Old: "f, err := m.root.OpenFile(name, os.O_RDONLY|openNonblock, 0)", New: "f, err := m.root.OpenFile(name, os.O_RDONLY, 0)"}},
		Kills: "TestFIFORefusedWithoutBlocking"},
	{Name: "nonblocking open in WriteFile", File: "resolve.go",
		Edits: []mutation.Edit{{Old: "os.O_WRONLY|os.O_CREATE|openNonblock, 0o644)", New: "os.O_WRONLY|os.O_CREATE, 0o644)"}},
		Kills: "TestFIFORefusedWithoutBlocking"},
	{Name: "openedNonRegular case of classify", File: "resolve.go",
		Edits: []mutation.Edit{{Old: "case openedNonRegular(err):", New: "case false && openedNonRegular(err):"}},
		Kills: "TestFIFORefusedWithoutBlocking"},
	{Name: "a file with another name served", File: "resolve.go",
		Edits: []mutation.Edit{{Old: "\tcase n > 1:\n", New: "\tcase false:\n"}},
		Kills: "TestHardLinkIsRefused|TestRefusedWriteLeavesTheFile"},
	{Name: "a file of uncounted names served", File: "resolve.go",
		Edits: []mutation.Edit{{Old: "\tcase n == 0:\n", New: "\tcase false:\n"}},
		Kills: "TestLinkCountUnknownIsRefused"},
	{Name: "WriteFile empties the file before checking it", File: "resolve.go",
		Edits: []mutation.Edit{{Old: "os.O_WRONLY|os.O_CREATE|openNonblock, 0o644)", New: "os.O_WRONLY|os.O_CREATE|os.O_TRUNC|openNonblock, 0o644)"}},
		Kills: "TestRefusedWriteLeavesTheFile"},
	{Name: "host-directory overlap check", File: "resolve.go",
		Edits: []mutation.Edit{{Old: "if os.SameFile(fi, ofi) {", New: "if false && os.SameFile(fi, ofi) {"}},
		Kills: "TestAttachRefusesOverlappingSources"},
	{Name: "fs.ValidPath check in lookup", File: "resolve.go",
		Edits: []mutation.Edit{{Old: `if !fs.ValidPath(name) || name == "." {`, New: `if false {`}},
		Kills: "TestDotDotRefused"},
	{Name: "open outside os.Root", File: "resolve.go",
		Edits: []mutation.Edit{{Old: "f, err := m.root.OpenFile(name, os.O_RDONLY|openNonblock, 0)", New: "f, err := os.OpenFile(filepath.Join(m.root.Name(), name), os.O_RDONLY|openNonblock, 0)"}},
		Kills: "TestSymlinkEscapeRefused|TestSymlinkSwappedAfterCheck"},
	{Name: "lease check in lookup", File: "resolve.go",
		Edits: []mutation.Edit{{Old: "if err := r.leases.Hold(s.lease, s.scope); err != nil {", New: "if err := r.leases.Hold(s.lease, s.scope); false && err != nil {"}},
		Kills: "TestReadChecksSessionLease"},
	{Name: "Writable check", File: "resolve.go",
		Edits: []mutation.Edit{{Old: "if !m.mount.Writable {", New: "if false {"}}, Kills: "TestRefusals"},
	{Name: "regular-file check in ReadFile", File: "resolve.go",
		Edits: []mutation.Edit{{Old: "if !fi.Mode().IsRegular() {", New: "if false {"}}, Kills: "TestRefusals|TestFIFORefusedWithoutBlocking"},
	{Name: "size checks in ReadFile", File: "resolve.go",
		Edits: []mutation.Edit{{Old: "if fi.Size() > MaxFileBytes {", New: "if _ = fi; false {"},
			{Old: "\t\treturn nil, &Error{Op: \"read\", Err: errors.Unwrap(err)}\n\t}\n\tif len(body) > MaxFileBytes {", New: "\t\treturn nil, &Error{Op: \"read\", Err: errors.Unwrap(err)}\n\t}\n\tif false {"}},
		Kills: "TestRefusals"},
	{Name: "unknown-session check", File: "resolve.go",
		Edits: []mutation.Edit{{Old: "\ts, ok := r.sessions[sessionID]\n\tr.mu.Unlock()\n\tif !ok {", New: "\ts, ok := r.sessions[sessionID]\n\tr.mu.Unlock()\n\tif !ok && s != nil {"}},
		Kills: "TestRefusals"},
	{Name: "unknown-mount check", File: "resolve.go",
		Edits: []mutation.Edit{{Old: "\tm, ok := s.mounts[mountName]\n\tif !ok {", New: "\tm, ok := s.mounts[mountName]\n\tif !ok && m != nil {"}},
		Kills: "TestRefusals"},
	{Name: "target overlap check", File: "resolve.go",
		Edits: []mutation.Edit{{Old: "if prev.Name == m.Name || overlaps(prev.Target, m.Target) {", New: "if prev.Name == m.Name {"}}, Kills: "TestAttachRefusesBadPlans"},
	{Name: "a source's Dir not pinned to the directory opened", File: "resolve.go",
		Edits: []mutation.Edit{{Old: "if !os.SameFile(chain[0], own) {", New: "if false && !os.SameFile(chain[0], own) {"}},
		Kills: "TestAttachPinsTheDirItOpened"},
	{Name: "mount name check", File: "plan.go",
		Edits: []mutation.Edit{{Old: "case !validName(m.Name):", New: "case false:"}}, Kills: "TestAttachRefusesBadPlans"},
	{Name: "mount target check", File: "plan.go",
		Edits: []mutation.Edit{{Old: `case m.Target == "" || m.Target[0] != '/' || path.Clean(m.Target) != m.Target || m.Target == "/":`, New: `case m.Target == "" || path.Clean(m.Target) == "":`}}, Kills: "TestAttachRefusesBadPlans"},
	{Name: "a lease field in Plan", File: "plan.go",
		Edits: []mutation.Edit{{Old: "\tSession string  `json:\"session\"`\n", New: "\tSession string  `json:\"session\"`\n\tLease   *string `json:\"lease,omitempty\"`\n"}},
		Kills: "TestPlanHoldsNoToken"},
}
