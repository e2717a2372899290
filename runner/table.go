package runner

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/checkfu/checkfu/eventlog"
)

// WriteLog writes the session's log to w as a table, one event a row:
// seq, kind, decision, code, actor, what the event is about (profile,
// provider, tool, approval) and its result. It prints envelope fields
// only, never content.
func (s *Session) WriteLog(ctx context.Context, w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SEQ\tKIND\tDECISION\tCODE\tACTOR\tSUBJECT\tRESULT")
	for e, err := range s.r.log.Read(ctx, s.rc.Session, 1) {
		if err != nil {
			return err
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", e.Seq, e.Kind, decision(e.Decision), dash(e.Code), dash(e.Actor), dash(subject(e.Event)), dash(e.Result))
	}
	return tw.Flush()
}

// Verify verifies the session log's hash chain (with the log's keys, so
// shred tags too) and returns its head.
func (s *Session) Verify(ctx context.Context) (eventlog.Head, error) {
	return s.r.log.Verify(ctx, s.rc.Session)
}

func decision(d eventlog.Decision) string {
	if d == eventlog.DecisionNone {
		return "-"
	}
	return d.String()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// subject names what an event is about, from its envelope fields.
func subject(e eventlog.Event) string {
	switch {
	case e.Tool.Name != "":
		return "tool " + e.Tool.Name
	case e.ApprovalID != "":
		s := "approval " + e.ApprovalID
		if e.Approver != "" {
			s += " by " + e.Approver
		}
		return s
	case e.Kind == eventlog.KindAdmission && e.Provider.Provider != "":
		return "profile " + e.Profile.Profile + "@" + e.Profile.Revision + " on " + e.Provider.String()
	case e.Profile.Profile != "":
		return "profile " + e.Profile.Profile + "@" + e.Profile.Revision
	case e.Provider.Provider != "":
		return e.Provider.String()
	}
	return e.Scope
}
