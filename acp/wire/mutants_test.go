package wire

import (
	"os"
	"testing"

	"github.com/checkfu/checkfu/internal/mutation"
)

// TestMutants applies each hand-written mutant of the wire's checks and
// requires a named test to fail (CHECKFU_MUTANTS=1; CI sets it).
func TestMutants(t *testing.T) {
	ms := mutants
	if os.Getuid() == 0 {
		ms = append(ms, rootMutants...) // their killer runs a peer as another user
	}
	mutation.Run(t, ms)
}

var mutants = []mutation.Mutant{
	{Name: "reservation check", File: "server.go",
		Edits: []mutation.Edit{{Old: "if s.proc != nil && !s.proc.sm.reaped {", New: "if false {"}},
		Kills: "TestSecondOpenRefused"},
	{Name: "stdin overrun check", File: "provider.go",
		Edits: []mutation.Edit{{Old: "if !w.allows(off, end) {", New: "if false {"}},
		Kills: "TestStdinOverrunRefusedWhole|TestPropertyWire"},
	{Name: "credit from accepted, not the pipe", File: "provider.go",
		Edits: []mutation.Edit{{Old: "return p.written + uint64(p.cfg.inputCredit)", New: "return p.accepted + uint64(p.cfg.inputCredit)"}},
		Kills: "TestGrantFollowsPipe"},
	{Name: "duplicate stdin check", File: "provider.go",
		Edits: []mutation.Edit{{Old: "if end <= p.accepted {", New: "if false {"}},
		Kills: "TestStdinResendAppliedOnce"},
	{Name: "low-water check", File: "provider.go",
		Edits: []mutation.Edit{{Old: "if cursor < p.jr.low() {", New: "if false {"}},
		Kills: "TestResumeBelowLowWaterIsTruncated|TestPropertyWire"},
	{Name: "sequence filter", File: "runner.go",
		Edits: []mutation.Edit{{Old: "if end <= r.delivered {", New: "if false {"}},
		Kills: "TestLazyReplayDeliveredOnce|TestPropertyWire"},
	{Name: "stdout gap check", File: "runner.go",
		Edits: []mutation.Edit{{Old: "if off > r.delivered {", New: "if false {"}},
		Kills: "TestDataPastFinalIsProtocolError"},
	{Name: "stdout past out_end check", File: "runner.go",
		Edits: []mutation.Edit{{Old: "if r.outEnded && end > r.outFinal {", New: "if false {"}},
		Kills: "TestDataPastFinalIsProtocolError"},
	{Name: "broken pipe credits what it discards", File: "provider.go",
		Edits: []mutation.Edit{{Old: "\tp.inbuf.reset()\n\tp.written = p.accepted\n", New: "\tp.inbuf.reset()\n"}},
		Kills: "TestBrokenPipeNeverLeaksCredit"},
	{Name: "stdin past a broken pipe counted written", File: "provider.go",
		Edits: []mutation.Edit{{Old: "if p.stdinBroken { // nothing reaches a broken pipe; count it as written", New: "if false {"}},
		Kills: "TestBrokenPipeNeverLeaksCredit"},
	{Name: "growPipe through Fd", File: "pipesize_linux.go",
		Edits: []mutation.Edit{{Old: "rc, err := f.SyscallConn()\n\tif err != nil {\n\t\treturn\n\t}\n\trc.Control(func(fd uintptr) {\n\t\tsyscall.Syscall(syscall.SYS_FCNTL, fd, fSetPipeSz, 1<<20)\n\t})",
			New: "syscall.Syscall(syscall.SYS_FCNTL, f.Fd(), fSetPipeSz, 1<<20)"}},
		Kills: "TestKillEndsAnInstanceWhoseDescendantHoldsStdout"},
	{Name: "kill closes the pipes", File: "server.go",
		Edits: []mutation.Edit{{Old: "\t\tp.terminate()\n\t\tp.outR.Close()\n\t\tp.errR.Close()\n", New: "\t\tp.terminate()\n"}},
		Kills: "TestKillEndsAnInstanceWhoseDescendantHoldsStdout"},
	{Name: "first-frame bound", File: "server.go",
		Edits: []mutation.Edit{{Old: "frame.NewBoundedDecoder(c, frame.MaxHelloPayload)", New: "frame.NewDecoder(c)"}},
		Kills: "TestHelloClaimingALargePayloadIsRefusedAtItsHeader"},
	{Name: "temporary Accept errors retried", File: "server.go",
		Edits: []mutation.Edit{{Old: "if !temporary(err) {", New: "if true {"}},
		Kills: "TestServeSurvivesTemporaryAcceptErrors"},
	{Name: "pending handshakes capped", File: "server.go",
		Edits: []mutation.Edit{{Old: "if h.l.Len() > h.max {", New: "if false {"}},
		Kills: "TestServeCapsPendingHandshakes"},
	{Name: "a finished handshake leaves the pending set", File: "server.go",
		Edits: []mutation.Edit{{Old: "h.l.Remove(e) // a no-op once removed", New: "_ = e"}},
		Kills: "TestServeDropsOnlyPendingHandshakes"},
	{Name: "Runner's own stdin cap", File: "runner.go",
		Edits: []mutation.Edit{{Old: "return int(min(r.win.room(r.total), capacity-held))", New: "return int(min(r.win.room(r.total), 1<<30))"}},
		Kills: "TestRunnerCapsUnacknowledgedStdin"},
	{Name: "provider authenticates the connection", File: "server.go",
		Edits: []mutation.Edit{{Old: "c, err := s.authServer(raw)", New: "c, err := raw, error(nil)"}},
		Kills: "TestStrangerWhoOpensFirstFailsToOpen"},
	{Name: "pinned key check", File: "auth.go",
		Edits: []mutation.Edit{{Old: "if !k.peers[id] {", New: "if false {"}},
		Kills: "TestStrangerWhoOpensFirstFailsToOpen|TestRunnerRefusesAnUnpinnedProvider"},
	{Name: "TLS 1.3 only", File: "auth.go",
		Edits: []mutation.Edit{
			{Old: "MinVersion:       tls.VersionTLS13,", New: "MinVersion:       tls.VersionTLS12,"},
			{Old: "if cs.Version != tls.VersionTLS13 || cs.NegotiatedProtocol != alpnProtocol {", New: "if cs.NegotiatedProtocol != alpnProtocol {"},
		},
		Kills: "TestOnlyTLS13"},
	{Name: "ALPN required", File: "auth.go",
		Edits: []mutation.Edit{{Old: "if cs.Version != tls.VersionTLS13 || cs.NegotiatedProtocol != alpnProtocol {", New: "if cs.Version != tls.VersionTLS13 {"}},
		Kills: "TestProviderRefusesNoALPNAndExtraCertificates|TestRunnerRefusesProviderWithoutALPN"},
	{Name: "exactly one peer certificate", File: "auth.go",
		Edits: []mutation.Edit{{Old: "if len(cs.PeerCertificates) != 1 {", New: "if len(cs.PeerCertificates) == 0 {"}},
		Kills: "TestProviderRefusesNoALPNAndExtraCertificates"},
	{Name: "an unauthenticated redial answer is a drop", File: "client.go",
		Edits: []mutation.Edit{{Old: "if opened && errors.Is(err, CodePeerRefused) {", New: "if opened && false {"}},
		Kills: "TestImpostorOnARedialIsADrop"},
	{Name: "Server refuses Keys with InsecureNoAuth", File: "server.go",
		Edits: []mutation.Edit{{Old: "if s.Keys != nil && s.InsecureNoAuth {", New: "if false {"}},
		Kills: "TestKeysWithInsecureNoAuthRefused"},
	{Name: "Runner refuses Keys with InsecureNoAuth", File: "client.go",
		Edits: []mutation.Edit{{Old: "if r.Keys != nil && r.InsecureNoAuth {", New: "if false {"}},
		Kills: "TestKeysWithInsecureNoAuthRefused"},
	{Name: "private key only in a closure", File: "auth.go",
		Edits: []mutation.Edit{
			{Old: "\tsign func(message []byte) []byte\n}", New: "\tsign func(message []byte) []byte\n\tpriv ed25519.PrivateKey\n}"},
			{Old: "return keySigner{pub:", New: "return keySigner{priv: priv, pub:"},
		},
		Kills: "TestKeysNeverPrintThePrivateKey"},
	{Name: "no session tickets", File: "auth.go",
		Edits: []mutation.Edit{{Old: "SessionTicketsDisabled: true,", New: "SessionTicketsDisabled: false,"}},
		Kills: "TestProviderIssuesNoSessionTicket"},
	{Name: "Serve without Keys over TCP", File: "auth.go",
		Edits: []mutation.Edit{{Old: "if insecure || keys != nil || network == \"unix\" {", New: "if true {"}},
		Kills: "TestAuthRequiredByDefault"},
	{Name: "Runner without Keys over TCP", File: "auth.go",
		Edits: []mutation.Edit{{Old: "\tif r.Keys == nil {\n", New: "\tif false {\n"}},
		Kills: "TestAuthRequiredByDefault|TestRunnerWithoutKeysRefusesAWrappedUnixConn"},
	{Name: "socket created 0600", File: "peercred_linux.go",
		Edits: []mutation.Edit{
			{Old: "if err := unix.Fchmod(fd, 0o600); err != nil {", New: "if err := unix.Fchmod(fd, 0o666); err != nil {"},
			{Old: "if err := chmodSocket(path); err != nil {", New: "if false {"},
		},
		Kills: "TestUnixSocketMode0600WhateverTheUmask"},
	{Name: "socket mode fixed without following a symlink", File: "peercred_linux.go",
		Edits: []mutation.Edit{{Old: "fd, err := unix.Open(path, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)", New: "fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)"}},
		Kills: "TestListenDoesNotChmodThroughASwappedSymlink"},
	{Name: "socket mode fixed under a narrowing umask", File: "peercred_linux.go",
		Edits: []mutation.Edit{{Old: "\treturn unix.Chmod(\"/proc/self/fd/\"+strconv.Itoa(fd), 0o600)\n", New: "\t_ = strconv.Itoa(fd)\n\treturn nil\n"}},
		Kills: "TestUnixSocketMode0600UnderANarrowingUmask"},
	{Name: "provider's message quoted", File: "runner.go",
		Edits: []mutation.Edit{{Old: `"wire: the provider says " + checkfu.Quote(f.Message)`, New: `"wire: the provider says " + f.Message`}},
		Kills: "TestProviderMessageQuoted"},
	{Name: "refusal message cut on a character", File: "server.go",
		Edits: []mutation.Edit{{Old: "for cut > 0 && !utf8.RuneStart(msg[cut]) {", New: "for false && !utf8.RuneStart(msg[cut]) {"}},
		Kills: "TestRefusalMessageCutOnACharacter"},
}

// rootMutants are killed only by tests that need root.
var rootMutants = []mutation.Mutant{
	{Name: "Unix peer uid check", File: "peercred_linux.go",
		Edits: []mutation.Edit{{Old: "if !peerUIDMatches(cred.Uid) {", New: "if false {"}},
		Kills: "TestUnixPeerOfAnotherUIDRefused"},
	{Name: "Runner checks the Unix provider's uid", File: "auth.go",
		Edits: []mutation.Edit{{Old: "\t\treturn c, checkPeerUID(c)\n\t}\n\tif r.Keys == nil {", New: "\t\treturn c, nil\n\t}\n\tif r.Keys == nil {"}},
		Kills: "TestRunnerRefusesUnixProviderOfAnotherUID"},
}
