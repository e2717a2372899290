package jail

import "github.com/checkfu/checkfu/adapters/jail/internal/initstage"

// InitArg is the first argument that makes [InitMain] act as the init
// stage of a jail.
const InitArg = initstage.Arg

// InitMain makes the current binary act as a jail's init stage when its
// first argument is [InitArg]: it builds the jail's root, applies the
// locks and execs the workload, and never returns. Call it first thing
// in main (and in TestMain) unless every provider of the program has
// [Config.InitProgram]; otherwise it returns at once.
func InitMain() { initstage.Main() }
