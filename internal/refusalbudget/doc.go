// Package refusalbudget bounds the refusals a hostile sandbox can cause:
// each refusal is recorded, so without a bound a refusal loop is a write
// amplifier into a log.
//
// A [Budget] is a total (Max refusals, then no more) and a rate (a token
// bucket of PerSecond tokens refilled at PerSecond a second). Its
// invariants:
//   - at most Max calls of [Budget.Spend] succeed, and exactly one of them
//     reports that it spent the last unit;
//   - [Budget.Pace] never returns nil while the budget is spent, and
//     returns nil only when the bucket holds a whole token;
//   - [Budget.Done] is closed exactly when the last unit is spent.
//
// A [Rate] is the same bucket without a total and without waiting: it
// lets at most perSecond events pass in any second after a burst of
// perSecond, and the next event it lets pass learns how many it held.
//
// The broker bounds a channel's refusals with a Budget, the Runner a
// session's, and the egress guard paces its refusal log with a Rate;
// the numbers are theirs.
package refusalbudget
