package acp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"testing"

	"github.com/checkfu/checkfu/acp"
	"pgregory.net/rapid"
)

// TestPropertyClientMatchesByID: over random schedules, with up to eight
// calls in flight, the agent answering them in a random order, some answers
// batched into one line, and agent requests interleaved whose ids collide
// with the pending calls' ids, every call gets its own answer and every
// agent request is answered exactly once, with its own id: selected when
// it names a session whose session/new answer was sent before it, denied
// (cancelled, as it offers no reject option) when it names a stranger.
func TestPropertyClientMatchesByID(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		c := acp.NewClient(outR, inW, acp.Config{
			OnPermission: func(context.Context, acp.RequestPermissionRequest) acp.PermissionOutcome { return acp.Select("ok") },
		})
		defer func() { c.Close(); outW.Close(); inR.Close() }()
		fromClient := make(chan acp.Message, 128)
		go func() {
			defer close(fromClient)
			r := acp.NewReader(inR, 0)
			for {
				line, err := r.ReadLine()
				if err != nil {
					return
				}
				msgs, err := acp.ParseLine(nil, line)
				if err != nil {
					return
				}
				for _, m := range msgs {
					fromClient <- m
				}
			}
		}()
		agent := acp.NewWriter(outW, 0)
		next := func() acp.Message {
			m, ok := <-fromClient
			if !ok {
				rt.Fatal("client input ended")
			}
			return m
		}

		initDone := make(chan error, 1)
		go func() { _, err := c.Initialize(context.Background()); initDone <- err }()
		m := next()
		if err := agent.WriteMessage(acp.Message{ID: m.ID, Result: json.RawMessage(`{"protocolVersion":1}`)}); err != nil {
			rt.Fatal(err)
		}
		if err := <-initDone; err != nil {
			rt.Fatal(err)
		}

		n := rapid.IntRange(1, 8).Draw(rt, "calls")
		errs := openSessions(c, n)
		reqs := make([]acp.Message, n)
		for i := range reqs {
			reqs[i] = next()
		}
		order := rapid.Permutation(reqs).Draw(rt, "order")
		const (
			selected  = `{"outcome":{"outcome":"selected","optionId":"ok"}}`
			cancelled = `{"outcome":{"outcome":"cancelled"}}`
		)
		var sentIDs, created []string
		for i := 0; i < len(order); {
			// An agent request whose id collides with a client id.
			if rapid.Bool().Draw(rt, "interleave") {
				id := reqs[rapid.IntRange(0, n-1).Draw(rt, "collide")].ID
				sid, want := "x", cancelled
				if len(created) > 0 && rapid.Bool().Draw(rt, "known") {
					sid, want = created[rapid.IntRange(0, len(created)-1).Draw(rt, "session")], selected
				}
				sentIDs = append(sentIDs, id.String()+" "+want)
				p := json.RawMessage(fmt.Sprintf(`{"sessionId":%q,"toolCall":{"toolCallId":"c"},"options":[{"optionId":"ok","name":"OK","kind":"allow_once"}]}`, sid))
				if err := agent.WriteMessage(acp.Message{ID: id, Method: acp.MethodRequestPermission, Params: p}); err != nil {
					rt.Fatal(err)
				}
			}
			k := rapid.IntRange(1, len(order)-i).Draw(rt, "batch")
			var batch []acp.Message
			for _, r := range order[i : i+k] {
				var p acp.NewSessionRequest
				if err := json.Unmarshal(r.Params, &p); err != nil {
					rt.Fatal(err)
				}
				batch = append(batch, acp.Message{ID: r.ID, Result: json.RawMessage(fmt.Sprintf(`{"sessionId":"for %s"}`, p.Cwd))})
				created = append(created, "for "+p.Cwd)
			}
			i += k
			var err error
			if k == 1 && rapid.Bool().Draw(rt, "single") {
				err = agent.WriteMessage(batch[0])
			} else {
				line, _ := json.Marshal(batch)
				err = agent.WriteLine(line)
			}
			if err != nil {
				rt.Fatal(err)
			}
		}
		for range n {
			if err := <-errs; err != nil {
				rt.Fatal(err)
			}
		}
		var answered []string
		for range sentIDs {
			a := next()
			if !a.IsResponse() {
				rt.Fatalf("agent request answered with %+v", a)
			}
			answered = append(answered, a.ID.String()+" "+string(a.Result))
		}
		sort.Strings(sentIDs)
		sort.Strings(answered)
		if fmt.Sprint(sentIDs) != fmt.Sprint(answered) {
			rt.Fatalf("agent requests %v answered as %v", sentIDs, answered)
		}
	})
}
