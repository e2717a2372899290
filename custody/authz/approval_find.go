package authz

// Pending returns the id of a live approval bound exactly to b (approved,
// unspent, and inside its lifetime now), and false when there is none:
// an expired approval never shadows a live one. It decides nothing: the
// effect still runs only through [Approvals.Carry], which revalidates the
// approval at that instant. The call pipeline uses it so that the
// approval id never comes from the agent's call.
func (s *Approvals) Pending(b ApprovalBinding) (string, bool) {
	if s == nil || s.sink == nil || !b.complete() {
		return "", false
	}
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, st := range s.approvals {
		if !st.spent && st.approval.Binding == b && st.approval.Check(b, now) == nil {
			return id, true
		}
	}
	return "", false
}
