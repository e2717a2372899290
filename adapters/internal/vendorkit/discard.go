package vendorkit

import (
	"errors"
	"fmt"

	"github.com/checkfu/checkfu"
)

// Discard removes a sandbox that was made and is then given up (a check
// after its creation refused it) and returns err, why it was given up,
// joined with remove's failure when the removal failed. That failure
// names the sandbox by the vendor's id, quoted: the sandbox runs on at
// the vendor, no handle to it is returned, and its id is what the host
// deletes it by. vendor prefixes the message.
func Discard(err error, vendor, id string, remove func() error) error {
	if rerr := remove(); rerr != nil {
		return errors.Join(err, fmt.Errorf("%s: sandbox %s was made and is left at the vendor: removing it failed: %w", vendor, checkfu.Quote(id), rerr))
	}
	return err
}
