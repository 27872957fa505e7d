package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/internal/enginetest"
)

// An API server error about an object that holds sensitive values is
// reported by status, reason and field names, never by its message (which
// may quote the value); the retry rules still see the original error; an
// object without sensitive values keeps the server's message.
func TestApplyHidesServerMessagesOfSensitiveObjects(t *testing.T) {
	const marker = "sv-apply-marker-0e4a"
	d := enginetest.Quickstart(t)
	p := enginetest.MustDiff(t, d, enginetest.EmptyLive(t), engine.DiffOptions{})
	serving := engine.Key{Kind: "Namespace", Name: "serving"}
	research := engine.Key{Kind: "Namespace", Name: "research"}
	for _, c := range p.Changes {
		c.Sensitive = c.Key == serving
	}
	echo := apierrors.NewInvalid(schema.GroupKind{Kind: "Namespace"}, "serving", field.ErrorList{
		field.Invalid(field.NewPath("metadata", "annotations"), marker, "denied by policy: "+marker),
	})
	r := newRecorder()
	r.fail[serving] = []error{apierrors.NewTooManyRequests("slow down "+marker, 0), echo}
	r.fail[research] = []error{echo}
	rep := engine.Apply(context.Background(), p, r, engine.ApplyOptions{Retry: engine.Retry{Base: time.Millisecond}})
	if r.calls[serving] != 2 {
		t.Errorf("the sensitive change was tried %d times, want 2 (a 429 is retried, a 422 is not)", r.calls[serving])
	}
	for _, res := range rep.Results {
		if res.Change.Key != serving && res.Change.Key != research {
			continue
		}
		msg := fmt.Sprintf("%v", res.Err)
		switch {
		case res.Outcome != engine.OutcomeFailed:
			t.Errorf("%s: %s, want failed", res.Change.Key, res.Outcome)
		case res.Change.Key == serving && strings.Contains(msg, marker):
			t.Errorf("the sensitive object's error quotes the value: %s", msg)
		case res.Change.Key == serving && (!strings.Contains(msg, "422") || !strings.Contains(msg, "metadata.annotations") || !apierrors.IsInvalid(res.Err)):
			t.Errorf("the sensitive object's error lost its status or field (IsInvalid %v): %s", apierrors.IsInvalid(res.Err), msg)
		case res.Change.Key == research && !strings.Contains(msg, marker):
			t.Errorf("an object without sensitive values lost the server's message: %s", msg)
		}
		var se *engine.SensitiveError
		if res.Change.Key == serving && !errors.As(res.Err, &se) {
			t.Errorf("the sensitive object's error is a %T, want *engine.SensitiveError", res.Err)
		}
	}
}
