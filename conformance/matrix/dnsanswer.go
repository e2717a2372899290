package matrix

import (
	"fmt"
	"net/netip"

	"golang.org/x/net/dns/dnsmessage"
)

// A DNSAnswer is the probe's reading of the reply to one DNS question:
// what the workload's resolver told it, recorded as evidence.
type DNSAnswer struct {
	// RCode is the reply's response code ("RCodeSuccess",
	// "RCodeNameError", "RCodeRefused", ...), empty when the reply is
	// not an answer to the question.
	RCode string `json:"rcode,omitempty"`
	// A holds the addresses of the reply's A records for the question's
	// name, at most maxDNSAnswers of them.
	A []string `json:"a,omitempty"`
	// Records counts every record of the answer section, whatever its
	// name or type.
	Records int `json:"records"`
	// Err says why the reply is not a well-formed answer to the question
	// (another ID, another question, not a response, more than
	// maxDNSAnswers records); empty when it is one.
	Err string `json:"err,omitempty"`
}

// maxDNSAnswers bounds the answer records the probe reads from one reply:
// a reply with more is recorded as malformed, with the first
// maxDNSAnswers read. The one name the tunnel case asks has at most one
// record at the owned DNS.
const maxDNSAnswers = 16

// decodeAnswer reads reply as the answer to question, the message the
// probe sent. It does no I/O.
func decodeAnswer(question, reply []byte) DNSAnswer {
	var qp dnsmessage.Parser
	qh, err := qp.Start(question)
	if err != nil {
		return DNSAnswer{Err: "the question does not parse"}
	}
	q, err := qp.Question()
	if err != nil {
		return DNSAnswer{Err: "the question does not parse"}
	}
	var p dnsmessage.Parser
	h, err := p.Start(reply)
	if err != nil {
		return DNSAnswer{Err: "the reply does not parse: " + err.Error()}
	}
	if !h.Response || h.ID != qh.ID {
		return DNSAnswer{Err: fmt.Sprintf("not a response to the question (response %v, id %#x)", h.Response, h.ID)}
	}
	var a DNSAnswer
	rq, err := p.Question()
	if err != nil || rq.Type != q.Type || !sameName(rq.Name, q.Name) {
		a.Err = "the reply's question is not the one asked"
		return a
	}
	if err := p.SkipAllQuestions(); err != nil {
		a.Err = "the reply does not parse: " + err.Error()
		return a
	}
	a.RCode = h.RCode.String()
	for {
		rh, err := p.AnswerHeader()
		if err == dnsmessage.ErrSectionDone {
			break
		}
		if err != nil {
			a.Err = "the answer section does not parse: " + err.Error()
			return a
		}
		if a.Records == maxDNSAnswers {
			a.Err = fmt.Sprintf("more than %d answer records", maxDNSAnswers)
			return a
		}
		a.Records++
		if rh.Type != dnsmessage.TypeA || !sameName(rh.Name, q.Name) {
			if err := p.SkipAnswer(); err != nil {
				a.Err = "the answer section does not parse: " + err.Error()
				return a
			}
			continue
		}
		r, err := p.AResource()
		if err != nil {
			a.Err = "the answer section does not parse: " + err.Error()
			return a
		}
		a.A = append(a.A, netip.AddrFrom4(r.A).String())
	}
	return a
}

// sameName reports whether two names are equal, ignoring ASCII case.
func sameName(x, y dnsmessage.Name) bool {
	if x.Length != y.Length {
		return false
	}
	for i := 0; i < int(x.Length); i++ {
		a, b := x.Data[i], y.Data[i]
		if 'A' <= a && a <= 'Z' {
			a += 'a' - 'A'
		}
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		if a != b {
			return false
		}
	}
	return true
}
