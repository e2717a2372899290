package acp

// MaxPendingPermissions exports maxPendingPermissions to the tests.
const MaxPendingPermissions = maxPendingPermissions
