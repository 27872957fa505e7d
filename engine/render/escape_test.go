package render_test

import (
	"bytes"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/engine/internal/enginetest"
	"github.com/gpuform/gpuform/engine/render"
)

// hostile holds what an attacker writes into a string to hide the lines
// after it, recolour them, overwrite them or reorder them.
const hostile = "\x1b[8m\x1b[32m\r\u202e\u009b8m"

// ownSequences are the escape sequences gpuform prints itself: SGR colours
// and the progress line's erase-line.
var ownSequences = regexp.MustCompile(`\x1b\[(0|1|2|31|32|33|1;31|1;32|1;33)m|\r\x1b\[K`)

// checkEscaped fails when out holds a control sequence gpuform did not
// print itself, or when colour is on and gpuform's own colours are gone.
func checkEscaped(t *testing.T, what string, out string, color bool) {
	t.Helper()
	rest := ownSequences.ReplaceAllString(out, "")
	if i := strings.IndexAny(rest, "\x1b\r\u202e\u009b"); i >= 0 {
		t.Errorf("%s holds a raw control character at byte %d:\n%q", what, i, out)
	}
	if !strings.Contains(out, `\x1b[8m`) {
		t.Errorf("%s does not show the escaped sequence:\n%s", what, out)
	}
	if own := ownSequences.FindAllString(out, -1); color && len(own) == 0 {
		t.Errorf("%s lost gpuform's own colours:\n%q", what, out)
	} else if !color && len(own) > 0 && what != "apply progress on a terminal" {
		t.Errorf("%s has colours with colour off:\n%q", what, out)
	}
}

// Control characters in values (a description, a multi-line value, an
// object's address, a field manager, a warning, an API server's error)
// reach no text output raw: plan text with and without colour, Markdown,
// warnings, apply progress and the failure table. gpuform's own colours
// stay.
func TestTextOutputsEscapeControlCharacters(t *testing.T) {
	d := enginetest.Quickstart(t)
	live := enginetest.Applied(t, d)
	for _, o := range d.Objects {
		if o.Object.GetKind() == "PriorityClass" {
			o.Object.Object["description"] = "short " + hostile
		}
		if o.Object.GetKind() == "Namespace" && o.Object.GetName() == "research" {
			o.Object.SetLabels(map[string]string{"team": "long\n" + hostile + "\nwill be destroyed"})
		}
	}
	delete(live.Objects, engine.Key{Kind: "Namespace", Name: "serving"})
	p := enginetest.MustDiff(t, d, live, engine.DiffOptions{})
	p.Changes[0].Address += hostile
	p.Warnings = hcl.Diagnostics{{Severity: hcl.DiagWarning, Summary: "Pool " + hostile, Detail: "Node " + hostile}}
	cfg, dd := enginetest.Stamped(t, c1)
	dlive := enginetest.DriftLive(t, dd)
	_ = unstructured.SetNestedField(enginetest.Quota(dlive, "s").Object, "7"+hostile, "spec", "hard", "requests.memory")
	rep := enginetest.CheckDrift(t, cfg, dd, dlive, c1)
	rep.Warnings = append(rep.Warnings, "inventory of node "+hostile)
	rep.ConfigSource = &engine.ConfigSource{Ref: "main" + hostile, Commit: c1}
	for _, tc := range []struct {
		what  string
		color bool
		write func(*bytes.Buffer) error
	}{
		{"plan text", false, func(b *bytes.Buffer) error { return render.Text(b, p, render.TextOptions{}) }},
		{"plan text in colour", true, func(b *bytes.Buffer) error { return render.Text(b, p, render.TextOptions{Color: true}) }},
		{"drift text", false, func(b *bytes.Buffer) error { return render.DriftText(b, rep, render.TextOptions{}) }},
		{"drift text in colour", true, func(b *bytes.Buffer) error { return render.DriftText(b, rep, render.TextOptions{Color: true}) }},
		{"drift Markdown", false, func(b *bytes.Buffer) error { return render.DriftMarkdown(b, rep, nil) }},
		{"plan Markdown", false, func(b *bytes.Buffer) error { return render.Markdown(b, p) }},
		{"apply progress on a terminal", true, func(b *bytes.Buffer) error {
			pr := &render.ApplyProgress{W: b, TTY: true}
			for _, c := range p.Changes[:3] {
				pr.Event(engine.Event{Kind: engine.EventStart, Change: c})
				pr.Event(engine.Event{Kind: engine.EventDone, Change: c, Result: &engine.Result{Change: c, Outcome: engine.OutcomeSkipped, Err: errors.New("server says " + hostile)}})
			}
			return nil
		}},
		{"apply failure table", false, func(b *bytes.Buffer) error {
			rep := &engine.Report{Results: []*engine.Result{{Change: p.Changes[0], Outcome: engine.OutcomeFailed, Err: errors.New("denied: " + hostile), Elapsed: time.Second}}}
			return render.ApplyFailed(b, rep, nil)
		}},
	} {
		var b bytes.Buffer
		if err := tc.write(&b); err != nil {
			t.Fatal(err)
		}
		checkEscaped(t, tc.what, b.String(), tc.color)
	}
}
