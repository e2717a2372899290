//go:build !unix

package procset

import "os"

func signaled(*os.ProcessState) (int, bool) { return 0, false }
