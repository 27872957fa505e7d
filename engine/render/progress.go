package render

import (
	"fmt"
	"io"
	"time"

	"github.com/gpuform/gpuform/engine"
	"github.com/gpuform/gpuform/internal/textsafe"
)

// PerChangeMax is the most changes an apply may have for ApplyProgress to
// write a line per change without Verbose: what fits on a screen.
const PerChangeMax = 50

// SummaryEvery is how often, without a terminal, ApplyProgress writes a
// summary line of a larger apply (it also writes one at every tenth of the
// changes done).
const SummaryEvery = 10 * time.Second

// ApplyProgress shows an apply's progress; its Event is an
// engine.ApplyOptions.Progress. An apply of at most PerChangeMax changes,
// or any with Verbose (-v), gets a line as each change starts and ends, the
// Terraform way. On a terminal (TTY) a status line (done, failed,
// remaining, rate, time left) follows and is redrawn in place at every
// event; without one, a larger apply gets that status as a line every
// SummaryEvery and at every tenth of its changes, never a line per change.
type ApplyProgress struct {
	W   io.Writer
	TTY bool
	// Verbose writes the per-change lines however many changes there are.
	Verbose bool
	// Now is the clock; time.Now when nil.
	Now func() time.Time

	start, lastLine time.Time
	lastTenth       int
	failed, skipped int
}

// Event writes what one progress event changes.
func (p *ApplyProgress) Event(ev engine.Event) {
	now := time.Now
	if p.Now != nil {
		now = p.Now
	}
	t := now()
	if p.start.IsZero() {
		p.start, p.lastLine = t, t
	}
	if ev.Kind == engine.EventDone && ev.Result != nil {
		switch ev.Result.Outcome {
		case engine.OutcomeFailed:
			p.failed++
		case engine.OutcomeSkipped:
			p.skipped++
		}
	}
	perChange := p.Verbose || ev.Total <= PerChangeMax
	p.Clear()
	if perChange {
		changeLine(p.W, ev)
	}
	switch {
	case p.TTY:
		textsafe.Fprintf(p.W, "  [%s]", p.status(ev, t))
	case !perChange && ev.Kind == engine.EventDone:
		tenth := ev.Done * 10 / max(ev.Total, 1)
		if tenth > p.lastTenth || t.Sub(p.lastLine) >= SummaryEvery || ev.Done == ev.Total {
			textsafe.Fprintf(p.W, "Progress: %s\n", p.status(ev, t))
			p.lastTenth, p.lastLine = tenth, t
		}
	}
}

// changeLine is the per-change line of an event.
func changeLine(w io.Writer, ev engine.Event) {
	c := ev.Change
	v := applyVerbs(c.Action)
	switch ev.Kind {
	case engine.EventStart:
		textsafe.Fprintf(w, "%s: %s %s...\n", c.Address, v[0], c.Key)
	case engine.EventDone:
		r := ev.Result
		switch r.Outcome {
		case engine.OutcomeApplied:
			textsafe.Fprintf(w, "%s: %s after %s [%s]\n", c.Address, v[1], applySeconds(r.Elapsed), c.Key)
		case engine.OutcomeFailed:
			textsafe.Fprintf(w, "%s: Failed to %s %s after %s\n", c.Address, v[2], c.Key, applySeconds(r.Elapsed))
		case engine.OutcomeSkipped:
			textsafe.Fprintf(w, "%s: Skipped %s: %v\n", c.Address, c.Key, r.Err)
		}
	}
}

// status is "120/10000 done, 2 failed, 9880 remaining, 45/s, about 3m40s
// left" (skipped changes counted when there are some; "in 12s" once all
// are done).
func (p *ApplyProgress) status(ev engine.Event, now time.Time) string {
	s := fmt.Sprintf("%d/%d done, %d failed", ev.Done, ev.Total, p.failed)
	if p.skipped > 0 {
		s += fmt.Sprintf(", %d skipped", p.skipped)
	}
	left := ev.Total - ev.Done
	elapsed := now.Sub(p.start)
	if left == 0 {
		return s + ", finished in " + elapsed.Round(100*time.Millisecond).String()
	}
	s += fmt.Sprintf(", %d remaining", left)
	if ev.Done == 0 || elapsed <= 0 {
		return s
	}
	rate := float64(ev.Done) / elapsed.Seconds()
	eta := time.Duration(float64(left) / rate * float64(time.Second)).Round(time.Second)
	if rate >= 10 {
		return s + fmt.Sprintf(", %.0f/s, about %s left", rate, eta)
	}
	return s + fmt.Sprintf(", %.1f/s, about %s left", rate, eta)
}

// Clear erases the terminal's status line.
func (p *ApplyProgress) Clear() {
	if p.TTY {
		textsafe.Fprint(p.W, textsafe.Raw("\r\x1b[K"))
	}
}
