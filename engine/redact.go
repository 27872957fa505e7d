package engine

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// SensitiveError is what a failed change whose object holds sensitive values
// reports instead of the API server's answer: the server's message may
// quote the object's fields (a validation error, an admission webhook or
// policy echoing a value), so only the status, the reason and the names of
// the fields it is about are kept. Unwrap still gives the original error,
// for errors.Is/As (the retry rules read it); nothing prints it.
type SensitiveError struct {
	// Err is the API server's error.
	Err error
}

// Error says how the API server answered without its message.
func (e *SensitiveError) Error() string {
	var st apierrors.APIStatus
	if !errors.As(e.Err, &st) {
		return e.Err.Error()
	}
	s := st.Status()
	what := fmt.Sprintf("the API server refused it (%d %s", s.Code, http.StatusText(int(s.Code)))
	if s.Reason != "" {
		what += ", " + string(s.Reason)
	}
	what += ")"
	if s.Details != nil {
		var fields []string
		for _, c := range s.Details.Causes {
			if c.Field != "" {
				fields = append(fields, c.Field)
			}
		}
		if len(fields) > 0 {
			what += " about " + strings.Join(fields, ", ")
		}
	}
	return what + "; its message is not shown because the object holds values of sensitive variables"
}

// Unwrap returns the API server's error.
func (e *SensitiveError) Unwrap() error { return e.Err }

// hideSensitive replaces err, the failure of change c, with a SensitiveError
// when c's object holds sensitive values and the API server answered.
func hideSensitive(c *Change, err error) error {
	var st apierrors.APIStatus
	if err == nil || !c.Sensitive || !errors.As(err, &st) {
		return err
	}
	return &SensitiveError{Err: err}
}
