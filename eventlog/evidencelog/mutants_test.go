package evidencelog

import (
	"testing"

	"github.com/checkfu/checkfu/internal/mutation"
)

func TestMutants(t *testing.T) { mutation.Run(t, mutants) }

var mutants = []mutation.Mutant{
	{Name: "Event validation", File: "evidencelog.go",
		Edits: []mutation.Edit{{Old: "\tif err := e.Validate(); err != nil {\n\t\treturn eventlog.Event{}, err\n\t}\n", New: "\n"}},
		Kills: "TestRefusesWhatIsNotAnIdentifier"},
	{Name: "an unknown approval outcome mapped", File: "evidencelog.go",
		Edits: []mutation.Edit{{Old: "\treturn eventlog.DecisionNone, checkfu.Refuse(CodeEvidenceUnknown,", New: "\treturn eventlog.DecisionNone, nil\n}\n\nvar _ = func(o authz.Outcome) error {\n\treturn checkfu.Refuse(CodeEvidenceUnknown,"}},
		Kills: "TestRefusesWhatIsNotAnIdentifier"},
	{Name: "an unknown edge call outcome mapped", File: "evidencelog.go",
		Edits: []mutation.Edit{{Old: "\tdefault:\n\t\treturn checkfu.Refuse(CodeEvidenceUnknown, \"evidencelog: edge call outcome", New: "\tdefault:\n\t\treturn nil\n\t\t_ = checkfu.Refuse(CodeEvidenceUnknown, \"evidencelog: edge call outcome"}},
		Kills: "TestRefusesWhatIsNotAnIdentifier"},
	{Name: "EvidenceEdgeCall case dropped", File: "evidencelog.go",
		Edits: []mutation.Edit{{Old: "\tcase authz.EvidenceEdgeCall:\n", New: "\tcase \"\":\n"}},
		Kills: "TestRecordEdgeCalls"},
	{Name: "a refused edge call recorded as allow", File: "evidencelog.go",
		Edits: []mutation.Edit{{Old: "\tcase authz.OutcomeRefused:\n\t\te.Decision = eventlog.DecisionDeny\n", New: "\tcase authz.OutcomeRefused:\n\t\te.Decision = eventlog.DecisionAllow\n"}},
		Kills: "TestRecordEdgeCalls"},
	{Name: "a sent edge call recorded as no decision", File: "evidencelog.go",
		Edits: []mutation.Edit{{Old: "\tcase authz.OutcomeSucceeded, authz.OutcomeFailed:\n\t\te.Decision = eventlog.DecisionAllow\n", New: "\tcase authz.OutcomeSucceeded, authz.OutcomeFailed:\n\t\te.Decision = eventlog.DecisionNone\n"}},
		Kills: "TestRecordEdgeCalls"},
	{Name: "the context's tenant, workspace and project dropped", File: "evidencelog.go",
		Edits: []mutation.Edit{{Old: "Role: ev.Request.Role, Tenant: ev.Request.Tenant, Workspace: ev.Request.Workspace,\n\t\tProject: ev.Request.Project,", New: "Role: ev.Request.Role,"}},
		Kills: "TestEveryKindCarriesTheContext"},
	{Name: "the context's session dropped", File: "evidencelog.go",
		Edits: []mutation.Edit{{Old: "SessionID: ev.Request.Session,", New: ""}},
		Kills: "TestEveryKindCarriesTheContext"},
	{Name: "the context's role dropped", File: "evidencelog.go",
		Edits: []mutation.Edit{{Old: "Role: ev.Request.Role, ", New: ""}},
		Kills: "TestEveryKindCarriesTheContext"},
	{Name: "the channel dropped", File: "evidencelog.go",
		Edits: []mutation.Edit{{Old: "\t\tChannel: ev.Channel,\n", New: ""}},
		Kills: "TestEveryKindCarriesTheContext"},
}
