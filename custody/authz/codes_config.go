package authz

import "github.com/checkfu/checkfu"

// CodeInvalidConfig is the code of the Refusal returned when a lease or
// approval configuration is unusable. It has the same value as
// custody.CodeInvalidConfig, so errors.Is matches either.
const CodeInvalidConfig checkfu.Code = "custody_invalid_config"
