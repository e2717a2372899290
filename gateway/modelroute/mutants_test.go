package modelroute_test

import (
	"testing"

	"github.com/checkfu/checkfu/internal/mutation"
)

func TestMutants(t *testing.T) { mutation.Run(t, mutants) }

// mutants delete or loosen the route's checks; each must be killed by
// the named test.
var mutants = []mutation.Mutant{
	{Name: "the agent's Authorization travels", File: "dialect.go",
		Edits: []mutation.Edit{{Old: `OpenAIResponses:   {"Accept", "Content-Type", "Openai-Beta"},`, New: `OpenAIResponses:   {"Accept", "Authorization", "Content-Type", "Openai-Beta"},`}},
		Kills: "TestHeadersDropCredentials"},
	{Name: "the agent's x-api-key travels", File: "dialect.go",
		Edits: []mutation.Edit{{Old: `AnthropicMessages: {"Accept", "Anthropic-Beta", "Anthropic-Version", "Content-Type"},`, New: `AnthropicMessages: {"Accept", "Anthropic-Beta", "Anthropic-Version", "Content-Type", "X-Api-Key"},`}},
		Kills: "TestHeadersDropCredentials"},
	{Name: "any path of the dialect's host", File: "dialect.go",
		Edits: []mutation.Edit{{Old: `method != http.MethodPost || path != d.Path() || rawQuery != ""`, New: `method != http.MethodPost || rawQuery != ""`}},
		Kills: "TestParseRequest"},
	{Name: "any model allowed", File: "policy.go",
		Edits: []mutation.Edit{{Old: `	if !slices.Contains(p.Models, r.Model) {`, New: `	if !slices.Contains(p.Models, r.Model) && r.Model == "" {`}},
		Kills: "TestPolicyExactModels"},
	{Name: "one request past the budget", File: "policy.go",
		Edits: []mutation.Edit{{Old: `m.used.Requests >= m.budget.Requests`, New: `m.used.Requests > m.budget.Requests`}},
		Kills: "TestMeterBudget"},
	{Name: "the token budget never checked", File: "policy.go",
		Edits: []mutation.Edit{{Old: ` || m.used.Tokens >= m.budget.Tokens {`, New: ` {`}},
		Kills: "TestMeterBudget"},
	{Name: "an event written before it is screened", File: "relay.go",
		Edits: []mutation.Edit{{Old: "		if screen != nil {\n			if err := screen(batch); err != nil {\n				return err\n			}\n		}\n		if _, err := dst.Write(batch); err != nil {\n			return err\n		}\n",
			New: "		if _, err := dst.Write(batch); err != nil {\n			return err\n		}\n		if screen != nil {\n			if err := screen(batch); err != nil {\n				return err\n			}\n		}\n"}},
		Kills: "TestRelayScreensEachEvent"},
	{Name: "no event bound", File: "relay.go",
		Edits: []mutation.Edit{{Old: `		if len(long)+len(piece) > max {`, New: `		if false {`}},
		Kills: "TestRelayEventBound"},
	{Name: "the stream held until its end", File: "relay.go",
		Edits: []mutation.Edit{{Old: "		if br.Buffered() == 0 {", New: "		if len(batch) >= 1<<40 {"}},
		Kills: "TestRelayStreamsAsItArrives"},
	{Name: "no batch bound", File: "relay.go",
		Edits: []mutation.Edit{{Old: "br := bufio.NewReaderSize(src, MaxBatchBytes)", New: "br := bufio.NewReaderSize(src, 1<<22)"}},
		Kills: "TestRelayBatchBound"},
	{Name: "any query on a Messages request", File: "dialect.go",
		Edits: []mutation.Edit{{Old: `!(d == AnthropicMessages && rawQuery == AnthropicBetaQuery)`, New: `!(d == AnthropicMessages)`}},
		Kills: "TestParseRequest"},
	{Name: "usage sums wrap", File: "usage.go",
		Edits: []mutation.Edit{{Old: "if a > math.MaxInt64-b {", New: "if false && a > math.MaxInt64-b {"}},
		Kills: "TestUsageNeverWraps"},
	{Name: "a negative usage count subtracts", File: "usage.go",
		Edits: []mutation.Edit{{Old: "	a, b = max(a, 0), max(b, 0)\n", New: ""}},
		Kills: "TestUsageNeverWraps"},
	{Name: "a 2xx answer without its final usage charged what it reported", File: "policy.go",
		Edits: []mutation.Edit{{Old: "	if status/100 == 2 && !u.Final {", New: "	if false {"}},
		Kills: "TestMeterSettle"},
	{Name: "an error answer charged as a cut stream", File: "policy.go",
		Edits: []mutation.Edit{{Old: "	if status/100 == 2 && !u.Final {", New: "	if status != 0 && !u.Final {"}},
		Kills: "TestMeterSettle"},
	{Name: "a request without an output cap charged nothing more", File: "policy.go",
		Edits: []mutation.Edit{{Old: "			u.OutputTokens = max(u.OutputTokens, rest, 0)", New: "			_ = rest"}},
		Kills: "TestMeterSettle"},
	{Name: "message_start is the final usage", File: "usage.go",
		Edits: []mutation.Edit{{Old: `r.u.Final = r.u.Final || ev.Type != "message_start"`, New: `r.u.Final = true`}},
		Kills: "TestUsageFinal"},
	{Name: "the request's output cap is not read", File: "dialect.go",
		Edits: []mutation.Edit{{Old: "			r.MaxOutput = *c\n", New: ""}},
		Kills: "TestParseRequestMaxOutput"},
}
