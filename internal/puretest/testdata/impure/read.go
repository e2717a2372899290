package impure

import "os"

// Read does I/O.
func Read(name string) ([]byte, error) { return os.ReadFile(name) }
