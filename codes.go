package checkfu

// Codes shared by every package: a condition that means the same thing
// wherever it arises is spelled once, here, so that two packages never
// declare the same string (a [Refusal] matches on the string alone).
//
// Every code in the module is object_condition in snake_case
// ("rules_invalid", "lease_expired"), unique across the module, and
// carries no package prefix; TestCodes in this package enforces it and
// docs/codes.md lists them all.
const (
	// CodeConfigInvalid means a value the caller configured (an option,
	// a constructor argument, a key or window size) is out of range or
	// malformed. It is the caller's error, never the remote party's.
	CodeConfigInvalid Code = "config_invalid"

	// CodeGradeInvalid means a grade or a requirement does not parse.
	CodeGradeInvalid Code = "grade_invalid"

	// CodeRequestContextInvalid means a request context lacks a required
	// field or holds a field that is not an identifier.
	CodeRequestContextInvalid Code = "request_context_invalid"

	// CodeLabelInvalid means an evidence label does not parse (want
	// mock, isolated or production).
	CodeLabelInvalid Code = "label_invalid"
)
