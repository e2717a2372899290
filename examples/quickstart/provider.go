package main

import (
	"context"
	"fmt"
	"io"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/runner"
)

// dockerAgentPath is where the agent binary sits in the docker image.
const dockerAgentPath = "/usr/local/bin/quickstart"

// provider returns the provider named by -provider.
func provider(ctx context.Context, name string, w io.Writer) (runner.Provider, func(), error) {
	switch name {
	case "process":
		return runner.Process(), func() {}, nil
	case "docker":
		return dockerProvider(ctx, w)
	}
	return nil, nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "quickstart: -provider %s is not process or docker", checkfu.Quote(name))
}

func dockerProvider(ctx context.Context, w io.Writer) (runner.Provider, func(), error) {
	fmt.Fprintln(w, "docker: not wired yet")
	return nil, nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "quickstart: -provider docker is not wired yet")
}
