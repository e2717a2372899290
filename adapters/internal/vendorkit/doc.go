// Package vendorkit is the production plumbing the remote vendor adapters
// (adapters/e2b, adapters/daytona, adapters/vercel) share where their
// logic is the same: the instance-spec checks of Provider.Create
// ([CheckInstance]), the base-URL check of a Client ([BaseURLProblem]),
// the reading of a vendor's answer ([Call]) and a sandbox's one-live-process
// slot ([Slot]).
// Each adapter keeps its vendor-specific mapping (policies, requests,
// streams) in its own package.
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
//   - [BaseURLProblem] admits only https, or http to a loopback host, with
//     no user information, query or fragment.
//   - A [Slot] holds at most one live process, opens none once destroyed,
//     and is emptied only by releasing the process it holds.
//   - Hostile text (a spec's network mode, a URL) reaches an error only
//     through checkfu.Quote.
package vendorkit
