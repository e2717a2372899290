package door

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"github.com/checkfu/checkfu"
)

// ModelURLEnv is the environment variable through which Run tells the
// agent the model relay's base URL (http://127.0.0.1:PORT).
const ModelURLEnv = "CHECKFU_MODEL_URL"

// InputGrace is how long the agent may run on after its input ends
// before Run stops it. An ACP agent's input ending is its client gone
// (the Runner closed the agent), yet some agents, and the children they
// start, do not exit on it: Run then sends SIGTERM to the agent's process
// group, and SIGKILL StopGrace later.
const InputGrace = 2 * time.Second

// StopGrace is how long the agent's process group has to exit after
// SIGTERM before Run sends it SIGKILL.
const StopGrace = 2 * time.Second

// A RunConfig says what Run starts.
type RunConfig struct {
	// Socket is the broker socket's path inside the sandbox.
	Socket string
	// ModelAddr is the loopback address the model relay listens on; empty
	// starts no model relay.
	ModelAddr string
	// Command is the agent's program and arguments.
	Command []string
}

// Run starts the model relay (when cfg.ModelAddr is set) and then the
// agent, cfg.Command, as the door's child in a process group of its own,
// with the door's standard output, error and environment (plus
// ModelURLEnv), so ACP flows from the agent to the Runner directly. The
// door's standard input is copied to the agent's; when it ends, the
// agent's ends, and an agent still running InputGrace later is stopped
// (see InputGrace). It forwards SIGTERM, SIGINT and SIGHUP to the
// agent's process group; where the platform allows, the agent is killed
// when the door dies. It returns the agent's exit code once the agent has
// ended, after killing what is left of its process group, and stops the
// relay.
func Run(ctx context.Context, cfg RunConfig) (int, error) {
	if len(cfg.Command) == 0 || cfg.Command[0] == "" {
		return 2, checkfu.Refuse(CodeRelayArgumentsInvalid, "door: run needs the agent's command")
	}
	env := os.Environ()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	served := make(chan error, 1)
	if cfg.ModelAddr != "" {
		if cfg.Socket == "" {
			return 2, checkfu.Refuse(CodeRelayArgumentsInvalid, "door: the model relay needs the broker socket")
		}
		ln, err := ListenModel(cfg.ModelAddr)
		if err != nil {
			return 2, err
		}
		env = append(env, ModelURLEnv+"=http://"+ln.Addr().String())
		go func() { served <- ServeModel(ctx, ln, cfg.Socket) }()
	} else {
		served <- nil
	}
	cmd := exec.Command(cfg.Command[0], cfg.Command[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.Env = env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		cancel()
		<-served
		return 127, checkfu.Refuse(CodeRelayArgumentsInvalid, "door: the agent's input cannot be made: %v", err)
	}
	cmd.SysProcAttr = childAttr()
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		cancel()
		<-served
		return 127, checkfu.Refuse(CodeRelayArgumentsInvalid, "door: the agent cannot be started: %v", err)
	}
	inputEnded := make(chan struct{})
	go func() {
		io.Copy(stdin, os.Stdin)
		stdin.Close()
		close(inputEnded)
	}()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	var werr error
	var stop, kill <-chan time.Time
	for done := false; !done; {
		select {
		case s := <-sigs:
			signalGroup(cmd.Process, s)
		case <-inputEnded:
			inputEnded, stop = nil, time.After(InputGrace)
		case <-stop:
			signalGroup(cmd.Process, syscall.SIGTERM)
			stop, kill = nil, time.After(StopGrace)
		case <-kill:
			signalGroup(cmd.Process, syscall.SIGKILL)
			kill = nil
		case werr = <-waited:
			done = true
		}
	}
	// What the agent started and left behind in its group ends with it.
	signalGroup(cmd.Process, syscall.SIGKILL)
	cancel()
	<-served
	var ee *exec.ExitError
	switch {
	case werr == nil:
		return 0, nil
	case errors.As(werr, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal()), nil
		}
		return ee.ExitCode(), nil
	default:
		return 1, werr
	}
}
