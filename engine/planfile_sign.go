package engine

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// PlanKeyEnv is the environment variable that holds the key plan files are
// signed and checked with. gpuform removes it from its own environment when
// it starts, so that no program it runs (a kubeconfig's credential plugin)
// inherits it.
const PlanKeyEnv = "GPUFORM_PLAN_KEY"

// MinPlanKeyBytes is the shortest plan key accepted: 32 bytes, the output
// size of SHA-256 (openssl rand -hex 32 makes a 64-byte one).
const MinPlanKeyBytes = 32

// signaturePrefix starts a plan file's signature.
const signaturePrefix = "hmac-sha256:"

// signatureContext is mixed into every signature so that a MAC made with
// the same key for another purpose is never a valid plan signature.
const signatureContext = "gpuform plan file v1\x00"

// PlanKey is the secret plan files are signed with (HMAC-SHA256). A nil
// PlanKey means none is configured.
type PlanKey []byte

// LoadPlanKey returns the plan key of env (os.Environ form): the value of
// GPUFORM_PLAN_KEY with surrounding white space removed, nil when it is
// unset. Set but empty (or only white space) is an error, not "no key": it
// is what a CI secret that is missing looks like, and signing must not turn
// itself off. A key shorter than MinPlanKeyBytes is an error; the errors
// never contain the key.
func LoadPlanKey(env []string) (PlanKey, error) {
	var key string
	set := false
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, PlanKeyEnv+"="); ok {
			key, set = v, true // the last one wins, as in a shell
		}
	}
	if !set {
		return nil, nil
	}
	key = strings.TrimSpace(key)
	if key == "" {
		return nil, fmt.Errorf("%s is set but empty (a missing secret?): set it to the plan key, or unset it to make and apply unsigned plans", PlanKeyEnv)
	}
	if len(key) < MinPlanKeyBytes {
		return nil, fmt.Errorf("%s is %d bytes long; a plan key must have at least %d (make one with: openssl rand -hex 32)", PlanKeyEnv, len(key), MinPlanKeyBytes)
	}
	return PlanKey(key), nil
}

// sign returns the signature of a plan file's canonical bytes.
func (k PlanKey) sign(canonical []byte) string {
	mac := hmac.New(sha256.New, k)
	mac.Write([]byte(signatureContext))
	mac.Write(canonical)
	return signaturePrefix + hex.EncodeToString(mac.Sum(nil))
}

// UnsignedWarning is what to say of a plan file that carries no signature,
// read without a key (after its name).
const UnsignedWarning = "is not signed, so nothing proves it is the plan gpuform made; apply checks each change against the cluster, but set " + PlanKeyEnv + " where plans are made and applied (see docs/apply.md)"

// Signed reports whether the file carries a signature (valid or not: see
// Authenticate).
func (pf *PlanFile) Signed() bool { return pf.Signature != "" }

// Authenticate applies the signing rule to a plan file read by
// ReadPlanFile, before anything is shown or applied:
//
//   - with a key, the file must carry a valid signature made with that key:
//     an unsigned file, one signed with another key, and one edited after
//     it was signed (checksum recomputed or not) are refused;
//   - without a key, a signed file is refused (it cannot be checked, and a
//     key was meant to be used), and an unsigned one is accepted: the
//     caller should warn that nobody vouches for it.
//
// Whatever the file says, apply checks every change against the cluster
// (Recheck).
func (pf *PlanFile) Authenticate(key PlanKey) error {
	switch {
	case key == nil && pf.Signed():
		return fmt.Errorf("the plan file is signed, but no plan key is configured to check it: set %s to the key it was made with", PlanKeyEnv)
	case key == nil:
		return nil
	case !pf.Signed():
		return fmt.Errorf("the plan file is not signed, but a plan key is configured (%s), so only plans signed with it are accepted; make the plan again with the key set", PlanKeyEnv)
	}
	b, err := pf.canonical()
	if err != nil {
		return fmt.Errorf("check the plan file's signature: %w", err)
	}
	if !hmac.Equal([]byte(key.sign(b)), []byte(pf.Signature)) {
		return errors.New("the plan file's signature does not match: it was edited after gpuform signed it, or signed with another key; make the plan again")
	}
	return nil
}
