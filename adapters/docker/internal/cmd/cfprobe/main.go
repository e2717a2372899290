// Command cfprobe is the Docker adapter tests' network probe, run inside a
// workload container. It runs every check given as an argument at once,
// each with a 2 s deadline, and prints one line per check:
//
//	CHECK RESULT DETAIL
//
// where CHECK is the argument as given and RESULT is "reached" or
// "blocked". Checks:
//
//	tcp:IP:PORT             connect; reached when the connection opens
//	udp:IP:PORT             send "ping"; reached when any answer arrives
//	dns:IP:PORT:NAME        ask for NAME's A record; reached on any answer
//	http:PROXY:URL          GET URL through the HTTP proxy PROXY (ip:port);
//	                        reached on any HTTP answer, DETAIL is
//	                        "STATUS REFUSAL-CODE"
//
// It exits 0 when every check ran, 2 on a malformed argument.
package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

const deadline = 2 * time.Second

func main() {
	out := make([]string, len(os.Args)-1)
	var wg sync.WaitGroup
	for i, arg := range os.Args[1:] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, detail, err := check(arg)
			if err != nil {
				fmt.Fprintln(os.Stderr, "cfprobe:", err)
				os.Exit(2)
			}
			out[i] = strings.TrimSpace(arg + " " + res + " " + detail)
		}()
	}
	wg.Wait()
	fmt.Println(strings.Join(out, "\n"))
}

func result(ok bool) string {
	if ok {
		return "reached"
	}
	return "blocked"
}

func check(arg string) (string, string, error) {
	kind, rest, _ := strings.Cut(arg, ":")
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	switch kind {
	case "tcp":
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", rest)
		if err != nil {
			return "blocked", errWord(err), nil
		}
		c.Close()
		return "reached", "", nil
	case "udp":
		c, err := net.Dial("udp", rest)
		if err != nil {
			return "blocked", errWord(err), nil
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(deadline))
		if _, err := c.Write([]byte("ping")); err != nil {
			return "blocked", errWord(err), nil
		}
		buf := make([]byte, 512)
		_, err = c.Read(buf)
		return result(err == nil), errWord(err), nil
	case "dns":
		i := strings.LastIndex(rest, ":")
		if i < 0 {
			return "", "", fmt.Errorf("%q: want dns:IP:PORT:NAME", arg)
		}
		server, name := rest[:i], rest[i+1:]
		return dnsQuery(server, name)
	case "http":
		proxy, target, ok := strings.Cut(rest, ":http")
		if !ok {
			return "", "", fmt.Errorf("%q: want http:PROXY:URL", arg)
		}
		pu := &url.URL{Scheme: "http", Host: proxy}
		hc := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu)}, Timeout: deadline,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := hc.Get("http" + target)
		if err != nil {
			return "blocked", errWord(err), nil
		}
		resp.Body.Close()
		code := resp.Header.Get("Checkfu-Refusal")
		if code == "" {
			code = "-"
		}
		return "reached", fmt.Sprintf("%d %s", resp.StatusCode, code), nil
	}
	return "", "", fmt.Errorf("%q: unknown check", arg)
}

func dnsQuery(server, name string) (string, string, error) {
	n, err := dnsmessage.NewName(strings.TrimSuffix(name, ".") + ".")
	if err != nil {
		return "", "", err
	}
	msg := dnsmessage.Message{Header: dnsmessage.Header{ID: 0x4346, RecursionDesired: true},
		Questions: []dnsmessage.Question{{Name: n, Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET}}}
	q, err := msg.Pack()
	if err != nil {
		return "", "", err
	}
	c, err := net.Dial("udp", server)
	if err != nil {
		return "blocked", errWord(err), nil
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(deadline))
	if _, err := c.Write(q); err != nil {
		return "blocked", errWord(err), nil
	}
	buf := make([]byte, 1500)
	k, err := c.Read(buf)
	if err != nil {
		return "blocked", errWord(err), nil
	}
	var ans dnsmessage.Message
	if err := ans.Unpack(buf[:k]); err != nil {
		return "reached", "unparsable", nil
	}
	return "reached", ans.Header.RCode.String(), nil
}

// errWord names an error by its kind, in one word.
func errWord(err error) string {
	if err == nil {
		return ""
	}
	s := err.Error()
	for _, w := range []string{"timeout", "i/o timeout", "refused", "no route", "unreachable", "deadline"} {
		if strings.Contains(s, w) {
			return strings.ReplaceAll(w, " ", "_")
		}
	}
	return strings.ReplaceAll(s, " ", "_")
}
