package engine

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"sort"
)

// ContainerConfig is the body of POST /containers/create: the members of
// the Engine API's container config and host config that the adapter
// sets.
type ContainerConfig struct {
	Image        string
	Cmd          []string          `json:",omitempty"`
	Entrypoint   []string          `json:",omitempty"`
	Env          []string          `json:",omitempty"`
	User         string            `json:",omitempty"`
	WorkingDir   string            `json:",omitempty"`
	Labels       map[string]string `json:",omitempty"`
	AttachStdin  bool
	AttachStdout bool
	AttachStderr bool
	OpenStdin    bool
	StdinOnce    bool
	Tty          bool
	// NetworkDisabled is left false: NetworkMode none is the policy.
	HostConfig       HostConfig
	NetworkingConfig *NetworkingConfig `json:",omitempty"`
}

// HostConfig is the isolation part of a container's configuration.
type HostConfig struct {
	NetworkMode    string            `json:",omitempty"`
	Runtime        string            `json:",omitempty"`
	IpcMode        string            `json:",omitempty"`
	Memory         int64             `json:",omitempty"`
	MemorySwap     int64             `json:",omitempty"`
	NanoCpus       int64             `json:",omitempty"`
	PidsLimit      *int64            `json:",omitempty"`
	ReadonlyRootfs bool              `json:",omitempty"`
	CapDrop        []string          `json:",omitempty"`
	CapAdd         []string          `json:",omitempty"`
	SecurityOpt    []string          `json:",omitempty"`
	Tmpfs          map[string]string `json:",omitempty"`
	Binds          []string          `json:",omitempty"`
	Init           *bool             `json:",omitempty"`
	AutoRemove     bool              `json:",omitempty"`
	LogConfig      *LogConfig        `json:",omitempty"`
	Dns            []string          `json:",omitempty"`
}

// LogConfig picks a container's log driver; Type "none" keeps no log.
type LogConfig struct {
	Type string
}

// NetworkingConfig attaches a container to networks at create.
type NetworkingConfig struct {
	EndpointsConfig map[string]*EndpointConfig
}

// EndpointConfig is one network attachment, with a fixed address.
type EndpointConfig struct {
	IPAMConfig *IPAMConfig `json:",omitempty"`
}

// IPAMConfig fixes an endpoint's address.
type IPAMConfig struct {
	IPv4Address string `json:",omitempty"`
}

// ContainerJSON is the part of GET /containers/{id}/json the adapter reads.
type ContainerJSON struct {
	ID    string `json:"Id"`
	Image string
	State struct {
		Status    string
		Running   bool
		OOMKilled bool
		ExitCode  int
		Pid       int
	}
	Config struct {
		User       string
		Labels     map[string]string
		Env        []string
		Cmd        []string
		Entrypoint []string
	}
	// Mounts are the container's volume and bind mounts (a HostConfig
	// tmpfs is not among them).
	Mounts []struct {
		Type        string
		Source      string
		Destination string
		RW          bool
	}
	HostConfig struct {
		NetworkMode    string
		Runtime        string
		PidMode        string
		IpcMode        string
		Privileged     bool
		Binds          []string
		Mounts         []struct{ Target string }
		Memory         int64
		MemorySwap     int64
		NanoCpus       int64
		PidsLimit      *int64
		ReadonlyRootfs bool
		CapDrop        []string
		CapAdd         []string
		SecurityOpt    []string
		Tmpfs          map[string]string
		LogConfig      LogConfig
		Dns            []string
	}
	NetworkSettings struct {
		Networks map[string]struct {
			IPAddress string
			Gateway   string
		}
	}
}

// CreateContainer creates a container named name (empty: the engine picks
// one) and returns its ID. A missing image is refused with
// CodeImageMissing: create never pulls.
func (c *Client) CreateContainer(ctx context.Context, name string, cfg *ContainerConfig) (string, error) {
	q := url.Values{}
	if name != "" {
		q.Set("name", name)
	}
	var out struct {
		ID string `json:"Id"`
	}
	if err := c.do(ctx, http.MethodPost, "/containers/create", q, cfg, &out); err != nil {
		return "", err
	}
	if out.ID == "" {
		return "", errorf("containers/create answered no ID")
	}
	return out.ID, nil
}

