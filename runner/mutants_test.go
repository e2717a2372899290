package runner_test

import (
	"testing"

	"github.com/checkfu/checkfu/internal/mutation"
)

// TestMutants proves each of the Runner's own checks is tested: every
// mutant deletes or inverts one, and a named test must go red.
func TestMutants(t *testing.T) { mutation.Run(t, mutants) }

var mutants = []mutation.Mutant{
	{Name: "a key file others may read is used", File: "keyfile.go",
		Edits: []mutation.Edit{{Old: `perm&0o077 != 0 {`, New: `perm&0o007 != 0 {`}},
		Kills: "TestKeyFileRefusals"},
	{Name: "a symlinked key file is followed", File: "keyfile.go",
		Edits: []mutation.Edit{{Old: `err == nil && !fi.Mode().IsRegular() {`, New: `err == nil && fi == nil {`}},
		Kills: "TestKeyFileRefusals"},
	{Name: "a key file is written readable by others", File: "keyfile.go",
		Edits: []mutation.Edit{{Old: `tmp.Chmod(0o600)`, New: `tmp.Chmod(0o644)`}},
		Kills: "TestKeyFileKeepsKeys"},
	{Name: "a key file is unwrapped without its header as associated data", File: "keyfile.go",
		Edits: []mutation.Edit{{Old: `kf.wrapper.Unwrap(ctx, wrapped, []byte(keyFileHeader))`, New: `kf.wrapper.Unwrap(ctx, wrapped, nil)`}},
		Kills: "TestKeyFileKeepsKeys"},
	{Name: "New starts over credentials its keys do not open", File: "keys.go",
		Edits: []mutation.Edit{{Old: `		_, err := native.CheckNamespace(ctx, ns)
`, New: `		var err error
`}},
		Kills: "TestRestartWithKeyFileOpensCredentials"},
	{Name: "a refused Open leaves no trace", File: "session.go",
		Edits: []mutation.Edit{{Old: "		return nil, r.refuseOpen(ctx, err)\n", New: "		return nil, err\n"}},
		Kills: "TestOpenRefusesForeignToken"},
	{Name: "the Runner's own events drop the tenant, workspace and project", File: "session.go",
		Edits: []mutation.Edit{{Old: `	ev.Role, ev.Tenant, ev.Workspace, ev.Project, ev.SessionID = s.rc.Role, s.rc.Tenant, s.rc.Workspace, s.rc.Project, s.rc.Session
`, New: ``}},
		Kills: "TestSessionWholePath"},
	{Name: "a host process's broker directory open to every user", File: "runner.go",
		Edits: []mutation.Edit{{Old: `if err := os.Chmod(root, 0o700); err != nil {`, New: `if err := os.Chmod(root, 0o755); err != nil {`}},
		Kills: "TestBrokerDirectoryPrivate"},
	{Name: "a mounted broker directory reachable by every local user", File: "runner.go",
		Edits: []mutation.Edit{{Old: "	return dir, root, nil\n", New: "	os.Chmod(root, 0o755)\n	return dir, root, nil\n"}},
		Kills: "TestBrokerMountedDirectoryPrivate"},
	{Name: "the broker serves before the evidence is checked", File: "launch.go",
		Edits: []mutation.Edit{
			{Old: `	s.plane.serve(ln)
`, New: ``},
			{Old: `	proc, err := s.instance.OpenProcess(ctx, ps)`, New: `	s.plane.serve(ln)
	proc, err := s.instance.OpenProcess(ctx, ps)`},
		},
		Kills: "TestUnmatchedProcessIsNeverServed"},
	{Name: "a mismatching process is spoken to", File: "launch.go",
		Edits: []mutation.Edit{{Old: `err != nil || !m.OK() {`, New: `err != nil {`}},
		Kills: "TestEvidenceMismatchRefused"},
	{Name: "launch without an admission", File: "launch.go",
		Edits: []mutation.Edit{{Old: `	if s.record == nil {`, New: `	if false {`}},
		Kills: "TestAdmitRefusalIsLogged"},
	{Name: "a refusal is logged as an allow", File: "session.go",
		Edits: []mutation.Edit{{Old: `		ev.Decision = eventlog.DecisionDeny
`, New: ``}},
		Kills: "TestAdmitRefusalIsLogged"},
	{Name: "a read-only tool can be approved", File: "approve.go",
		Edits: []mutation.Edit{{Old: `		case plan.Effect != authz.ExternalEffect:`, New: `		case false:`}},
		Kills: "TestPermissionUnbound"},
	{Name: "arguments the schema refuses are approved", File: "../custody/authz/capability.go",
		Edits: []mutation.Edit{{Old: "\tbody, err := validateArguments(reg, call.Arguments)\n\tif err != nil {\n\t\treturn Action{}, err\n\t}\n\treturn reg.action(body), nil\n}", New: "\tbody, _ := validateArguments(reg, call.Arguments)\n\treturn reg.action(body), nil\n}"}},
		Kills: "TestPermissionUnbound"},
	{Name: "a declined approval is answered allow", File: "approve.go",
		Edits: []mutation.Edit{{Old: `err != nil || !dec.Approve {`, New: `err != nil {`}},
		Kills: "TestApproverDeclines"},
	{Name: "no Approver allows", File: "approve.go",
		Edits: []mutation.Edit{{Old: `		err = checkfu.Refuse(authz.CodeApprovalDenied, "runner: no Approver is configured")`, New: `		return allow(req)`}},
		Kills: "TestNoApproverDeniesEffects"},
	{Name: "the Runner self-enrolls a remote provider", File: "runner.go",
		Edits: []mutation.Edit{{Old: `	if r.desc.Placement != admission.PlacementInProcess {`, New: `	if false {`}},
		Kills: "TestRemoteProviderNeedsEnrollment"},
	{Name: "a Description placed otherwise than its enrollment is accepted", File: "runner.go",
		Edits: []mutation.Edit{{Old: `	if d.Placement != e.Placement() {`, New: `	if false {`}},
		Kills: "TestMisdescribedProviderRefusedBeforeAnyInstance"},
	{Name: "a Description with another materialization revision is accepted", File: "runner.go",
		Edits: []mutation.Edit{{Old: `	if d.MaterializationRevision != st.MaterializationRevision {`, New: `	if false {`}},
		Kills: "TestMisdescribedProviderRefusedBeforeAnyInstance"},
	{Name: "a Description with another capability is accepted", File: "runner.go",
		Edits: []mutation.Edit{{Old: `err != nil || digest != st.CapabilityDigest {`, New: `err != nil || digest == "" {`}},
		Kills: "TestMisdescribedProviderRefusedBeforeAnyInstance"},
	{Name: "a remote placement gets a broker", File: "launch.go",
		Edits: []mutation.Edit{{Old: `	if s.plane == nil && r.catalog != nil && inProcess {`, New: `	if s.plane == nil && r.catalog != nil {`}},
		Kills: "TestRemotePlacementGetsNoBroker|TestRemotePlacementMakesNoCredentialedCall"},
	{Name: "placement taken from the Description", File: "runner.go",
		Edits: []mutation.Edit{{Old: `func (r *Runner) placement() admission.Placement { return r.enrollment.Placement() }`, New: `func (r *Runner) placement() admission.Placement { return r.desc.Placement }`}},
		Kills: "TestRemotePlacementGetsNoBroker|TestRemotePlacementMakesNoCredentialedCall|TestRemotePlacementNeverIsolationChecked"},
	{Name: "the evidence's placement taken from the Description", File: "runner.go",
		Edits: []mutation.Edit{{Old: "	h.Placement = r.placement()\n", New: ""}},
		Kills: "TestRemotePlacementNeverIsolationChecked"},
	{Name: "a wired instance enrolled in_process is used", File: "launch.go",
		Edits: []mutation.Edit{{Old: `err == nil && wired && inProcess {`, New: `false && err == nil && wired && inProcess {`}},
		Kills: "TestWiredInstanceEnrolledInProcessRefused"},
	{Name: "a registration no rule allows is accepted", File: "runner.go",
		Edits: []mutation.Edit{{Old: `			if err := reachable(reg, rules); err != nil {`, New: `			if err := reachable(reg, rules); false && err != nil {`}},
		Kills: "TestNewRefusesUnreachableRegistration"},
	{Name: "connections under two providers", File: "runner.go",
		Edits: []mutation.Edit{{Old: `} else if c.Provider != r.integration {`, New: `} else if false {`}},
		Kills: "TestNewRefusesBadConfig"},
	{Name: "the ACP handshake holds the session's lock", File: "launch.go",
		Edits: []mutation.Edit{{Old: `	if err = a.handshake(ctx); err != nil {`, New: `	s.mu.Lock()
	err = a.handshake(ctx)
	s.mu.Unlock()
	if err != nil {`}},
		Kills: "TestCloseEndsAStalledHandshake"},
	{Name: "the Runner keeps its KeySource", File: "runner.go",
		Edits: []mutation.Edit{{Old: "	r.cfg.Keys = nil\n", New: ""}},
		Kills: "TestRunnerPrintsNoKey"},
	{Name: "a session holds its token by value", File: "session.go",
		Edits: []mutation.Edit{
			{Old: "	token *string\n", New: "	token string\n"},
			{Old: "token: &token}", New: "token: token}"},
			{Old: "{ return *s.token }", New: "{ return s.token }"},
		},
		Kills: "TestSessionPrintsNoToken"},
	{Name: "a tool name registered twice", File: "runner.go",
		Edits: []mutation.Edit{{Old: `			if names[reg.Tool.Name] {`, New: `			if false {`}},
		Kills: "TestNewRefusesToolNameTwice"},
	{Name: "a second Launch reaches the busy socket", File: "launch.go",
		Edits: []mutation.Edit{{Old: `	if s.plane.serving() {`, New: `	if false {`}},
		Kills: "TestSecondLaunchWhileServingIsTyped"},
	{Name: "Agent.Close waits for stderr unbounded", File: "launch.go",
		Edits: []mutation.Edit{{Old: "	case <-a.stderr:\n	case <-time.After(ExitGrace):\n	}", New: "	case <-a.stderr:\n	}"}},
		Kills: "TestAgentCloseOutlivesAChildHoldingItsPipes"},
	{Name: "Session.Close leaves its agents to the provider", File: "session.go",
		Edits: []mutation.Edit{{Old: `		a.client.Close()
		a.proc.Kill()
`, New: `		_ = a
`}},
		Kills: "TestCloseEndsTheAgentsItLaunched|TestClosedSessionAsksNoApproval"},
	{Name: "the default log is created readable by others", File: "runner.go",
		Edits: []mutation.Edit{{Old: `		if err := createPrivate(r.LogPath()); err != nil {`, New: `		if err := error(nil); err != nil {`}},
		Kills: "TestDefaultStoresPrivate"},
	{Name: "the default credential store is created readable by others", File: "runner.go",
		Edits: []mutation.Edit{{Old: `		if err := createPrivate(path); err != nil {`, New: `		if err := error(nil); err != nil {`}},
		Kills: "TestDefaultStoresPrivate"},
	{Name: "the Approver is asked without an assignment", File: "../custody/pipeline/pipeline.go",
		Edits: []mutation.Edit{{Old: "if err != nil || !listed {", New: "if !listed {"}},
		Kills: "TestPermissionWithoutAssignmentAsksNoOne"},
	{Name: "a killed process is waited for unbounded", File: "launch.go",
		Edits: []mutation.Edit{{Old: "	case <-time.After(ExitGrace):\n		return checkfu.Refuse(CodeProcessUnreaped", New: "	case <-make(chan struct{}):\n		return checkfu.Refuse(CodeProcessUnreaped"}},
		Kills: "TestStubbornProviderCannotHoldTheSession"},
	{Name: "Session.Close waits for Destroy unbounded", File: "session.go",
		Edits: []mutation.Edit{{Old: `context.WithTimeout(context.Background(), ExitGrace)`, New: `context.WithCancel(context.Background())`}},
		Kills: "TestStubbornProviderCannotHoldTheSession"},
	{Name: "Session.Close logs no end of the turn in flight", File: "session.go",
		Edits: []mutation.Edit{{Old: `		_, terr := a.endTurn(context.Background(), "closed", nil)
`, New: `		var terr error
`}},
		Kills: "TestCloseEndsATurnThatNeverEnds"},
	{Name: "a fixed cwd named to the agent", File: "launch.go",
		Edits: []mutation.Edit{{Old: "	if wd, ok := inst.(interface{ WorkDir() string }); ok && wd.WorkDir() != \"\" {", New: "	if wd, ok := inst.(interface{ WorkDir() string }); false && ok && wd.WorkDir() != \"\" {"}},
		Kills: "TestAgentReachesToolsThroughTheDoor"},
	{Name: "the door is not announced in mcpServers", File: "launch.go",
		Edits: []mutation.Edit{{Old: "		mcpServers = append(mcpServers, server)\n", New: "		_ = server\n"}},
		Kills: "TestAgentReachesToolsThroughTheDoor"},
	{Name: "Agent.Cancel sends nothing", File: "launch.go",
		Edits: []mutation.Edit{{Old: "func (a *Agent) Cancel() error { return a.client.Cancel(a.session) }", New: "func (a *Agent) Cancel() error { return nil }"}},
		Kills: "TestAgentCancel"},
	{Name: "a capability-free session gets a plane", File: "launch.go",
		Edits: []mutation.Edit{{Old: "	if s.plane == nil && r.catalog != nil && inProcess {", New: "	if s.plane == nil && inProcess {"}},
		Kills: "TestCapabilityFreeSession"},
	// The operator's cause and what the agent sees are kept apart.
	{Name: "the broker answers the agent with the cause", File: "../gateway/broker/broker.go",
		Edits: []mutation.Edit{{Old: `text = "failed: " + string(uc)`, New: `text = "failed: " + string(uc) + ": " + err.Error()`}},
		Kills: "TestUpstreamFailureCauseIsTheOperators"},
	{Name: "the cause rides in the event's envelope", File: "../eventlog/evidencelog/evidencelog.go",
		Edits: []mutation.Edit{{Old: `		e.Content, _ = json.Marshal(Operator{Cause: ev.Cause}) // a struct of one string always marshals
`, New: `		e.Content, _ = json.Marshal(Operator{Cause: ev.Cause}) // a struct of one string always marshals
		e.Tool.Revision = strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
				return r
			}
			return '-'
		}, ev.Cause)
`}, {Old: `	"strconv"
`, New: `	"strconv"
	"strings"
`}},
		Kills: "TestUpstreamFailureCauseIsTheOperators"},
	{Name: "the failed call's cause is not kept", File: "../custody/pipeline/pipeline.go",
		Edits: []mutation.Edit{{Old: `		res.Cause = checkfu.Cause(err)
`, New: ``}},
		Kills: "TestUpstreamFailureCauseIsTheOperators"},
	{Name: "the instance gets the provider's default network", File: "launch.go",
		Edits: []mutation.Edit{{Old: "spec := networkSpec(r.provider.Spec(s.rc.Session, s.profile.ProfileDigest()), s.profile)", New: "spec := r.provider.Spec(s.rc.Session, s.profile.ProfileDigest())"}},
		Kills: "TestInstanceSpecCarriesTheAdmittedNetworkPolicy"},
	{Name: "the allowlist's hosts are dropped", File: "launch.go",
		Edits: []mutation.Edit{{Old: "for _, h := range v.Hosts() {", New: "for _, h := range v.Hosts()[:0] {"}},
		Kills: "TestInstanceSpecCarriesTheAdmittedNetworkPolicy"},
	{Name: "the provider's default hosts are kept", File: "launch.go",
		Edits: []mutation.Edit{{Old: "\tspec.AllowedHosts = nil\n", New: ""}},
		Kills: "TestInstanceSpecCarriesTheAdmittedNetworkPolicy"},
	{Name: "identical refusals are each recorded", File: "refusals.go",
		Edits: []mutation.Edit{{Old: "			r.kinds[i].repeats++\n			return nil\n", New: "			r.kinds[i].repeats++\n"}},
		Kills: "TestRefusalFloodIsCoalesced"},
	{Name: "the count of coalesced refusals is lost at the agent's close", File: "launch.go",
		Edits: []mutation.Edit{{Old: "	ferr := a.s.flushRefusals(context.WithoutCancel(ctx))\n", New: "	var ferr error\n"}},
		Kills: "TestRefusalFloodIsCoalesced"},
	{Name: "refusals are not paced", File: "refusals.go",
		Edits: []mutation.Edit{{Old: "		if wait <= 0 {\n", New: "		if true {\n"}},
		Kills: "TestRefusalFloodIsCoalesced"},
	{Name: "the refusal burst is one short", File: "refusals.go",
		Edits: []mutation.Edit{{Old: "tokens: RefusalsPerSecond, closed:", New: "tokens: RefusalsPerSecond - 1, closed:"}},
		Kills: "TestRefusalFloodIsCoalesced"},
	{Name: "refusals acp decides alone are not recorded", File: "launch.go",
		Edits: []mutation.Edit{{Old: "		OnRefusal: func(err error) { s.refusedByACP(err) },\n", New: ""}},
		Kills: "TestRefusalFloodIsCoalesced"},
	{Name: "the refusal budget is never spent", File: "refusals.go",
		Edits: []mutation.Edit{{Old: "	if r.spent == MaxRefusals {\n", New: "	if false {\n"}},
		Kills: "TestRefusalBudgetClosesTheChannel"},
	{Name: "a spent refusal budget leaves the channel open", File: "launch.go",
		Edits: []mutation.Edit{{Old: "		case <-s.refusals.closed:\n			a.client.Close()\n", New: "		case <-s.refusals.closed:\n"}},
		Kills: "TestRefusalBudgetClosesTheChannel"},
}
