//go:build linux && cgo

package nvml

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	agentv1 "github.com/gpuform/gpuform/api/agent/v1"
	"github.com/gpuform/gpuform/engine/mig"
)

// maxStateLen bounds a "failed: <reason>" state: one line, at most this many
// bytes.
const maxStateLen = 200

// maxInventoryLen bounds the published inventory; gpuform ignores larger
// ones (agentv1.ParseInventory accepts up to agentv1.MaxInventoryBytes).
const maxInventoryLen = 60 << 10

// AgentOptions tune RunAgent.
type AgentOptions struct {
	// Node names the node, for messages.
	Node string
	// AllowBusy lets the agent change GPUs that run processes; without it
	// a layout that would change a busy GPU fails with "failed: GPUs busy:
	// ..." and is retried later.
	AllowBusy bool
	// Catalog resolves GPUs and profiles; nil means mig.Default().
	Catalog *mig.Catalog
	// Resync is how often the inventory is read again (processes come and
	// go) and published when it changed; zero means one minute.
	Resync time.Duration
	// Backoff and MaxBackoff bound the wait before reconnecting after an
	// API error: it starts at Backoff and doubles up to MaxBackoff, with
	// jitter. Zero means 1s and 30s.
	Backoff, MaxBackoff time.Duration
	// Retry and MaxRetry bound the wait before applying again a layout that
	// failed or needs a reboot: it starts at Retry and doubles up to
	// MaxRetry. Zero means 30s and 10m.
	Retry, MaxRetry time.Duration
	// Logf receives one line per event worth logging; nil discards them.
	Logf func(format string, args ...any)
}

// agent is the state of RunAgent.
type agent struct {
	s      *Session
	client agentv1.NodeClient
	opts   AgentOptions
	cat    *mig.Catalog

	// node is the node as last seen; nil before the first read or after a
	// deletion.
	node *agentv1.NodeInfo
	// inventory is the inventory JSON to publish; empty until read.
	inventory string
	// state is the agentv1.AnnotMIGState value to publish; empty when the node asks
	// for no layout.
	state string
	// applied is the agentv1.AnnotMIGLayout value last applied successfully.
	applied string
	// attempted is the agentv1.AnnotMIGLayout value last applied without success;
	// it is applied again at retryAt, or never when retryAt is zero.
	attempted string
	retryAt   time.Time
	failures  int
	// published is what the last successful Apply wrote.
	published map[string]string
}

// RunAgent runs the gpuform node agent until ctx is cancelled: it publishes
// the node's GPU inventory in annotation agentv1.AnnotInventory at start, after
// every MIG change and whenever it changed (read every Resync), and applies
// the MIG layout of annotation agentv1.AnnotMIGLayout when it differs from the last
// one applied successfully, reporting in agentv1.AnnotMIGState "pending" while it
// works, then "success", "reboot-required" or "failed: <reason>". A layout
// that failed or needs a reboot is applied again with a growing delay; the
// same layout seen again after a success does nothing. Watch and API
// errors are retried with backoff.
//
// It returns nil when ctx is cancelled (after publishing the outcome of an
// apply in progress), and an *UnavailableError at once when NVML cannot be
// initialised.
func RunAgent(ctx context.Context, lib nvml.Interface, client agentv1.NodeClient, opts AgentOptions) error {
	s, err := Open(lib)
	if err != nil {
		return err
	}
	defer s.Close()
	if opts.Resync <= 0 {
		opts.Resync = time.Minute
	}
	if opts.Backoff <= 0 {
		opts.Backoff = time.Second
	}
	if opts.MaxBackoff < opts.Backoff {
		opts.MaxBackoff = max(30*time.Second, opts.Backoff)
	}
	if opts.Retry <= 0 {
		opts.Retry = 30 * time.Second
	}
	if opts.MaxRetry < opts.Retry {
		opts.MaxRetry = max(10*time.Minute, opts.Retry)
	}
	a := &agent{s: s, client: client, opts: opts, cat: catalog(opts.Catalog)}
	a.readInventory()
	a.logf("agent started (allow busy GPUs: %v)", opts.AllowBusy)
	backoff := opts.Backoff
	for ctx.Err() == nil {
		start := time.Now()
		err := a.session(ctx)
		if ctx.Err() != nil {
			break
		}
		if time.Since(start) > 30*time.Second {
			// The watch ran for a while: this is a new problem.
			backoff = opts.Backoff
		}
		if err == nil {
			continue
		}
		a.logf("%v; reconnecting in %s", err, backoff.Round(time.Millisecond))
		if !sleep(ctx, jitter(backoff)) {
			break
		}
		backoff = min(2*backoff, opts.MaxBackoff)
	}
	a.logf("agent stopped")
	return nil
}

