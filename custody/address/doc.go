// Package address names a credential in custody without being able to
// read it: the opaque [Handle] and the custody address [Binding]
// (namespace, integration, handle). It is below both the custody boundary
// (package custody, which seals records to a Binding) and the
// authorization plane (custody/authz, whose capability registrations name
// the credential they use), so that the authorization plane can refer to
// a credential without importing the package that holds its bytes.
//
// Invariants:
//
//   - A Handle is random: it carries nothing derived from the credential,
//     so it may appear in events, logs, API responses and sandbox
//     configuration. Its only text form is "ch_" and 26 characters of
//     lowercase base32, parsed canonically.
//   - Every zero value fails closed: the zero Handle and the zero Binding
//     are refused, never treated as empty-but-valid.
//   - A Binding's String form "namespace/integration/handle" is
//     unambiguous: names cannot contain "/".
//   - This package imports nothing of the module but the root package; it
//     holds no secret and cannot reach one.
package address
