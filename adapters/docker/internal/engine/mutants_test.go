package engine

import (
	"testing"

	"github.com/checkfu/checkfu/internal/mutation"
)

// TestMutants proves the client's checks are tested. Run with
// CHECKFU_MUTANTS=1.
func TestMutants(t *testing.T) { mutation.Run(t, mutants) }

var mutants = []mutation.Mutant{
	{Name: "missing image on create not typed", File: "client.go",
		Edits: []mutation.Edit{{Old: `			code = CodeImageMissing`, New: ``}},
		Kills: "TestAPIErrors"},
	{Name: "API version floor deleted", File: "client.go",
		Edits: []mutation.Edit{{Old: `	return am < bm || am == bm && an < bn`, New: `	return am < bm || am == bm && an < bn && false`}},
		Kills: "TestVersionLess"},
	{Name: "non-unix DOCKER_HOST accepted", File: "client.go",
		Edits: []mutation.Edit{{Old: `	if !ok || path == "" {`, New: `	if ok && path == "" {`}},
		Kills: "TestSocketFromEnv"},
	{Name: "frame header padding unchecked", File: "stream.go",
		Edits: []mutation.Edit{{Old: `hdr[1] != 0 || hdr[2] != 0 || hdr[3] != 0 || n > maxFrame`, New: `n > maxFrame`}},
		Kills: "TestDemuxRefusesBrokenStreams"},
	{Name: "frame size unbounded", File: "stream.go",
		Edits: []mutation.Edit{{Old: `hdr[1] != 0 || hdr[2] != 0 || hdr[3] != 0 || n > maxFrame`, New: `hdr[1] != 0 || hdr[2] != 0 || hdr[3] != 0`}},
		Kills: "TestDemuxRefusesBrokenStreams"},
}
