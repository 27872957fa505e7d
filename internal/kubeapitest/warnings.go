package kubeapitest

import (
	"fmt"
	"strings"
	"sync"
)

// Warnings records the warnings API servers send (the Warning headers
// client-go hands to a rest.WarningHandler): Main installs one as
// client-go's default handler, so it sees the warnings of every client of
// the test process, gpuform's included, and fails the package when one is
// about a field the schema does not know.
type Warnings struct {
	mu   sync.Mutex
	seen []string
}

// HandleWarningHeader records one warning (rest.WarningHandler).
func (w *Warnings) HandleWarningHeader(code int, agent, text string) {
	if code != 299 || text == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen = append(w.seen, text)
}

// All returns every warning recorded so far, in order.
func (w *Warnings) All() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.seen...)
}

// FieldWarnings returns the warnings about unknown or duplicate fields:
// what fieldValidation=Warn answers where Strict would refuse the request.
func (w *Warnings) FieldWarnings() []string {
	var out []string
	for _, s := range w.All() {
		if IsFieldWarning(s) {
			out = append(out, s)
		}
	}
	return out
}

// IsFieldWarning reports whether a warning is about an unknown or
// duplicate field ("unknown field \"spec.x\"", "duplicate field ...").
func IsFieldWarning(text string) bool {
	t := strings.ToLower(text)
	return strings.Contains(t, "unknown field") || strings.Contains(t, "duplicate field")
}

// Err is an error listing the field warnings, or nil when there are none.
func (w *Warnings) Err() error {
	fw := w.FieldWarnings()
	if len(fw) == 0 {
		return nil
	}
	return fmt.Errorf("the API server warned of %d unknown or duplicate fields; every write must match the upstream schema:\n  %s", len(fw), strings.Join(fw, "\n  "))
}