// session reads the node, then follows its watch until the watch ends. It
// returns nil when the server closed the watch, and an error otherwise.
func (a *agent) session(ctx context.Context) error {
	start := time.Now()
	n, err := a.client.Get(ctx)
	if err != nil {
		return fmt.Errorf("read node %s: %w", a.opts.Node, err)
	}
	a.observe(ctx, n)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events, err := a.client.Watch(wctx, n.ResourceVersion)
	if err != nil {
		return fmt.Errorf("watch node %s: %w", a.opts.Node, err)
	}
	resync := time.NewTicker(a.opts.Resync)
	defer resync.Stop()
	for {
		var retry <-chan time.Time
		if a.attempted != "" && !a.retryAt.IsZero() {
			retry = time.After(time.Until(a.retryAt))
		}
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-events:
			switch {
			case !ok:
				if time.Since(start) < time.Second {
					// A watch the server closes at once is an error in
					// disguise: back off rather than spin.
					return fmt.Errorf("watch node %s: the server closed the watch at once", a.opts.Node)
				}
				return nil
			case ev.Err != nil:
				return fmt.Errorf("watch node %s: %w", a.opts.Node, ev.Err)
			case ev.Deleted:
				a.logf("node deleted; waiting for it to come back")
				a.node, a.published = nil, nil
			case ev.Node != nil:
				a.observe(ctx, ev.Node)
			}
		case <-resync.C:
			a.readInventory()
			a.reconcile(ctx)
		case <-retry:
			a.reconcile(ctx)
		}
	}
}

// observe takes a new view of the node and acts on it.
func (a *agent) observe(ctx context.Context, n *agentv1.NodeInfo) {
	a.node = n
	a.reconcile(ctx)
}

// reconcile applies the node's layout when it must, and publishes what the
// node does not show yet.
func (a *agent) reconcile(ctx context.Context) {
	if a.node == nil {
		return
	}
	want := a.node.Annotations[agentv1.AnnotMIGLayout]
	switch {
	case want == "":
		if a.state != "" {
			a.logf("the node asks for no MIG layout any more; leaving the GPUs as they are")
		}
		a.state, a.applied, a.attempted, a.retryAt, a.failures = "", "", "", time.Time{}, 0
	case want == a.applied:
	case want == a.attempted && (a.retryAt.IsZero() || time.Now().Before(a.retryAt)):
	default:
		a.apply(ctx, want)
		return
	}
	a.publish(ctx)
}

