package engine

import (
	"testing"
	"time"
)

// TestProofWaitsWhileOthersProgress: a namespace's proof tries again as
// long as some namespace was proven within the timeout (the quota
// controller working through a large apply's quotas one after another),
// however long it has itself waited; it gives up once nothing was proven
// for the timeout.
func TestProofWaitsWhileOthersProgress(t *testing.T) {
	now := time.Now()
	for _, tt := range []struct {
		name            string
		began, progress time.Duration // before now
		want            bool
	}{
		{"just began", 0, time.Hour, true},
		{"waited long, another namespace proven just now", time.Minute, time.Second, true},
		{"waited long, nothing proven for the timeout", time.Minute, 40 * time.Second, false},
		{"waited the timeout, from the apply's start", 35 * time.Second, 35 * time.Second, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := &prover{timeout: 30 * time.Second, progress: now.Add(-tt.progress)}
			pr := &proof{start: now.Add(-tt.began), delay: 2 * time.Second}
			if got := p.waitMore(pr); got != tt.want {
				t.Errorf("waitMore = %v, want %v", got, tt.want)
			}
		})
	}
}
