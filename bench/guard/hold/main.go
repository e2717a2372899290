// Command hold measures what a forward proxy holds for connections a
// hostile workload keeps open (bench/guard/hold.sh runs it; not part of
// CI). It opens N connections to the proxy, from one or more loopback
// source addresses, and keeps them open while it reads the proxy
// process's descriptors, resident memory and threads from /proc:
//
//   - idle: each connection sends one keep-alive absolute-form GET to
//     -target, reads the answer, and then stays idle;
//   - tunnel: each connection opens a CONNECT tunnel to a silent
//     destination this process runs (it accepts and never reads or
//     writes), and then stays idle.
//
// It prints one line: the mode, how many connections were opened and
// answered, how many were refused, and the proxy's figures before and
// while holding them. With -quit it then sends the proxy SIGQUIT, so that
// a Go proxy dumps its goroutines while the connections are held. Every
// connection it opens is closed on exit.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

func main() {
	mode := flag.String("mode", "idle", "idle or tunnel")
	proxy := flag.String("proxy", "", "the proxy's host:port")
	pid := flag.Int("pid", 0, "the proxy's process id, for /proc")
	n := flag.Int("n", 1000, "connections to open")
	target := flag.String("target", "", "idle: the absolute URL to GET")
	sources := flag.String("sources", "127.0.0.1", "comma-separated loopback source addresses, used in turn")
	settle := flag.Duration("settle", 2*time.Second, "wait this long after the last connection before measuring")
	label := flag.String("label", "", "label for the output line")
	quit := flag.Bool("quit", false, "send the proxy SIGQUIT while holding (a Go proxy then dumps its goroutines and exits)")
	flag.Parse()
	if err := run(*mode, *proxy, *pid, *n, *target, strings.Split(*sources, ","), *settle, *label, *quit); err != nil {
		fmt.Fprintln(os.Stderr, "hold:", err)
		os.Exit(1)
	}
}

// figures are what the proxy process holds.
type figures struct {
	fds, rssKiB, threads int
}

func (f figures) String() string {
	return fmt.Sprintf("fds=%d rss_mib=%.1f threads=%d", f.fds, float64(f.rssKiB)/1024, f.threads)
}

func read(pid int) (figures, error) {
	var f figures
	ents, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "fd"))
	if err != nil {
		return f, err
	}
	f.fds = len(ents)
	status, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return f, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		k, v, _ := strings.Cut(line, ":")
		fields := strings.Fields(v)
		if len(fields) == 0 {
			continue
		}
		switch k {
		case "VmRSS":
			f.rssKiB, _ = strconv.Atoi(fields[0])
		case "Threads":
			f.threads, _ = strconv.Atoi(fields[0])
		}
	}
	return f, nil
}

func run(mode, proxy string, pid, n int, target string, sources []string, settle time.Duration, label string, quit bool) error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err == nil && lim.Cur < uint64(2*n+256) {
		lim.Cur = min(lim.Max, uint64(2*n+256))
		syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim) //nolint:errcheck // checked by the dials below
	}
	var silent string
	var held []net.Conn
	var mu sync.Mutex
	if mode == "tunnel" {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		defer ln.Close()
		silent = ln.Addr().String()
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				mu.Lock()
				held = append(held, c) // never read, never written
				mu.Unlock()
			}
		}()
	} else if target == "" {
		return fmt.Errorf("idle needs -target")
	}
	before, err := read(pid)
	if err != nil {
		return err
	}
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
		mu.Lock()
		for _, c := range held {
			c.Close()
		}
		mu.Unlock()
	}()
	opened, refused, failed := 0, 0, 0
	var firstErr error
	for i := range n {
		src := sources[i%len(sources)]
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
		c, err := d.Dial("tcp", proxy)
		if err != nil {
			failed++
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		conns = append(conns, c)
		c.SetDeadline(time.Now().Add(10 * time.Second))
		br := bufio.NewReader(c)
		var req *http.Request
		if mode == "tunnel" {
			fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", silent, silent)
			req = &http.Request{Method: http.MethodConnect}
		} else {
			fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, strings.TrimPrefix(strings.TrimSuffix(target, "/"), "http://"))
			req = &http.Request{Method: http.MethodGet}
		}
		resp, err := http.ReadResponse(br, req)
		if err != nil {
			failed++
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		if mode == "idle" {
			io.Copy(io.Discard, resp.Body)
		}
		resp.Body.Close()
		c.SetDeadline(time.Time{})
		if resp.StatusCode != http.StatusOK {
			refused++
			continue
		}
		opened++
	}
	time.Sleep(settle)
	during, err := read(pid)
	if err != nil {
		return err
	}
	mu.Lock()
	dest := len(held)
	mu.Unlock()
	errText := ""
	if firstErr != nil {
		errText = " first_error=" + strconv.Quote(firstErr.Error())
	}
	fmt.Printf("%-22s mode=%s n=%d ok=%d refused=%d failed=%d dest_conns=%d | before %v | holding %v | per_conn fds=%.2f rss_kib=%.1f%s\n",
		label, mode, n, opened, refused, failed, dest, before, during,
		float64(during.fds-before.fds)/float64(max(opened, 1)), float64(during.rssKiB-before.rssKiB)/float64(max(opened, 1)), errText)
	if quit {
		syscall.Kill(pid, syscall.SIGQUIT) //nolint:errcheck // the dump is best effort
		time.Sleep(2 * time.Second)        // while the connections are still held
	}
	return nil
}
