// Package adapters is the sandbox provider contract: the interface an
// adapter author implements ([Provider], [Instance], [Process]), the
// optional members ([ListDir], [Snapshot], [ReadFile], [WriteFile]), the
// per-process [Evidence] and the pure check that binds it to the
// Runner's state ([MatchEvidence]).
//
// Entry points: [Check] and [Grade] for a provider's [Description];
// [MatchEvidence] with [HeldFor], and [ParseEvidence] for evidence that
// arrives as JSON; [Slot] for an adapter's one-process
// reservation; [OpenWire] for a remote provider's processes over
// acp/wire. Package adaptertest is the suite every adapter passes;
// package process is the minimum provider. docs/providers.md says how to
// write and test a new one.
//
// Invariants:
//
//   - Declared, never discovered. A provider states its identity,
//     placement, capability (every axis of admission, the advertised
//     egress grade among them) and optional members in one
//     [Description] value. A call to an optional member it did not
//     declare is refused with [CodeMemberUndeclared], even when the
//     instance could do it.
//   - The grade is capped. The only grade the Runner uses is [Grade]:
//     the advertisement capped by conformance.EffectiveGrade for the
//     exact (provider, provider_revision) pair.
//   - One live process per instance. The adapter keeps the reservation
//     (the runtime does not); a second open before the first process is
//     reaped is refused with acp/wire's process_already_open, the same
//     code as on the wire.
//   - One process semantics. A [Process] has the semantics of an OS
//     process and its three pipes whether it is local or across the
//     wire: separate stdout and stderr with no ordering between them,
//     chunk boundaries meaningless, stdin close is end of input, an exit
//     status of the code or 128+signal.
//   - Evidence is checked, and what the check means is recorded.
//     [MatchEvidence] is pure (TestEvidenceMatchingIsPure in the module
//     root) and returns every failed clause of sixteen, with an
//     assurance: isolation_checked only for an in-process provider,
//     identity_only for one across a wire, where both sides of the
//     enforcement clause are the provider's own statements.
//   - Evidence from a wire is decoded strictly (internal/strictjson,
//     bounded) by [ParseEvidence] before it is matched.
//   - No credential. The package imports nothing that holds a plane
//     credential (TestImportRules).
//   - Errors are [*checkfu.Refusal] values with the codes in codes.go;
//     hostile text is quoted with checkfu.Quote.
package adapters
