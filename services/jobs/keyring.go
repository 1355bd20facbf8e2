package jobs

import (
	"fmt"

	"github.com/ledgerlane/platform/pkg/seal"
)

// Keyring seals batch items, results and webhook secrets (pkg/seal), built
// from JOB_ENCRYPTION_KEY.
type Keyring = seal.Keyring

// ErrUnseal is returned for a blob that does not open.
var ErrUnseal = seal.ErrUnseal

// ParseKeyring parses a JOB_ENCRYPTION_KEY value. An empty value is an error;
// callers treat "unset" as "batch unavailable" before calling it.
func ParseKeyring(spec string) (*Keyring, error) {
	return seal.ParseKeyring("JOB_ENCRYPTION_KEY", spec)
}

// NewRandomKeyring returns a single fresh key (seal.NewRandomKeyring).
func NewRandomKeyring() *Keyring { return seal.NewRandomKeyring() }

// Additional data for each kind of sealed blob.
func inputAAD(jobID string, index int) string {
	return fmt.Sprintf("jobs/v1|%s|%d|input", jobID, index)
}

func resultAAD(jobID string, index int) string {
	return fmt.Sprintf("jobs/v1|%s|%d|result", jobID, index)
}

func secretAAD(endpointID string) string {
	return "jobs/v1|" + endpointID + "|webhook-secret"
}
