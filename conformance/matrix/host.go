package matrix

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"sync"
	"time"
)

// hostListener is a live TCP and UDP listener on every address of the
// host (0.0.0.0), on one port, recording where each contact came from.
type hostListener struct {
	port int
	tcp  net.Listener
	udp  net.PacketConn

	mu   sync.Mutex
	seen []string // guarded by mu; "tcp FROM" / "udp FROM"
}

func listenHost() (*hostListener, error) {
	var last error
	for i := 0; i < 20; i++ {
		ln, err := net.Listen("tcp4", "0.0.0.0:0")
		if err != nil {
			return nil, err
		}
		pc, err := net.ListenPacket("udp4", ln.Addr().String())
		if err != nil {
			ln.Close()
			last = err
			continue
		}
		h := &hostListener{port: ln.Addr().(*net.TCPAddr).Port, tcp: ln, udp: pc}
		go h.serveTCP()
		go h.serveUDP()
		return h, nil
	}
	return nil, last
}

func (h *hostListener) serveTCP() {
	for {
		c, err := h.tcp.Accept()
		if err != nil {
			return
		}
		h.note("tcp " + c.RemoteAddr().String())
		c.Close()
	}
}

func (h *hostListener) serveUDP() {
	buf := make([]byte, 1500)
	for {
		n, from, err := h.udp.ReadFrom(buf)
		if err != nil {
			return
		}
		h.note("udp " + from.String())
		h.udp.WriteTo(buf[:n], from)
	}
}

func (h *hostListener) note(s string) {
	h.mu.Lock()
	h.seen = append(h.seen, s)
	h.mu.Unlock()
}

func (h *hostListener) close() { h.tcp.Close(); h.udp.Close() }

// from returns the contacts from addresses starting with prefix.
func (h *hostListener) from(prefix string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := []string{}
	for _, s := range h.seen {
		if _, addr, _ := strings.Cut(s, " "); strings.HasPrefix(addr, prefix) {
			out = append(out, s)
		}
	}
	return out
}

// testRange is the only range the matrix sends to: RFC 2544's benchmark
// block, which every topology address lies in.
var testRange = netip.MustParsePrefix("198.18.0.0/15")

// hostAddrs returns the host's own IPv4 addresses inside testRange (every
// bridge gateway), plus the internal network's gateway address, which
// the topology leaves unassigned.
func (r *run) hostAddrs() []netip.Addr {
	out := []netip.Addr{r.at(r.inner, 1)}
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		p, err := netip.ParsePrefix(a.String())
		if err != nil {
			continue
		}
		if ip := p.Addr().Unmap(); ip.Is4() && testRange.Contains(ip) && ip != out[0] {
			out = append(out, ip)
		}
	}
	r.topo["host_addresses"] = out
	return out
}

// A scan is the search of a container's files for the canary.
type scan struct {
	Paths []string `json:"paths"`
	Files int      `json:"files"`
	Bytes int64    `json:"bytes"`
	Found []string `json:"found,omitempty"` // files holding the canary
	Err   string   `json:"err,omitempty"`
}

// maxScanFile bounds the bytes read of one file.
const maxScanFile = 64 << 20

// scanFiles reads the container's files under paths, through the engine,
// and the host files bind-mounted into it, and records which hold the
// canary.
func (r *run) scanFiles(ctx context.Context, id string, paths ...string) scan {
	sc := scan{Paths: paths}
	canary := []byte(r.cfg.PlaneCredential)
	look := func(name string, rd io.Reader) {
		b, err := io.ReadAll(io.LimitReader(rd, maxScanFile))
		if err != nil {
			sc.Err = err.Error()
			return
		}
		sc.Files++
		sc.Bytes += int64(len(b))
		if bytes.Contains(b, canary) {
			sc.Found = append(sc.Found, name)
		}
	}
	for _, p := range paths {
		rc, err := r.cfg.Engine.CopyFrom(ctx, id, p)
		if err != nil {
			sc.Err = err.Error()
			continue
		}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if err != nil {
				if err != io.EOF {
					sc.Err = err.Error()
				}
				break
			}
			if h.Typeflag == tar.TypeReg {
				look(h.Name, tr)
			}
		}
		rc.Close()
	}
	if v, err := r.cfg.Engine.Inspect(ctx, id); err == nil {
		for _, m := range v.Mounts {
			if m.Type != "bind" {
				continue
			}
			sc.Paths = append(sc.Paths, "host:"+m.Source)
			if f, err := os.Open(m.Source); err == nil {
				look("host:"+m.Source, f)
				f.Close()
			}
		}
	}
	return sc
}

// httpDirect GETs path from addr, from the host, with no proxy.
func httpDirect(ctx context.Context, addr, path string) Step {
	st := Step{Target: "http://" + addr + path}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, st.Target, nil)
	c := &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	resp, err := c.Do(req)
	if err != nil {
		st.Err = errWord(err)
		return st
	}
	resp.Body.Close()
	st.Status = resp.StatusCode
	return st
}
