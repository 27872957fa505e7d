package kubernetes

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// explain turns a client error into a one-paragraph message that says what
// happened and what to do; what names the operation ("list Namespaces").
func (c *Client) explain(what string, err error) error {
	where := fmt.Sprintf("the Kubernetes API server at %s (context %s)", c.Server, c.Context)
	var ue *url.Error
	var ne net.Error
	var ce *x509.UnknownAuthorityError
	var he x509.HostnameError
	switch {
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("%s: interrupted", what)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s: %s did not answer in time. Check that the cluster is up and reachable", what, where)
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("%s: %s rejected the credentials (401 Unauthorized). The token or client certificate in the kubeconfig is invalid or has expired: refresh it (for example by re-running your cloud's get-credentials command) and try again", what, where)
	case apierrors.IsForbidden(err):
		return fmt.Errorf("%s: %s refused it (403 Forbidden): %s. Grant the identity the rights gpuform needs (list, and for apply patch and delete, on the kinds of docs/plan.md) or use a context with more rights", what, where, apierrors.ReasonForError(err))
	case errors.As(err, &ce), errors.As(err, &he), strings.Contains(err.Error(), "x509:"):
		return fmt.Errorf("%s: the TLS certificate of %s is not trusted: %v. Check certificate-authority-data in the kubeconfig", what, where, err)
	case errors.As(err, &ue), errors.As(err, &ne):
		return &unreachableError{msg: fmt.Sprintf("%s: cannot reach %s: %v. Check that the cluster is running and that --kubeconfig and --context name the right one", what, where, rootCause(err))}
	}
	return fmt.Errorf("%s: %w", what, err)
}

// unreachableError is a server that could not be reached, explained. It
// says so (Unreachable, which engine/fleet reads to report a fleet's
// member as unreachable) and does not unwrap to the network error, so that
// no retry takes it for a transient one.
type unreachableError struct {
	msg string
}

func (e *unreachableError) Error() string { return e.msg }

// Unreachable reports that the cluster could not be reached.
func (e *unreachableError) Unreachable() bool { return true }

// rootCause unwraps to the innermost error, which names the network failure.
func rootCause(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}
