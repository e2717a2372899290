// Package e2b runs sandboxed processes on E2B (e2b.dev), with the
// standard library's HTTP client: sandboxes through the control plane's
// REST API (POST and DELETE /sandboxes), processes through the
// sandbox's envd over the Connect protocol with JSON (process.Process:
// Start's server stream, SendInput, CloseStdin, SendSignal).
//
// Invariants:
//
//   - The API key is a plane credential and the adapter never holds it.
//     [Config] carries an opaque handle, and every control-plane request
//     leaves through the Runner's [Edge], which attaches the key to its
//     own copy of the request. A vendor's error body is never quoted, so
//     nothing the vendor echoes reaches an error. (envd's per-sandbox
//     access token, which E2B mints in the create answer and which
//     reaches only that sandbox, is held in a closure fmt cannot print.)
//   - The network policy is mapped by [MapPolicy], a pure function: none,
//     unrestricted (with every non-public IPv4 range denied) and
//     allowlist on ports 80 and 443. A port E2B filters by address only
//     is refused with [CodePolicyInexpressible], never widened to
//     addresses. What E2B grants beyond the policy (both web ports per
//     domain, its resolver, no private-answer check) is listed in the
//     mapping's caveats and in the evidence.
//   - The grade is advisory_filter and no receipt can lift it: E2B's API
//     has one flat allowOut list, so the workload's and the plane's
//     destinations are flattened together ([AdvisoryReason], stated in
//     [Capability] and in every [Evidence]).
//   - [Identity] and [WorkerIdentity] are separate exact pairs: a receipt
//     for one never grades the other.
//   - At most one live process per sandbox: a second OpenProcess before
//     the first is reaped is refused with acp/wire's
//     process_already_open; the reservation ends before Wait returns.
//   - stdout and stderr are separate (envd's data events say which);
//     stdin is ordered SendInput calls and Close is CloseStdin (EOF); the
//     exit status is the code, or 128+signal.
//   - Kill is SendSignal SIGKILL, which envd delivers to the process
//     only: children the process started live until Destroy kills the
//     sandbox. This is E2B's semantics, stated rather than papered over.
//   - Untrusted JSON (every answer from E2B) is decoded with
//     internal/strictjson; Connect envelopes are bounded to 4 MiB and
//     compression is refused.
//
// The tests run against an in-process fake of both APIs that validates
// every request against OpenAPI documents written from E2B's published
// definitions (testdata/README.md) and runs commands as real local
// processes. Their evidence is labelled mock.
package e2b
