package main

import (
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestGuardServesMetrics: with -metrics-listen the guard says where its
// metrics are, on the line after its ready line, and serves them there
// in the Prometheus text format: its tunnel and connection limits as
// configured, and the connection a workload holds open.
func TestGuardServesMetrics(t *testing.T) {
	policy := writePolicy(t, `{"type":"none"}`)
	g := startGuardCommand(t, "-policy", policy, "-metrics-listen", "127.0.0.1:0", "-max-tunnels", "7", "-max-connections", "9")
	defer func() {
		g.cmd.Process.Signal(syscall.SIGTERM)
		g.cmd.Wait()
	}()
	line, err := g.stdout.ReadString('\n')
	if err != nil {
		t.Fatalf("reading the metrics line: %v (stderr %q)", err, g.stderr.String())
	}
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "metrics on ")
	if !ok {
		t.Fatalf("second line %q, want \"metrics on URL\"", line)
	}
	held, err := net.Dial("tcp", g.addr) // a workload connection, held open
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()

	want := map[string]*regexp.Regexp{
		"tunnel limit":     regexp.MustCompile(`(?m)^checkfu_guard_tunnel_limit\{[^}]*\} 7$`),
		"connection limit": regexp.MustCompile(`(?m)^checkfu_guard_connection_limit\{[^}]*\} 9$`),
		"connections":      regexp.MustCompile(`(?m)^checkfu_guard_connections\{[^}]*\} 1$`),
		"tunnels":          regexp.MustCompile(`(?m)^checkfu_guard_tunnels\{[^}]*\} 0$`),
	}
	var body string
	for deadline := time.Now().Add(10 * time.Second); ; {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %q", url, resp.StatusCode, b)
		}
		body = string(b)
		if want["connections"].MatchString(body) || time.Now().After(deadline) {
			break // the guard counts the connection once it has accepted it
		}
		time.Sleep(20 * time.Millisecond)
	}
	for name, re := range want {
		if !re.MatchString(body) {
			t.Errorf("%s: the metrics do not match %s:\n%s", name, re, body)
		}
	}
}