// InspectContainer returns what the engine reports of a container.
func (c *Client) InspectContainer(ctx context.Context, id string) (*ContainerJSON, error) {
	var out ContainerJSON
	if err := c.do(ctx, http.MethodGet, "/containers/"+url.PathEscape(id)+"/json", nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// StartContainer starts a created container.
func (c *Client) StartContainer(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodPost, "/containers/"+url.PathEscape(id)+"/start", nil, nil, nil)
}

// KillContainer sends signal (such as "KILL") to a container's main
// process.
func (c *Client) KillContainer(ctx context.Context, id, signal string) error {
	return c.do(ctx, http.MethodPost, "/containers/"+url.PathEscape(id)+"/kill", url.Values{"signal": {signal}}, nil, nil)
}

// RemoveContainer removes a container, killing it first when force is
// set, with its anonymous volumes.
func (c *Client) RemoveContainer(ctx context.Context, id string, force bool) error {
	q := url.Values{"v": {"1"}}
	if force {
		q.Set("force", "1")
	}
	return c.do(ctx, http.MethodDelete, "/containers/"+url.PathEscape(id), q, nil, nil)
}

// A Waiter holds a registered POST /containers/{id}/wait.
type Waiter struct {
	req  *http.Request
	body io.ReadCloser
}

// WaitNextExit registers a wait for the container's next exit and returns
// once the engine has registered it (it flushes the answer's head at
// once), so a start after it cannot be missed. Wait on the Waiter reads
// the exit status.
func (c *Client) WaitNextExit(ctx context.Context, id string) (*Waiter, error) {
	req, err := c.request(ctx, http.MethodPost, "/containers/"+url.PathEscape(id)+"/wait", url.Values{"condition": {"next-exit"}}, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.send(req)
	if err != nil {
		return nil, err
	}
	return &Waiter{req: req, body: resp.Body}, nil
}

// Wait reads the exit status the engine reports.
func (w *Waiter) Wait() (int, error) {
	defer w.body.Close()
	var out struct {
		StatusCode int
		Error      *struct{ Message string }
	}
	if err := decode(w.req, w.body, &out); err != nil {
		return -1, err
	}
	if out.Error != nil && out.Error.Message != "" {
		return -1, errorf("waiting: %s", out.Error.Message)
	}
	return out.StatusCode, nil
}

// Close abandons the wait.
func (w *Waiter) Close() error { return w.body.Close() }

// Logs returns a container's multiplexed stdout and stderr as written so
// far (follow=false). Demultiplex it with Demux.
func (c *Client) Logs(ctx context.Context, id string) (io.ReadCloser, error) {
	req, err := c.request(ctx, http.MethodGet, "/containers/"+url.PathEscape(id)+"/logs", url.Values{"stdout": {"1"}, "stderr": {"1"}}, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.send(req)
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// Attach attaches to a created container's stdin, stdout and stderr
// before it starts, so no output is lost. The stream is multiplexed when
// the container has no TTY.
func (c *Client) Attach(ctx context.Context, id string) (*Stream, error) {
	q := url.Values{"stream": {"1"}, "stdin": {"1"}, "stdout": {"1"}, "stderr": {"1"}}
	conn, br, err := c.hijack(ctx, http.MethodPost, "/containers/"+url.PathEscape(id)+"/attach", q, nil)
	if err != nil {
		return nil, err
	}
	return &Stream{conn: conn, r: br}, nil
}

// ExecConfig is the body of POST /containers/{id}/exec.
type ExecConfig struct {
	Cmd          []string
	Env          []string `json:",omitempty"`
	User         string   `json:",omitempty"`
	AttachStdin  bool
	AttachStdout bool
	AttachStderr bool
	Tty          bool
}

// CreateExec creates an exec in a running container and returns its ID.
func (c *Client) CreateExec(ctx context.Context, container string, cfg *ExecConfig) (string, error) {
	var out struct {
		ID string `json:"Id"`
	}
	if err := c.do(ctx, http.MethodPost, "/containers/"+url.PathEscape(container)+"/exec", nil, cfg, &out); err != nil {
		return "", err
	}
	return out.ID, nil
}

// StartExec starts an exec and returns its hijacked stream.
func (c *Client) StartExec(ctx context.Context, id string) (*Stream, error) {
	conn, br, err := c.hijack(ctx, http.MethodPost, "/exec/"+url.PathEscape(id)+"/start", nil, map[string]bool{"Detach": false, "Tty": false})
	if err != nil {
		return nil, err
	}
	return &Stream{conn: conn, r: br}, nil
}

// ExecExitCode returns an exec's exit code and whether it still runs.
func (c *Client) ExecExitCode(ctx context.Context, id string) (code int, running bool, err error) {
	var out struct {
		Running  bool
		ExitCode int
	}
	if err := c.do(ctx, http.MethodGet, "/exec/"+url.PathEscape(id)+"/json", nil, nil, &out); err != nil {
		return -1, false, err
	}
	return out.ExitCode, out.Running, nil
}

// NetworkConfig is the body of POST /networks/create.
type NetworkConfig struct {
	Name           string
	CheckDuplicate bool
	Driver         string
	Internal       bool
	IPAM           NetworkIPAM
	Options        map[string]string `json:",omitempty"`
	Labels         map[string]string `json:",omitempty"`
}

// NetworkIPAM holds a network's address blocks.
type NetworkIPAM struct {
	Config []NetworkSubnet
}

// NetworkSubnet is one address block of a network.
type NetworkSubnet struct {
	Subnet  string
	Gateway string `json:",omitempty"`
}

// CreateNetwork creates a network and returns its ID.
func (c *Client) CreateNetwork(ctx context.Context, cfg *NetworkConfig) (string, error) {
	var out struct {
		ID string `json:"Id"`
	}
	if err := c.do(ctx, http.MethodPost, "/networks/create", nil, cfg, &out); err != nil {
		return "", err
	}
	return out.ID, nil
}

// ConnectNetwork attaches a container to a network at a fixed address.
func (c *Client) ConnectNetwork(ctx context.Context, network, container, ipv4 string) error {
	body := map[string]any{"Container": container, "EndpointConfig": EndpointConfig{IPAMConfig: &IPAMConfig{IPv4Address: ipv4}}}
	return c.do(ctx, http.MethodPost, "/networks/"+url.PathEscape(network)+"/connect", nil, body, nil)
}

// RemoveNetwork removes a network.
func (c *Client) RemoveNetwork(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "/networks/"+url.PathEscape(id), nil, nil, nil)
}

// ImportImage imports a root filesystem tar as the image ref (such as
// "checkfu-busybox:1a2b"), applying changes (Dockerfile instructions such
// as `CMD ["/bin/sh"]` or `LABEL checkfu.test=1`), and returns nil once
// the engine has stored it.
func (c *Client) ImportImage(ctx context.Context, ref string, tar io.Reader, changes []string) error {
	repo, tag := ref, "latest"
	if i := lastColon(ref); i >= 0 {
		repo, tag = ref[:i], ref[i+1:]
	}
	q := url.Values{"fromSrc": {"-"}, "repo": {repo}, "tag": {tag}}
	for _, ch := range changes {
		q.Add("changes", ch)
	}
	req, err := c.request(ctx, http.MethodPost, "/images/create", q, tar)
	if err != nil {
		return err
	}
	resp, err := c.send(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	// The answer is a stream of JSON progress objects; an error arrives
	// as one with "error" set, after a 200.
	dec := json.NewDecoder(io.LimitReader(resp.Body, maxBody))
	for {
		var m struct {
			Error string `json:"error"`
		}
		if err := dec.Decode(&m); err == io.EOF {
			break
		} else if err != nil {
			return errorf("images/create: reading progress: %v", err)
		}
		if m.Error != "" {
			return errorf("images/create: %s", m.Error)
		}
	}
	_, err = c.InspectImage(ctx, ref)
	return err
}

func lastColon(ref string) int {
	for i := len(ref) - 1; i >= 0; i-- {
		switch ref[i] {
		case ':':
			return i
		case '/':
			return -1
		}
	}
	return -1
}

// ImageJSON is the part of GET /images/{name}/json the adapter reads.
type ImageJSON struct {
	ID           string `json:"Id"`
	Os           string
	Architecture string
	Config       struct {
		Labels map[string]string
	}
}

// InspectImage returns the image ref names, or a Refusal with
// CodeImageMissing.
func (c *Client) InspectImage(ctx context.Context, ref string) (*ImageJSON, error) {
	var out ImageJSON
	err := c.do(ctx, http.MethodGet, "/images/"+ref+"/json", nil, nil, &out)
	if isCode(err, CodeEngineObjectMissing) {
		return nil, retag(err, CodeImageMissing)
	}
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// RemoveImage removes an image.
func (c *Client) RemoveImage(ctx context.Context, ref string) error {
	return c.do(ctx, http.MethodDelete, "/images/"+ref, url.Values{"force": {"1"}}, nil, nil)
}

// PutArchive extracts a tar into a container's filesystem at dir.
func (c *Client) PutArchive(ctx context.Context, id, dir string, tar io.Reader) error {
	req, err := c.request(ctx, http.MethodPut, "/containers/"+url.PathEscape(id)+"/archive", url.Values{"path": {dir}}, tar)
	if err != nil {
		return err
	}
	resp, err := c.send(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

// GetArchive returns a tar of path in a container's filesystem.
func (c *Client) GetArchive(ctx context.Context, id, path string) (io.ReadCloser, error) {
	req, err := c.request(ctx, http.MethodGet, "/containers/"+url.PathEscape(id)+"/archive", url.Values{"path": {path}}, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.send(req)
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// ListByLabel returns the IDs of containers (all, running or not) that
// carry label key=value.
func (c *Client) ListByLabel(ctx context.Context, key, value string) ([]string, error) {
	f, _ := json.Marshal(map[string][]string{"label": {key + "=" + value}})
	var out []struct {
		ID string `json:"Id"`
	}
	if err := c.do(ctx, http.MethodGet, "/containers/json", url.Values{"all": {"1"}, "filters": {string(f)}}, nil, &out); err != nil {
		return nil, err
	}
	ids := make([]string, len(out))
	for i, o := range out {
		ids[i] = o.ID
	}
	return ids, nil
}

// ListImagesByLabel returns the repository tags of the images that
// carry label key=value (an image without a tag contributes its ID).
func (c *Client) ListImagesByLabel(ctx context.Context, key, value string) ([]string, error) {
	f, _ := json.Marshal(map[string][]string{"label": {key + "=" + value}})
	var out []struct {
		ID       string `json:"Id"`
		RepoTags []string
	}
	if err := c.do(ctx, http.MethodGet, "/images/json", url.Values{"filters": {string(f)}}, nil, &out); err != nil {
		return nil, err
	}
	var refs []string
	for _, o := range out {
		tagged := false
		for _, t := range o.RepoTags {
			if t != "<none>:<none>" {
				refs = append(refs, t)
				tagged = true
			}
		}
		if !tagged {
			refs = append(refs, o.ID)
		}
	}
	return refs, nil
}

// NetworkJSON is the part of GET /networks/{id} the adapter reads.
type NetworkJSON struct {
	ID       string `json:"Id"`
	Name     string
	Internal bool
	Options  map[string]string
}

// InspectNetwork returns what the engine reports of a network.
func (c *Client) InspectNetwork(ctx context.Context, id string) (*NetworkJSON, error) {
	var out NetworkJSON
	if err := c.do(ctx, http.MethodGet, "/networks/"+url.PathEscape(id), nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Runtimes returns the names of the OCI runtimes the engine has
// registered (GET /info), such as "runc" and "runsc".
func (c *Client) Runtimes(ctx context.Context) ([]string, error) {
	var out struct {
		Runtimes map[string]json.RawMessage
	}
	if err := c.do(ctx, http.MethodGet, "/info", nil, nil, &out); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(out.Runtimes))
	for n := range out.Runtimes {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}
