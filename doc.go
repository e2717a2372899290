// Package checkfu holds the vocabulary every checkfu package shares: the
// typed refusal, the egress certification grade and the requirement a
// policy may place on it, the exact provider revision a grade attaches to,
// the label that says how strong a piece of evidence is, and the
// [RequestContext] every hop of a call carries.
//
// Invariants:
//
//   - This package imports nothing of the module; every other package may
//     import it.
//   - Every zero value fails closed. The zero [Grade] is [Unsupported], the
//     zero [Label] is [LabelMock], the zero [Requirement] is "omitted", which
//     is satisfied only by [AdvisoryFilter] or better, never by Unsupported.
//   - Text forms are parsed strictly: exactly the snake_case spellings
//     listed here, nothing else (no case folding, no trimming, no aliases).
//   - A [Refusal] carries a stable [Code] that callers branch on with
//     [errors.Is]; its message never contains secret material.
package checkfu
