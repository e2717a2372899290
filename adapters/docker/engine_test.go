package docker

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/checkfu/checkfu/adapters/docker/internal/engine"
)

// TestEngineExecLogsArchive drives the client calls the Instance does not
// use: exec with stdin (hijacked, half-closed) and its exit code, logs,
// and archive put and get.
func TestEngineExecLogsArchive(t *testing.T) {
	e := testEngine(t)
	img := images(t, e).tools
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pids := int64(32)
	id, err := e.c.CreateContainer(ctx, "", &engine.ContainerConfig{
		Image: img, Cmd: []string{"sh", "-c", "echo started; echo on-stderr >&2; exec sleep 60"}, Entrypoint: []string{},
		User: DefaultUser, Labels: e.labels(nil),
		HostConfig: engine.HostConfig{NetworkMode: "none", CapDrop: []string{"ALL"}, PidsLimit: &pids},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.c.RemoveContainer(context.Background(), id, true) })
	// Archive put into a created container, then start it.
	var tb bytes.Buffer
	tw := tar.NewWriter(&tb)
	tw.WriteHeader(&tar.Header{Name: "hello.txt", Mode: 0o644, Size: 6, Uid: 65534, Gid: 65534})
	tw.Write([]byte("hello\n"))
	tw.Close()
	if err := e.c.PutArchive(ctx, id, "/workspace", &tb); err != nil {
		t.Fatal(err)
	}
	if err := e.c.StartContainer(ctx, id); err != nil {
		t.Fatal(err)
	}
	// The engine copies stdout and stderr to the log in separate
	// goroutines, so one may land before the other: wait for both.
	for _, want := range []string{"on-stderr", "started"} {
		if err := e.waitLog(ctx, id, want, 10*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	rc, err := e.c.Logs(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var lo, le bytes.Buffer
	if err := engine.Demux(rc, &lo, &le); err != nil {
		t.Fatal(err)
	}
	rc.Close()
	if lo.String() != "started\n" || le.String() != "on-stderr\n" {
		t.Errorf("logs: stdout %q stderr %q", lo.String(), le.String())
	}
	// Exec with stdin: 100 000 bytes in, their count and the file out.
	xid, err := e.c.CreateExec(ctx, id, &engine.ExecConfig{Cmd: []string{"sh", "-c", "wc -c; cat /workspace/hello.txt; exit 7"}, AttachStdin: true, AttachStdout: true, AttachStderr: true})
	if err != nil {
		t.Fatal(err)
	}
	s, err := e.c.StartExec(ctx, xid)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		s.Write(bytes.Repeat([]byte("x"), 100000))
		s.CloseWrite()
	}()
	var xo bytes.Buffer
	if err := engine.Demux(s.Reader(), &xo, nil); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if got := strings.Fields(xo.String()); len(got) != 2 || got[0] != "100000" || got[1] != "hello" {
		t.Errorf("exec stdout %q, want 100000 and hello", xo.String())
	}
	var code int
	for i := 0; i < 50; i++ {
		c, running, err := e.c.ExecExitCode(ctx, xid)
		if err != nil {
			t.Fatal(err)
		}
		if !running {
			code = c
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if code != 7 {
		t.Errorf("exec exit code %d, want 7", code)
	}
	// Archive get: a tar holding the file.
	ar, err := e.c.GetArchive(ctx, id, "/workspace/hello.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer ar.Close()
	tr := tar.NewReader(ar)
	h, err := tr.Next()
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(tr)
	if h.Name != "hello.txt" || string(body) != "hello\n" {
		t.Errorf("archive get: %q %q", h.Name, body)
	}
	if err := e.c.KillContainer(ctx, id, "KILL"); err != nil {
		t.Fatal(err)
	}
}
