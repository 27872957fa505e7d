package usage

import (
	"errors"
	"fmt"
	"time"
)

// DefaultWindow is the window of gpuform usage without --window or --from.
const DefaultWindow = "24h"

// ParseWindow is the window gpuform usage's flags ask for: --from and --to
// (RFC 3339 times, --to defaulting to now), else the last --window (a Go
// duration such as 168h, DefaultWindow when empty) up to now, truncated to
// whole steps.
func ParseWindow(window, from, to string, step time.Duration, now time.Time) (Window, error) {
	end := now.Truncate(step)
	if step <= 0 {
		return Window{}, fmt.Errorf("--step must be positive, got %s", step)
	}
	if to != "" {
		t, err := time.Parse(time.RFC3339, to)
		if err != nil {
			return Window{}, fmt.Errorf("--to %q: want an RFC 3339 time such as 2026-11-30T00:00:00Z", to)
		}
		end = t
	}
	if from != "" {
		if window != "" {
			return Window{}, errors.New("--from and --window both say where the window starts: give one")
		}
		t, err := time.Parse(time.RFC3339, from)
		if err != nil {
			return Window{}, fmt.Errorf("--from %q: want an RFC 3339 time such as 2026-11-01T00:00:00Z", from)
		}
		return NewWindow(t, end, step)
	}
	if window == "" {
		window = DefaultWindow
	}
	d, err := time.ParseDuration(window)
	if err != nil || d <= 0 {
		return Window{}, fmt.Errorf("--window %q: want a positive duration such as 24h or 720h", window)
	}
	return NewWindow(end.Add(-d), end, step)
}
