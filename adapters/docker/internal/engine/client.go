// Package engine is a small Docker Engine API client over the engine's
// Unix socket, written with the standard library only.
//
// Invariants:
//
//   - It finds the engine as the docker CLI does: DOCKER_HOST when it is a
//     unix:// address, otherwise /var/run/docker.sock. Any other DOCKER_HOST
//     scheme is refused, never silently replaced.
//   - It negotiates the API version from GET /_ping: the lower of the
//     engine's and [MaxVersion], refused below [MinVersion] (1.41,
//     Docker 20.10).
//   - It never pulls. Creating a container from a missing image is refused
//     with [CodeImageMissing]; no call here fetches from a registry.
//   - Every engine error is a *checkfu.Refusal with a code of this package;
//     the engine's message is quoted with checkfu.Quote.
//   - Engine JSON is checked with strictjson.Valid (no duplicate members,
//     valid UTF-8, bounded depth and size, nothing trailing) before it is
//     decoded; unknown members are allowed, because the Engine API adds
//     members from version to version.
package engine

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/internal/strictjson"
)

// API versions the client speaks.
const (
	// MinVersion is the oldest Engine API accepted: Docker 20.10's.
	MinVersion = "1.41"
	// MaxVersion is the newest Engine API the client asks for.
	MaxVersion = "1.47"
)

// DefaultSocket is where the engine listens when DOCKER_HOST is unset.
const DefaultSocket = "/var/run/docker.sock"

// maxBody bounds every JSON answer read from the engine.
const maxBody = 8 << 20

// jsonOpts is the structural check applied to every engine answer.
var jsonOpts = strictjson.Options{MaxDepth: 32, MaxBytes: maxBody}

// SocketFromEnv returns the engine's socket path: DOCKER_HOST's path when
// it is unix://PATH, DefaultSocket when DOCKER_HOST is empty. Another
// scheme is refused with checkfu.CodeConfigInvalid.
func SocketFromEnv() (string, error) {
	h := os.Getenv("DOCKER_HOST")
	if h == "" {
		return DefaultSocket, nil
	}
	path, ok := strings.CutPrefix(h, "unix://")
	if !ok || path == "" {
		return "", checkfu.Refuse(checkfu.CodeConfigInvalid, "docker: DOCKER_HOST %s is not unix://PATH; only a local engine socket is supported", checkfu.Quote(h))
	}
	return path, nil
}

// A Client talks to one engine. Its methods are safe for concurrent use.
type Client struct {
	socket  string
	version string // negotiated, such as "1.41"
	engine  string // the engine's own version, such as "20.10.24+dfsg1"
	hc      *http.Client
}

// Dial pings the engine at socket and negotiates the API version.
func Dial(ctx context.Context, socket string) (*Client, error) {
	c := &Client{socket: socket}
	c.hc = &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return c.dial(ctx)
		},
		MaxIdleConns:    8,
		IdleConnTimeout: 30 * time.Second,
	}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://docker/_ping", nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, &checkfu.Refusal{Code: CodeEngineUnreachable, Message: "docker: no engine answers at " + checkfu.Quote(socket), Err: err}
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1024))
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, checkfu.Refuse(CodeEngineUnreachable, "docker: engine at %s answered /_ping with %d", checkfu.Quote(socket), resp.StatusCode)
	}
	server := resp.Header.Get("Api-Version")
	if server == "" {
		return nil, checkfu.Refuse(CodeEngineVersionUnsupported, "docker: engine at %s names no API version", checkfu.Quote(socket))
	}
	if versionLess(server, MinVersion) {
		return nil, checkfu.Refuse(CodeEngineVersionUnsupported, "docker: engine API %s is older than %s", checkfu.Quote(server), MinVersion)
	}
	c.version = MaxVersion
	if versionLess(server, MaxVersion) {
		c.version = server
	}
	var v struct{ Version string }
	if err := c.do(ctx, http.MethodGet, "/version", nil, nil, &v); err != nil {
		return nil, err
	}
	c.engine = v.Version
	return c, nil
}

// FromEnv dials the engine SocketFromEnv names.
func FromEnv(ctx context.Context) (*Client, error) {
	s, err := SocketFromEnv()
	if err != nil {
		return nil, err
	}
	return Dial(ctx, s)
}

// APIVersion returns the negotiated API version, such as "1.41".
func (c *Client) APIVersion() string { return c.version }

// EngineVersion returns the engine's own version, such as "20.10.24".
func (c *Client) EngineVersion() string { return c.engine }

// Socket returns the path of the engine's socket.
func (c *Client) Socket() string { return c.socket }

// Close releases idle connections.
func (c *Client) Close() { c.hc.CloseIdleConnections() }

func (c *Client) dial(ctx context.Context) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, "unix", c.socket)
}

// versionLess reports whether API version a is older than b ("1.41" <
// "1.47"); a malformed version is older than everything.
func versionLess(a, b string) bool {
	am, an, ok1 := splitVersion(a)
	bm, bn, ok2 := splitVersion(b)
	if !ok1 {
		return true
	}
	if !ok2 {
		return false
	}
	return am < bm || am == bm && an < bn
}

func splitVersion(v string) (int, int, bool) {
	maj, min, ok := strings.Cut(v, ".")
	if !ok {
		return 0, 0, false
	}
	a, err1 := strconv.Atoi(maj)
	b, err2 := strconv.Atoi(min)
	return a, b, err1 == nil && err2 == nil && a >= 0 && b >= 0
}

// path returns the versioned path of an API endpoint.
func (c *Client) path(p string, q url.Values) string {
	s := "/v" + c.version + p
	if len(q) > 0 {
		s += "?" + q.Encode()
	}
	return s
}

