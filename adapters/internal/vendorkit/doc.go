// Package vendorkit is the production plumbing the remote vendor adapters
// (adapters/e2b, adapters/daytona, adapters/vercel) share where their
// logic is the same: the instance-spec checks of Provider.Create
// ([CheckInstance]), their common capability ([Capability]), the
// contract wrapper of a sandbox and its processes ([Instance]), the
// base-URL check of a Client ([BaseURLProblem], [CheckBaseURL]), the
// check of a name a vendor answers with ([PathSafeID]), a JSON request's
// body ([JSONBody]), the exchange through the credential [Edge] and the
// reading of the answer ([Call]), a command's argv and environment
// ([CheckArgv], [EnvMap]), and a sandbox's one-live-process slot with
// its process's end ([Slot], [Exit]).
// Each adapter keeps its vendor-specific mapping (policies, requests,
// streams) in its own package, and so any difference between vendors:
// what a vendor's use of a name forbids besides ([PathSafeID]'s extra),
// how strictly an environment name is checked, how the credential is
// attached.
//
// Invariants:
//   - Nothing here chooses a refusal code or an error's wording on its
//     own: every refusal carries the caller's vendor prefix ("e2b: ...")
//     and a code the adapters already returned before the code was shared,
//     so callers see exactly the errors they saw before.
//   - [CheckInstance] returns a policy only for a network mode the
//     capability lists and the adapter applies ("none", "unrestricted",
//     or "allowlist" when the adapter was given one), and only for a spec
//     that asks for no platform outside the capability, no image but the
//     adapter's own and no limit.
//   - [Capability] claims no more than provider_attested on any axis and
//     no egress grade above advisory_filter: the vendor runs the sandbox.
//   - [Call.Exchange] reads at most its bound plus one byte and always
//     closes the answer's body; a vendor's error body is never quoted.
//   - [BaseURLProblem] admits only https, or http to a loopback host, with
//     no user information, query or fragment.
//   - [PathSafeID] admits a vendor's name only if it is not empty, at most
//     [MaxVendorID] bytes, and holds nothing that would change the URL it
//     is spliced into (/ ? # % @ : or space).
//   - A [Slot] holds at most one live process, opens none once destroyed,
//     kills its live process on the first Destroy, and is emptied only by
//     releasing the process it holds. [Slot.Reap] releases before it ends
//     the [Exit], so a sandbox is free once Wait returns, and an Exit that
//     ended with an error reports status -1.
//   - Hostile text (a spec's network mode, a URL, an env name, a request
//     path holding a name the vendor gave) reaches an error only through
//     checkfu.Quote; an environment value never does. [PathSafeID]
//     admits printable ASCII only.
package vendorkit