// apply applies layout annotation want and publishes the outcome.
func (a *agent) apply(ctx context.Context, want string) {
	retrying := want == a.attempted
	if !retrying {
		a.failures = 0
	}
	a.attempted, a.retryAt = want, time.Time{}
	layout, permanent, err := a.check(want)
	if err != nil {
		a.logf("MIG layout %s refused: %v", layoutName(want), err)
		a.state = failedState(err.Error())
		if !permanent {
			a.scheduleRetry()
		}
		// A permanent failure is not retried: the same annotation would
		// fail the same way.
		a.publish(ctx)
		return
	}
	if !retrying {
		a.logf("applying MIG layout %s", layoutName(want))
		a.state = agentv1.StatePending
		a.publish(ctx)
	}
	res, err := a.s.Apply(a.cat, layout, ApplyOptions{AllowBusy: a.opts.AllowBusy})
	var busy *BusyError
	switch {
	case errors.As(err, &busy):
		a.state = failedState("GPUs busy: " + busyReason(busy))
		a.logf("MIG layout %s not applied: %v", layoutName(want), err)
	case err != nil:
		a.state = failedState(err.Error())
		a.logf("MIG layout %s failed: %v", layoutName(want), err)
	case res.RebootRequired:
		a.state = agentv1.StateRebootRequired
		a.logf("MIG layout %s needs a reboot: the MIG mode change is pending until the GPUs are reset", layoutName(want))
	default:
		a.state = agentv1.StateSuccess
		a.applied, a.attempted, a.failures = want, "", 0
		a.logf("MIG layout %s applied: %d GPU instances created, %d destroyed, %d MIG mode changes",
			layoutName(want), res.GPUInstancesCreated, res.GPUInstancesDestroyed, res.MIGModeChanges)
	}
	if a.state != agentv1.StateSuccess {
		a.scheduleRetry()
	}
	a.readInventory()
	if ctx.Err() != nil {
		// Stopping: still say how the apply ended.
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		ctx = pctx
	}
	a.publish(ctx)
}

// scheduleRetry sets when a layout that did not apply is tried again: after
// Retry, doubling with each failure up to MaxRetry.
func (a *agent) scheduleRetry() {
	delay := a.opts.Retry
	for i := 0; i < a.failures && delay < a.opts.MaxRetry; i++ {
		delay *= 2
	}
	a.failures++
	a.retryAt = time.Now().Add(min(delay, a.opts.MaxRetry))
}

// check decodes layout annotation want and checks it against the GPUs;
// permanent says the same annotation would always fail.
func (a *agent) check(want string) (_ agentv1.Layout, permanent bool, _ error) {
	l, err := agentv1.ParseMIGLayout(want)
	if err != nil {
		return nil, true, fmt.Errorf("invalid %s annotation: %w", agentv1.AnnotMIGLayout, err)
	}
	inv, err := a.s.Read(a.cat)
	if err != nil {
		return nil, false, fmt.Errorf("read the GPUs: %w", err)
	}
	if len(inv.GPUs) == 0 {
		return nil, true, errors.New("NVML reports no GPU on this node")
	}
	targets, err := l.Config.Resolve(len(inv.GPUs))
	if err != nil {
		return nil, true, err
	}
	if l.GPU != "" {
		g, ok := a.cat.Lookup(l.GPU)
		if !ok {
			return nil, true, fmt.Errorf("layout %s is for GPU model %q, which this agent's catalog does not know", l.Name, l.GPU)
		}
		for i := range len(inv.GPUs) {
			if _, ok := targets[i]; !ok {
				continue
			}
			if gpu := inv.GPU(i); gpu == nil || gpu.Model != g.Key {
				name := g.Key
				if gpu != nil {
					name = gpu.Name
				}
				return nil, true, fmt.Errorf("layout %s is for %s but GPU %d is %s", l.Name, g.Key, i, name)
			}
		}
	}
	return l.Config, false, nil
}

// readInventory reads the GPUs into a.inventory; on error it keeps the
// previous one.
func (a *agent) readInventory() {
	inv, err := a.s.Read(a.cat)
	if err != nil {
		a.logf("read the GPU inventory: %v", err)
		return
	}
	s, err := inventoryJSON(inv)
	if err != nil {
		a.logf("encode the GPU inventory: %v", err)
		return
	}
	a.inventory = s
}