// request builds a request for an API endpoint. body, when not nil, is
// JSON-encoded unless it is an io.Reader.
func (c *Client) request(ctx context.Context, method, p string, q url.Values, body any) (*http.Request, error) {
	var r io.Reader
	ctype := ""
	switch b := body.(type) {
	case nil:
	case io.Reader:
		r, ctype = b, "application/x-tar"
	default:
		buf, err := json.Marshal(b)
		if err != nil {
			return nil, err
		}
		r, ctype = bytes.NewReader(buf), "application/json"
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://docker"+c.path(p, q), r)
	if err != nil {
		return nil, err
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	return req, nil
}

// send sends a request and returns the response when its status is 2xx;
// otherwise it returns the engine's error as a Refusal.
func (c *Client) send(req *http.Request) (*http.Response, error) {
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctxErr := req.Context().Err(); ctxErr != nil {
			return nil, ctxErr
		}
		return nil, &checkfu.Refusal{Code: CodeEngineUnreachable, Message: "docker: " + req.Method + " " + req.URL.Path, Err: err}
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	return nil, apiError(req, resp)
}

// apiError turns an engine error answer, {"message": "..."}, into a
// Refusal whose code depends on the status and the endpoint.
func apiError(req *http.Request, resp *http.Response) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var m struct {
		Message string `json:"message"`
	}
	if strictjson.Valid(body, jsonOpts) == nil {
		json.Unmarshal(body, &m)
	}
	if m.Message == "" {
		m.Message = strings.TrimSpace(string(body))
	}
	code := CodeEngineRequestFailed
	switch resp.StatusCode {
	case http.StatusNotFound:
		code = CodeEngineObjectMissing
		if strings.HasSuffix(req.URL.Path, "/containers/create") {
			code = CodeImageMissing
		}
	case http.StatusConflict:
		code = CodeEngineNameConflict
	case http.StatusForbidden:
		// networks/create: "Pool overlaps with other one on this address
		// space", an address conflict.
		if strings.Contains(m.Message, "overlaps") {
			code = CodeEngineNameConflict
		}
	}
	return checkfu.Refuse(code, "docker: %s %s: engine answered %d: %s", req.Method, endpoint(req.URL.Path), resp.StatusCode, checkfu.Quote(m.Message))
}

// endpoint strips the version prefix from an API path for error text.
func endpoint(p string) string {
	if rest, ok := strings.CutPrefix(p, "/v"); ok {
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			return rest[i:]
		}
	}
	return p
}

// do sends a request and decodes a JSON answer into out (when not nil).
func (c *Client) do(ctx context.Context, method, p string, q url.Values, body, out any) error {
	req, err := c.request(ctx, method, p, q, body)
	if err != nil {
		return err
	}
	resp, err := c.send(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return decode(req, resp.Body, out)
}

// decode reads one JSON answer into out (discarding it when out is nil).
func decode(req *http.Request, r io.Reader, out any) error {
	data, err := io.ReadAll(io.LimitReader(r, maxBody+1))
	if err != nil {
		return &checkfu.Refusal{Code: CodeEngineRequestFailed, Message: "docker: reading the answer to " + endpoint(req.URL.Path), Err: err}
	}
	if out == nil {
		return nil
	}
	if err := strictjson.Valid(data, jsonOpts); err != nil {
		return &checkfu.Refusal{Code: CodeEngineRequestFailed, Message: "docker: the answer to " + endpoint(req.URL.Path) + " is not valid JSON", Err: err}
	}
	if err := json.Unmarshal(data, out); err != nil {
		return &checkfu.Refusal{Code: CodeEngineRequestFailed, Message: "docker: the answer to " + endpoint(req.URL.Path) + " has an unexpected shape", Err: err}
	}
	return nil
}

// hijack sends a request on a fresh connection with Connection: Upgrade
// and returns the connection and the reader holding the raw stream that
// follows the answer's head. The reader must be kept: it may already hold
// stream bytes.
func (c *Client) hijack(ctx context.Context, method, p string, q url.Values, body any) (*net.UnixConn, *bufio.Reader, error) {
	req, err := c.request(ctx, method, p, q, body)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "tcp")
	conn, err := c.dial(ctx)
	if err != nil {
		return nil, nil, &checkfu.Refusal{Code: CodeEngineUnreachable, Message: "docker: " + method + " " + endpoint(req.URL.Path), Err: err}
	}
	uc, ok := conn.(*net.UnixConn)
	if !ok {
		conn.Close()
		return nil, nil, errors.New("docker: engine connection is not a unix socket")
	}
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if err := req.Write(conn); err != nil {
		conn.Close()
		return nil, nil, &checkfu.Refusal{Code: CodeEngineUnreachable, Message: "docker: " + method + " " + endpoint(req.URL.Path), Err: err}
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		conn.Close()
		return nil, nil, &checkfu.Refusal{Code: CodeEngineRequestFailed, Message: "docker: reading the answer to " + endpoint(req.URL.Path), Err: err}
	}
	if resp.StatusCode != http.StatusSwitchingProtocols && resp.StatusCode != http.StatusOK {
		err := apiError(req, resp)
		conn.Close()
		return nil, nil, err
	}
	if ctx.Err() != nil {
		conn.Close()
		return nil, nil, ctx.Err()
	}
	return uc, br, nil
}

// errorf returns a Refusal with CodeEngineRequestFailed.
func errorf(format string, args ...any) error {
	return checkfu.Refuse(CodeEngineRequestFailed, "docker: "+format, args...)
}
