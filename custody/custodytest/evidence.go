package custodytest

import "github.com/checkfu/checkfu/internal/memevidence"

// MemoryEvidence is an in-memory EvidenceSink, safe for concurrent use.
// Its zero value is ready to use. Events recorded through it are whatever
// label the caller gave them; a test double should record LabelMock.
type MemoryEvidence = memevidence.Sink