// publish applies the agent's annotations unless the node shows them
// already and they were applied last time.
func (a *agent) publish(ctx context.Context) {
	if a.node == nil {
		return
	}
	want := map[string]string{}
	if a.inventory != "" {
		want[agentv1.AnnotInventory] = a.inventory
	}
	if a.state != "" {
		want[agentv1.AnnotMIGState] = a.state
	}
	shown := a.published != nil && maps.Equal(want, a.published)
	for k, v := range want {
		shown = shown && a.node.Annotations[k] == v
	}
	if shown {
		return
	}
	if err := a.client.Apply(ctx, want); err != nil {
		if ctx.Err() == nil {
			a.logf("publish %s: %v (retrying on the next change or resync)", strings.Join(slices.Sorted(maps.Keys(want)), ", "), err)
		}
		a.published = nil
		return
	}
	a.published = want
}

// inventoryJSON encodes inv compactly, dropping process details when it
// would be too large to publish.
func inventoryJSON(inv *agentv1.Inventory) (string, error) {
	b, err := json.Marshal(inv)
	if err != nil {
		return "", err
	}
	if len(b) <= maxInventoryLen {
		return string(b), nil
	}
	trimmed := *inv
	trimmed.GPUs = append([]agentv1.GPU(nil), inv.GPUs...)
	for i := range trimmed.GPUs {
		if ps := trimmed.GPUs[i].Processes; len(ps) > 4 {
			trimmed.GPUs[i].Processes = ps[:4]
		}
	}
	trimmed.Warnings = append(append([]string(nil), inv.Warnings...), "process lists truncated to 4 per GPU to fit the annotation")
	if b, err = json.Marshal(&trimmed); err != nil {
		return "", err
	}
	if len(b) > maxInventoryLen {
		return "", fmt.Errorf("the inventory is %d bytes, over the limit of %d", len(b), maxInventoryLen)
	}
	return string(b), nil
}

// failedState is "failed: <reason>" on one line of at most maxStateLen
// bytes.
func failedState(reason string) string {
	s := "failed: " + oneLine(reason)
	if len(s) <= maxStateLen {
		return s
	}
	cut := maxStateLen - len("...")
	for cut > 0 && !validCut(s, cut) {
		cut--
	}
	return s[:cut] + "..."
}

// oneLine joins the lines of s with "; " and collapses white space.
func oneLine(s string) string {
	lines := strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' })
	for i, l := range lines {
		lines[i] = strings.Join(strings.Fields(l), " ")
	}
	return strings.Join(slices.DeleteFunc(lines, func(l string) bool { return l == "" }), "; ")
}

// validCut reports whether s may be cut before byte i without splitting a
// UTF-8 sequence.
func validCut(s string, i int) bool { return s[i]&0xC0 != 0x80 }

// busyReason names the busy GPUs and their processes.
func busyReason(e *BusyError) string {
	var parts []string
	for _, g := range e.GPUs {
		if g.Unlisted != "" {
			parts = append(parts, fmt.Sprintf("GPU %d (processes not listed: %s)", g.Index, g.Unlisted))
			continue
		}
		pids := make([]string, len(g.PIDs))
		for i, p := range g.PIDs {
			pids[i] = fmt.Sprint(p)
		}
		parts = append(parts, fmt.Sprintf("GPU %d pids %s", g.Index, strings.Join(pids, ",")))
	}
	return strings.Join(parts, "; ")
}

// layoutName returns the layout's name for messages.
func layoutName(annotation string) string {
	var l struct {
		Name string `json:"name"`
	}
	if json.Unmarshal([]byte(annotation), &l) != nil || l.Name == "" {
		return "(unnamed)"
	}
	return fmt.Sprintf("%q", l.Name)
}

func (a *agent) logf(format string, args ...any) {
	if a.opts.Logf == nil {
		return
	}
	if a.opts.Node != "" {
		format = "node " + a.opts.Node + ": " + format
	}
	a.opts.Logf("%s", oneLine(fmt.Sprintf(format, args...)))
}

// sleep waits d or until ctx is done; it reports whether d elapsed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// jitter returns d plus up to 20% more.
func jitter(d time.Duration) time.Duration {
	return d + time.Duration(rand.Int64N(int64(d)/5+1))
}
