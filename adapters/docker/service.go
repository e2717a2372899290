package docker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"sort"
	"time"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/adapters/docker/internal/engine"
)

// Where a [ServiceSpec] attaches its container.
const (
	// ServiceOuter attaches a service to the topology's outer network, at
	// ServiceSpec.IP: where the guard reaches destinations.
	ServiceOuter = "outer"
	// ServiceGuardNetns runs a service in the guard's own network
	// namespace (--network container:GUARD): a listener on the guard's
	// loopback.
	ServiceGuardNetns = "guard-netns"
)

// ServiceSpec is one long-running helper container of a topology, such as
// an owned DNS server or a live listener a conformance matrix observes.
type ServiceSpec struct {
	// Name is the container's name suffix: the container is named
	// checkfu-SLOT-NAME. Required.
	Name string
	// Image is an image already in the engine (nothing is pulled).
	// Required.
	Image string
	// Cmd is the command, run with an empty entrypoint. Required.
	Cmd []string
	// Network is ServiceOuter or ServiceGuardNetns.
	Network string
	// IP is the service's address on the outer network (ServiceOuter
	// only); it must lie inside [Allowlist.Outer] and not be one of the
	// topology's own addresses (.1 and .2).
	IP netip.Addr
	// Ready, when set, is a line the service logs once it serves;
	// StartService waits for it.
	Ready string
	// DNS is the upstream of the service's embedded DNS (127.0.0.11);
	// empty means the engine's (the daemon's --dns). A conformance
	// matrix sets its owned DNS here for a control whose forwarded
	// questions it must see.
	DNS []netip.Addr
}

// A Service is a running helper container of an [Allowlist]. It runs with
// all capabilities dropped but NET_BIND_SERVICE, no-new-privileges, a
// read-only root and a non-root user, and is removed by [Service.Close]
// or, at the latest, by the topology's Close.
type Service struct {
	e  *Engine
	id string
}

// StartService creates and starts a helper container on the topology and
// waits until it logs spec.Ready.
func (a *Allowlist) StartService(ctx context.Context, spec ServiceSpec) (_ *Service, err error) {
	if spec.Name == "" || spec.Image == "" || len(spec.Cmd) == 0 {
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "docker: a service needs a name, an image and a command")
	}
	pids := int64(64)
	hc := engine.HostConfig{
		Memory: 64 << 20, MemorySwap: 64 << 20, PidsLimit: &pids,
		ReadonlyRootfs: true, CapDrop: []string{"ALL"}, CapAdd: []string{"NET_BIND_SERVICE"}, SecurityOpt: []string{"no-new-privileges"},
	}
	for _, d := range spec.DNS {
		hc.Dns = append(hc.Dns, d.String())
	}
	var nc *engine.NetworkingConfig
	switch spec.Network {
	case ServiceOuter:
		if !a.outer.Contains(spec.IP) || spec.IP == a.addr(a.outer, 1) || spec.IP == a.addr(a.outer, 2) {
			return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "docker: service address %s is not a free address of %s", spec.IP, a.outer)
		}
		hc.NetworkMode = a.outerName
		nc = &engine.NetworkingConfig{EndpointsConfig: map[string]*engine.EndpointConfig{
			a.outerName: {IPAMConfig: &engine.IPAMConfig{IPv4Address: spec.IP.String()}},
		}}
	case ServiceGuardNetns:
		hc.NetworkMode = "container:" + a.guard
	default:
		return nil, checkfu.Refuse(checkfu.CodeConfigInvalid, "docker: service network %s is not %q or %q", checkfu.Quote(spec.Network), ServiceOuter, ServiceGuardNetns)
	}
	id, err := a.e.c.CreateContainer(ctx, fmt.Sprintf("checkfu-%d-%s", a.slot, spec.Name), &engine.ContainerConfig{
		Image: spec.Image, Cmd: spec.Cmd, Entrypoint: []string{}, User: DefaultUser,
		Labels:     a.e.labels(map[string]string{"checkfu.network": a.innerID, "checkfu.role": "service"}),
		HostConfig: hc, NetworkingConfig: nc,
	})
	if err != nil {
		return nil, err
	}
	s := &Service{e: a.e, id: id}
	defer func() {
		if err != nil {
			cctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			s.Close(cctx)
			cancel()
		}
	}()
	if err := a.e.c.StartContainer(ctx, id); err != nil {
		return nil, err
	}
	if spec.Ready != "" {
		if err := a.e.waitLog(ctx, id, spec.Ready, 10*time.Second); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// ID returns the service's container ID.
func (s *Service) ID() string { return s.id }

// Logs returns what the service has written to stdout and stderr so far.
func (s *Service) Logs(ctx context.Context) (string, error) { return s.e.logs(ctx, s.id) }

// Close removes the service's container. It is idempotent.
func (s *Service) Close(ctx context.Context) error {
	err := s.e.c.RemoveContainer(ctx, s.id, true)
	if errors.Is(err, CodeEngineObjectMissing) {
		return nil
	}
	return err
}

// GuardID returns the guard's container ID.
func (a *Allowlist) GuardID() string { return a.guard }

// A Mount is one mount of a container, as the engine reports it.
type Mount struct {
	Type        string // "bind", "volume", "tmpfs"
	Source      string // the host path, for a bind
	Destination string // the path inside the container
	RW          bool
}

// A ContainerView is what the engine reports of a container's
// environment: what its processes were given, as the Runner compiled it.
type ContainerView struct {
	ID          string
	Image       string
	User        string
	Env         []string
	Entrypoint  []string
	Cmd         []string
	Mounts      []Mount           // sorted by destination
	NetworkMode string            // the HostConfig's network mode
	Networks    map[string]string // network name -> IPv4 address
}

// Inspect returns what the engine reports of container id's environment,
// command line, mounts and networks.
func (e *Engine) Inspect(ctx context.Context, id string) (ContainerView, error) {
	info, err := e.c.InspectContainer(ctx, id)
	if err != nil {
		return ContainerView{}, err
	}
	v := ContainerView{
		ID: info.ID, Image: info.Image, User: info.Config.User,
		Env: slices.Clone(info.Config.Env), Entrypoint: slices.Clone(info.Config.Entrypoint), Cmd: slices.Clone(info.Config.Cmd),
		NetworkMode: info.HostConfig.NetworkMode, Networks: map[string]string{},
	}
	for _, m := range info.Mounts {
		v.Mounts = append(v.Mounts, Mount{Type: m.Type, Source: m.Source, Destination: m.Destination, RW: m.RW})
	}
	sort.Slice(v.Mounts, func(i, j int) bool { return v.Mounts[i].Destination < v.Mounts[j].Destination })
	for n, s := range info.NetworkSettings.Networks {
		v.Networks[n] = s.IPAddress
	}
	return v, nil
}

// CopyFrom returns a tar of path in container id's file system (the
// engine's GET /containers/{id}/archive). The caller closes it.
func (e *Engine) CopyFrom(ctx context.Context, id, path string) (io.ReadCloser, error) {
	return e.c.GetArchive(ctx, id, path)
}
