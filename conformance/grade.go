package conformance

import "github.com/checkfu/checkfu"

// EffectiveGrade returns the grade of the exact provider revision target,
// given the grade the provider advertises for itself and the receipt (nil
// for none) the host holds for it.
//
// It is the lesser of two independent ceilings, so it is never inferred,
// upgraded or averaged:
//
//   - the advertisement: the effective grade never exceeds what the
//     provider claims (an invalid advertisement counts as Unsupported);
//   - the evidence: AdvisoryFilter, unless receipt certifies exactly
//     target (see [Receipt.Certifies]), in which case SecurityBoundary.
//
// So a provider's own advertisement can never reach SecurityBoundary, and
// a receipt for any other pair, with a fact missing, or with non-production
// evidence changes nothing.
func EffectiveGrade(target checkfu.ProviderRevision, advertised checkfu.Grade, receipt *Receipt) checkfu.Grade {
	if !advertised.Valid() {
		return checkfu.Unsupported
	}
	ceiling := checkfu.AdvisoryFilter
	if receipt.Certifies(target) == nil {
		ceiling = checkfu.SecurityBoundary
	}
	return min(advertised, ceiling)
}
