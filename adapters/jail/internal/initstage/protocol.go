package initstage

// Arg is the first argument that makes [Main] act as the init stage.
const Arg = "checkfu-jail-init"

// Protocol names the revision of [Config], [Ready] and the messages: a
// stage answers a trial start with [MsgReady] followed by Protocol, and
// the provider refuses any other answer.
const Protocol = "checkfu-jail-init/3"

// SyncFD is the descriptor of the stage's end of the sync socket (the
// first of exec.Cmd.ExtraFiles).
const SyncFD = 3

// MaxConfigBytes bounds the configuration the provider sends the
// stage: argv and environment included.
const MaxConfigBytes = 1 << 20

// MaxBinds bounds the binds of one jail (the descriptors of one
// message).
const MaxBinds = 64

// MaxCgroups bounds the tasks files of one [MsgCgroups] message: a
// message with more descriptors is refused (the kernel truncates it at
// the room the stage gives).
const MaxCgroups = 8

// The messages of the sync socket. The provider sends the [Config],
// then, when [Config.Cgroups] is not zero, MsgCgroups with the groups'
// tasks files (it makes the groups while the stage starts); the stage
// answers MsgReady (locks applied, before exec) or MsgError, the
// provider answers MsgGo once it has read the jail back, and the exec
// closes the socket (close-on-exec): EOF after MsgGo means the workload
// runs.
const (
	// MsgCgroups carries, as its descriptors, the tasks file of each
	// group the stage joins, and no other byte.
	MsgCgroups = 'C'
	MsgReady   = 'R'
	MsgError   = 'E'
	// MsgExecError: the workload's command could not be found or
	// executed.
	MsgExecError = 'X'
	MsgGo        = 'G'
)

// Config is what the provider tells the stage, sent as [Config.Encode].
// Descriptors are numbers in the stage (ExtraFiles from [SyncFD] on).
type Config struct {
	SystemDirs []string
	Binds      []Bind
	Hostname   string
	Argv       []string
	Env        []string
	// Dir is the workload's working directory in the jail.
	Dir      string
	Landlock int
	Relay    []Relay
	NoFile   uint64
	// TmpBytes bounds the private /tmp and /dev/shm.
	TmpBytes int64
	// Cgroups is how many tasks files the [MsgCgroups] message after
	// the config carries (at most [MaxCgroups]); the stage writes to each
	// to join its group before it applies the locks. Zero: no message,
	// no group.
	Cgroups int
	// Check, when set, makes the stage only report that it runs in its
	// namespaces, with [Protocol], and exit 0: the provider's trial
	// start.
	Check bool
}

// A Bind is one bind mount from a descriptor the provider opened
// (O_PATH, in the stage's mount namespace) to a path in the jail; FD is
// its index among the descriptors sent with the config.
type Bind struct {
	FD       int
	Target   string
	Dir      bool
	Writable bool
}

// A Relay is a loopback TCP port the stage listens on inside the jail's
// network namespace and hands to the provider.
type Relay struct {
	Port int
}

// Ready is what the stage reports with [MsgReady], as [Ready.Encode].
type Ready struct {
	// Tid is the thread that applied the locks and will exec.
	Tid int
	// Landlock is the Landlock ABI whose ruleset the thread is
	// restricted by.
	Landlock int
}

// Devices are the host device nodes a jail's /dev holds.
var Devices = []string{"null", "zero", "full", "random", "urandom", "tty"}
