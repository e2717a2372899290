//go:build !linux

package matrix

import (
	"os"

	"github.com/checkfu/checkfu"
)

// joinNetns refuses: network namespaces, and so the namespace topology,
// are Linux only. The module builds elsewhere so that a host importing it
// can; the matrix's jail variant runs on Linux.
func joinNetns(*os.File) error {
	return checkfu.Refuse(CodeTopologyFailed, "matrix: network namespaces are Linux only")
}
