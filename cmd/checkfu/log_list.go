package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/checkfu/checkfu"
	"github.com/checkfu/checkfu/eventlog"
)

// logList prints the sessions a store holds, each with its event count
// and head, as a table or as JSON lines.
func logList(e *env, args []string) error {
	var store, format string
	fs := newFlagSet(e, "log list", "-store DSN [-format table|json]")
	fs.StringVar(&store, "store", "", "the log store: sqlite:PATH or a postgres:// URL")
	fs.StringVar(&format, "format", "table", "table, or json (one object per line)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if store == "" {
		return usagef("checkfu log list: -store is required (sqlite:PATH or postgres://...)")
	}
	if err := checkFormat("list", format); err != nil {
		return err
	}
	ctx := context.Background()
	s, err := openStore(ctx, store, false)
	if err != nil {
		return err
	}
	defer s.Close()
	lister, ok := s.(eventlog.SessionLister)
	if !ok {
		return fmt.Errorf("checkfu log list: the store cannot list its sessions")
	}
	out := bufio.NewWriter(e.stdout)
	defer out.Flush()
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	if format == "table" {
		fmt.Fprintln(tw, "SESSION\tEVENTS\tHEAD")
	}
	after := ""
	for {
		page, err := lister.Sessions(ctx, after, eventlog.MaxSessionsPage)
		if err != nil {
			return err
		}
		for _, h := range page {
			if format == "json" {
				if err := writeJSONLine(out, struct {
					Session string        `json:"session"`
					Events  uint64        `json:"events"`
					Head    eventlog.Hash `json:"head"`
				}{h.Session, h.Head.Seq, h.Head.Hash}); err != nil {
					return err
				}
				continue
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\n", cell(h.Session), h.Head.Seq, h.Head.Hash)
		}
		if len(page) < eventlog.MaxSessionsPage {
			break
		}
		after = page[len(page)-1].Session
	}
	return tw.Flush()
}

// checkFormat refuses a -format other than table or json.
func checkFormat(cmd, format string) error {
	if format != "table" && format != "json" {
		return usagef("checkfu log %s: -format must be table or json (got %s)", cmd, checkfu.Quote(format))
	}
	return nil
}

func writeJSONLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// A tableWriter prints log entries as the columns Session.WriteLog
// uses, under a header it prints with the first row.
type tableWriter struct {
	tw     *tabwriter.Writer
	header bool
}

func newTableWriter(w io.Writer) *tableWriter {
	return &tableWriter{tw: tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)}
}

func (t *tableWriter) write(e eventlog.Entry) {
	if !t.header {
		fmt.Fprintln(t.tw, "SEQ\tKIND\tDECISION\tCODE\tACTOR\tSUBJECT\tRESULT")
		t.header = true
	}
	decision := "-"
	if e.Decision != eventlog.DecisionNone {
		decision = e.Decision.String()
	}
	fmt.Fprintf(t.tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", e.Seq, cell(e.Kind.String()), decision, cell(e.Code), cell(e.Actor), cell(subject(e.Event)), cell(e.Result))
}

func (t *tableWriter) flush() error { return t.tw.Flush() }

// cell is one table cell, or one word of a line: "-" when empty; quoted
// (checkfu.Quote) when it holds anything but printable characters
// without spaces, so that a stored field cannot forge a column, a row,
// or terminal control.
func cell(s string) string {
	if s == "" {
		return "-"
	}
	if !printable(s, checkfu.MaxQuoted, false) {
		return checkfu.Quote(s)
	}
	return s
}

// subject names what an event is about, from its envelope fields.
func subject(e eventlog.Event) string {
	switch {
	case e.Tool.Name != "":
		return "tool:" + e.Tool.Name
	case e.ApprovalID != "":
		return "approval:" + e.ApprovalID
	case e.Profile.Profile != "":
		return "profile:" + e.Profile.Profile + "@" + e.Profile.Revision
	case e.Provider.Provider != "":
		return "provider:" + e.Provider.String()
	}
	return e.Scope
}
