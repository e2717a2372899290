package door

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"syscall"

	"github.com/checkfu/checkfu"
)

// ModelURLEnv is the environment variable through which Run tells the
// agent the model relay's base URL (http://127.0.0.1:PORT).
const ModelURLEnv = "CHECKFU_MODEL_URL"

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
// agent, cfg.Command, as the door's child with the door's own standard
// streams and environment (plus ModelURLEnv), so ACP flows between the
// Runner and the agent directly. It forwards SIGTERM, SIGINT and SIGHUP
// to the agent; where the platform allows, the agent is killed when the
// door dies. It returns the agent's exit code once the agent has ended,
// and stops the relay.
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
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = env
	cmd.SysProcAttr = childAttr()
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		cancel()
		<-served
		return 127, checkfu.Refuse(CodeRelayArgumentsInvalid, "door: the agent cannot be started: %v", err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	var werr error
	for done := false; !done; {
		select {
		case s := <-sigs:
			cmd.Process.Signal(s)
		case werr = <-waited:
			done = true
		}
	}
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
