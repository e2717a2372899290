package runner

import "github.com/checkfu/checkfu/adapters"

// SetDescription replaces the Description New checked against the
// enrollment, so that a test can show what a provider's word decides
// after New: nothing the enrollment decides.
func SetDescription(r *Runner, d adapters.Description) { r.desc = d }
