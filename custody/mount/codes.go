package mount

import "github.com/checkfu/checkfu"

// Refusal codes of mount plans. The "mount_" in their values names the
// object, not the package.
const (
	// CodePlanInvalid: a mount or a source is malformed, duplicated or
	// overlaps another.
	CodePlanInvalid checkfu.Code = "mount_plan_invalid"
	// CodeSessionUnknown: no session of that id is attached.
	CodeSessionUnknown checkfu.Code = "mount_session_unknown"
	// CodeMountUnknown: the session has no mount of that name.
	CodeMountUnknown checkfu.Code = "mount_unknown"
	// CodePathInvalid: a file name is not a clean relative slash path
	// (absolute, empty element, "." or ".." element).
	CodePathInvalid checkfu.Code = "mount_path_invalid"
	// CodePathEscapes: resolving the name would leave the mounted
	// directory through a symlink.
	CodePathEscapes checkfu.Code = "mount_path_escapes"
	// CodeNotFound: the name does not exist inside the mount.
	CodeNotFound checkfu.Code = "mount_not_found"
	// CodeNotRegular: the name is a directory, device, socket or other
	// non-regular file.
	CodeNotRegular checkfu.Code = "mount_not_regular"
	// CodeFileLinked: the name is a regular file with more than one name
	// (a hard link), one of which may be outside the mount.
	CodeFileLinked checkfu.Code = "mount_file_linked"
	// CodeTooLarge: the file is larger than MaxFileBytes.
	CodeTooLarge checkfu.Code = "mount_too_large"
	// CodeReadOnly: a write to a mount that is not writable.
	CodeReadOnly checkfu.Code = "mount_read_only"
)
