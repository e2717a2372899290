// Command loadgen is the load generator and loopback upstream of the
// guard benchmark (bench/guard/run.sh). It is not part of CI.
//
//	loadgen freeport                      print a free 127.0.0.1 port
//	loadgen upstream                      serve "ok" on a free 127.0.0.1 port; print "listening on ADDR"
//	loadgen run -target URL [-proxy URL] [-c N] [-d DURATION] [-warmup DURATION] [-label NAME] [-cpu NAME=PID,...]
//
// run sends GET requests to target from c keep-alive workers (through the
// forward proxy when -proxy is set, absolute-form HTTP), for warmup and
// then for d, and prints one line: label, requests/s, p50 and p99 latency,
// and the error count of the measured period. With -cpu it also prints
// the CPU time (user+system, from /proc) that the load generator itself
// and each named process spent per measured request: on a shared machine
// this is steadier than requests/s, which moves with everyone else's load.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: loadgen upstream | loadgen run -target URL [-proxy URL] [-c N] [-d DURATION]")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "upstream":
		upstream()
	case "freeport":
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Fprintln(os.Stderr, "error:", err)
			os.Exit(1)
		}
		fmt.Println(ln.Addr().(*net.TCPAddr).Port)
		ln.Close()
	case "run":
		if err := run(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "error:", err)
			os.Exit(1)
		}
	default:
		fmt.Fprintf(os.Stderr, "loadgen: unknown mode %q\n", os.Args[1])
		os.Exit(2)
	}
}

func upstream() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
	fmt.Printf("listening on %s\n", ln.Addr())
	body := []byte("ok\n")
	http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { //nolint:errcheck // runs until killed
		w.Header().Set("Content-Type", "text/plain")
		w.Write(body) //nolint:errcheck
	}))
}

func run(args []string) error {
	fs := flag.NewFlagSet("loadgen run", flag.ContinueOnError)
	target := fs.String("target", "", "URL to GET")
	proxy := fs.String("proxy", "", "forward proxy URL (empty: direct)")
	conc := fs.Int("c", 16, "concurrent keep-alive workers")
	dur := fs.Duration("d", 5*time.Second, "measured duration")
	warm := fs.Duration("warmup", time.Second, "warm-up duration (not measured)")
	label := fs.String("label", "run", "label of the output line")
	cpuOf := fs.String("cpu", "", "NAME=PID,... processes whose CPU per request to report (Linux /proc)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *target == "" {
		return fmt.Errorf("-target is required")
	}
	tr := &http.Transport{MaxIdleConns: *conc * 2, MaxIdleConnsPerHost: *conc * 2, DisableCompression: true}
	if *proxy != "" {
		pu, err := url.Parse(*proxy)
		if err != nil {
			return err
		}
		tr.Proxy = http.ProxyURL(pu)
	}
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}

	var (
		mu      sync.Mutex
		lat     []time.Duration
		errs    int
		measure = time.Now().Add(*warm)
		stop    = measure.Add(*dur)
	)
	procs, err := parseProcs(*cpuOf)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithDeadline(context.Background(), stop)
	defer cancel()
	cpuDone := make(chan []float64, 1)
	go func() { // CPU seconds of each process over the measured period
		time.Sleep(time.Until(measure))
		before := cpuSeconds(procs)
		time.Sleep(time.Until(stop))
		after := cpuSeconds(procs)
		for i := range after {
			if before[i] < 0 || after[i] < 0 {
				after[i] = -1
				continue
			}
			after[i] -= before[i]
		}
		cpuDone <- after
	}()
	var wg sync.WaitGroup
	for range *conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := make([]time.Duration, 0, 1<<14)
			localErrs := 0
			for ctx.Err() == nil {
				start := time.Now()
				req, _ := http.NewRequestWithContext(ctx, "GET", *target, nil)
				resp, err := client.Do(req)
				if err == nil {
					_, err = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if err == nil && resp.StatusCode != http.StatusOK {
						err = fmt.Errorf("status %d", resp.StatusCode)
					}
				}
				end := time.Now()
				if start.Before(measure) || end.After(stop) {
					continue
				}
				if err != nil {
					localErrs++
					continue
				}
				local = append(local, end.Sub(start))
			}
			mu.Lock()
			lat = append(lat, local...)
			errs += localErrs
			mu.Unlock()
		}()
	}
	wg.Wait()
	slices.Sort(lat)
	pct := func(p float64) time.Duration {
		if len(lat) == 0 {
			return 0
		}
		return lat[min(len(lat)-1, int(float64(len(lat))*p))]
	}
	fmt.Printf("%-22s req/s %8.0f   p50 %8s   p99 %8s   errors %d", *label, float64(len(lat))/dur.Seconds(),
		pct(0.50).Round(time.Microsecond), pct(0.99).Round(time.Microsecond), errs)
	if len(procs) > 0 && len(lat) > 0 {
		fmt.Printf("   cpu µs/req:")
		for i, sec := range <-cpuDone {
			if sec < 0 {
				fmt.Printf(" %s n/a", procs[i].name)
				continue
			}
			fmt.Printf(" %s %.1f", procs[i].name, sec*1e6/float64(len(lat)))
		}
	}
	fmt.Println()
	return nil
}

// A proc is a process whose CPU time is reported.
type proc struct {
	name string
	pid  string // "self" for the load generator
}

// parseProcs parses "NAME=PID,..." and puts the load generator first.
func parseProcs(s string) ([]proc, error) {
	if s == "" {
		return nil, nil
	}
	out := []proc{{"loadgen", "self"}}
	for _, kv := range strings.Split(s, ",") {
		name, pid, ok := strings.Cut(kv, "=")
		if _, err := strconv.Atoi(pid); !ok || name == "" || err != nil {
			return nil, fmt.Errorf("-cpu wants NAME=PID,... (got %q)", kv)
		}
		out = append(out, proc{name, pid})
	}
	return out, nil
}

// cpuSeconds returns the user+system CPU seconds of each process so far,
// or -1 for one it cannot read. /proc/PID/stat counts in clock ticks of
// 1/100 s (USER_HZ) on Linux.
func cpuSeconds(procs []proc) []float64 {
	out := make([]float64, len(procs))
	for i, p := range procs {
		out[i] = -1
		b, err := os.ReadFile("/proc/" + p.pid + "/stat")
		if err != nil {
			continue
		}
		// Fields after the command name, which is in parentheses and may
		// contain spaces: state is field 3, utime 14, stime 15.
		rest := string(b)
		if j := strings.LastIndexByte(rest, ')'); j >= 0 {
			rest = rest[j+1:]
		}
		f := strings.Fields(rest)
		if len(f) < 13 {
			continue
		}
		ut, err1 := strconv.ParseFloat(f[11], 64)
		st, err2 := strconv.ParseFloat(f[12], 64)
		if err1 != nil || err2 != nil {
			continue
		}
		out[i] = (ut + st) / 100
	}
	return out
}
