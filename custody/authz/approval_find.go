package authz

// Pending returns the id of an approved, unspent approval bound exactly to
// b, and false when there is none. It decides nothing: the effect still
// runs only through [Approvals.Carry], which revalidates the approval at
// that instant. The gateway uses it so that the approval id never comes
// from the agent's call.
func (s *Approvals) Pending(b ApprovalBinding) (string, bool) {
	if s == nil || s.sink == nil || !b.complete() {
		return "", false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, st := range s.approvals {
		if !st.spent && st.approval.Approved && st.approval.Binding == b {
			return id, true
		}
	}
	return "", false
}
