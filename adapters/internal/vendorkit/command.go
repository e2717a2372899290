package vendorkit

import (
	"strings"

	"github.com/checkfu/checkfu"
)

// CheckArgv refuses, with checkfu.CodeConfigInvalid, an argv that names
// no command (empty, or an empty first word); vendor prefixes the error.
func CheckArgv(vendor string, argv []string) error {
	if len(argv) == 0 || argv[0] == "" {
		return checkfu.Refuse(checkfu.CodeConfigInvalid, "%s: a Command needs an argv", vendor)
	}
	return nil
}

// EnvMap returns env's "K=V" entries as a map, a later K overriding an
// earlier one. An entry with no "=" or an empty K is refused with
// checkfu.CodeConfigInvalid; the error quotes K, never V (a value may be
// a secret). It is for vendors that take the environment as a JSON
// object; one that splices it into a shell line checks names more
// strictly itself.
func EnvMap(vendor string, env []string) (map[string]string, error) {
	m := map[string]string{}
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "%s: env entry %s is not K=V", vendor, checkfu.Quote(k))
		}
		m[k] = v
	}
	return m, nil
}
